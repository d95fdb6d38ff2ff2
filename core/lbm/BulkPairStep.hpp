#pragma once
// FP16 bulk steps two nodes a thread: nodes x and x + 1 of a row, x even.
//
// One thread a node loads 2-byte populations: each value takes a 32-bit register while its load is
// in flight and each warp load brings 64 bytes. Here a thread loads a pair's population q as one
// aligned 32-bit word where the two values lie side by side, and converts and stores them two at a
// time; the neighbourhood is worked out once for both. The collision is the same function as
// everywhere (Collision.hpp), called once a node, so a pair step gives the bits of two node steps
// (tests/lbm/NodePairsTest.cpp, CPU and CUDA).
//
// An even step reads and writes a node's own slots: whole words. An odd step reads population q
// from x - c_q and writes it to x + c_q: for c_q,x = 0 that is a whole word of another row; for
// c_q,x = +-1 one value lies in the pair's word of that row and the other half a word off, read
// and written alone (across a periodic face where Neighbourhood wraps). Stores of the two values
// are whole words only where both nodes are bulk nodes; a boundary or obstacle node's value is
// never written here (the boundary kernel writes those).
//
// While one node collides the other's values wait (PairHolding): one a register, two a register,
// or, on even steps, staged: the pair's words go straight from memory into the thread's own column
// of shared memory (cp.async, no register held while they are in flight, no barrier: no other
// thread reads the column), A's results go back into the low halves while B's arrivals wait in
// the high halves, and a pair needs one node's registers.
//
// Measured on an H200 and an H100 (docs/PERFORMANCE.md): pairs in registers pay on even steps of
// D3Q19 BGK and on both steps of D3Q19 MRT, where the odd step's half-word accesses cost less than
// the collision they run beside; staged pairs on even steps of D3Q27 BGK, which pairs in registers
// spill; on odd steps of D3Q19 BGK and of D3Q27, with TRT, D3Q27 MRT and in the forced form they
// lose (UniformEngine.hpp, pairsPay).
#include <cstdint>
#include <cstring>

#include "exec/Backend.hpp"
#include "lbm/StreamCollide.hpp"

namespace octoflow::lbm {

// Whether the bulk nodes of `box` can be updated in pairs: words are aligned where every row
// and the box start at an even x.
inline bool pairsFit(const Extent& extent, const NodeBox& box) {
  return extent.nx % 2 == 0 && box.lo[0] % 2 == 0;
}

// The box of pairs a pair step runs over: pair p of a row holds nodes 2p and 2p + 1.
inline NodeBox pairBoxOf(const NodeBox& box) {
  NodeBox pairs = box;
  pairs.lo[0] = box.lo[0] / 2;
  pairs.size.nx = (box.size.nx + 1) / 2;
  return pairs;
}

namespace pairs {

// The FP16 values of nodes n (low half) and n + 1 (high half), n even: on a GPU one load as
// loadPopulation makes it.
OCTO_HD OCTO_INLINE std::uint32_t loadWord(const std::uint16_t* address) {
#if defined(__CUDA_ARCH__)
  return loadPopulation(reinterpret_cast<const std::uint32_t*>(address));
#else
  std::uint32_t word;
  std::memcpy(&word, address, sizeof word);
  return word;
#endif
}
OCTO_HD OCTO_INLINE void storeWord(std::uint16_t* address, std::uint32_t word) {
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<std::uint32_t*>(address) = word;
#else
  std::memcpy(address, &word, sizeof word);
#endif
}
OCTO_HD OCTO_INLINE float lowValue(std::uint32_t word) {
  return Fp16Storage::loadScaled(static_cast<std::uint16_t>(word & 0xffffu));
}
OCTO_HD OCTO_INLINE float highValue(std::uint32_t word) {
  return Fp16Storage::loadScaled(static_cast<std::uint16_t>(word >> 16));
}
// Both values rounded as Fp16Storage::storeScaled rounds each (to nearest even); on a GPU in one
// conversion instruction.
OCTO_HD OCTO_INLINE std::uint32_t packWord(float low, float high) {
#if defined(__CUDA_ARCH__)
  const __half2 both = __floats2half2_rn(low, high);
  return static_cast<std::uint32_t>(__half_as_ushort(__low2half(both))) |
         static_cast<std::uint32_t>(__half_as_ushort(__high2half(both))) << 16;
#else
  return static_cast<std::uint32_t>(Fp16Storage::storeScaled(low)) |
         static_cast<std::uint32_t>(Fp16Storage::storeScaled(high)) << 16;
#endif
}

// The low halves of two words (first's low half low), and their high halves.
OCTO_HD OCTO_INLINE std::uint32_t lowHalves(std::uint32_t first, std::uint32_t second) {
  return (first & 0xffffu) | second << 16;
}
OCTO_HD OCTO_INLINE std::uint32_t highHalves(std::uint32_t first, std::uint32_t second) {
  return first >> 16 | (second & 0xffff0000u);
}
// `word` with its low half, or its high half, replaced by `value` rounded as storeScaled rounds.
OCTO_HD OCTO_INLINE std::uint32_t withLowValue(std::uint32_t word, float value) {
  return (word & 0xffff0000u) | Fp16Storage::storeScaled(value);
}
OCTO_HD OCTO_INLINE std::uint32_t withHighValue(std::uint32_t word, float value) {
  return (word & 0xffffu) | static_cast<std::uint32_t>(Fp16Storage::storeScaled(value)) << 16;
}

// A thread's Q words, staged: on a GPU its own column of a block's shared memory (the words of
// neighbouring threads in neighbouring banks), filled by asynchronous copies from global memory
// that hold no register while in flight; on the CPU an array.
template <int Q>
class StagedWords {
public:
#if defined(__CUDA_ARCH__)
  __device__ OCTO_INLINE StagedWords() {
    __shared__ std::uint32_t columns[Q][exec::kThreadsPerBlock3];
    column_ = &columns[0][threadIdx.x + blockDim.x * threadIdx.y];
  }
  // Starts copying the 32-bit word at `address` (4-byte aligned) into word q.
  __device__ OCTO_INLINE void stage(int q, const std::uint16_t* address) {
#if __CUDA_ARCH__ >= 800
    const auto into = static_cast<unsigned>(__cvta_generic_to_shared(column_ + q * exec::kThreadsPerBlock3));
    asm volatile("cp.async.ca.shared.global.L2::256B [%0], [%1], 4;" ::"r"(into), "l"(address) : "memory");
#else
    column_[q * exec::kThreadsPerBlock3] = loadWord(address);
#endif
  }
  // Returns once every staged word has arrived.
  __device__ OCTO_INLINE void wait() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_all;" ::: "memory");
#endif
  }
  __device__ OCTO_INLINE std::uint32_t operator[](int q) const { return column_[q * exec::kThreadsPerBlock3]; }
  __device__ OCTO_INLINE void set(int q, std::uint32_t word) { column_[q * exec::kThreadsPerBlock3] = word; }

private:
  std::uint32_t* column_;
#else
  void stage(int q, const std::uint16_t* address) { words_[q] = loadWord(address); }
  void wait() {}
  std::uint32_t operator[](int q) const { return words_[q]; }
  void set(int q, std::uint32_t word) { words_[q] = word; }

private:
  std::uint32_t words_[Q];
#endif
};

}  // namespace pairs

// How a pair's values wait while the other node of the pair collides (see above).
enum class PairHolding {
  Registers,  // one a register
  Packed,     // two a register
  Staged,     // in the thread's column of shared memory; even steps only
};

// One step of parity Odd of the bulk nodes of a box, two a call: (p, j, k) is pair p of the row,
// nodes A = (2p, j, k) and B = (2p + 1, j, k); `boxEnd` is the first x past the box (a box of odd
// width ends on a pair's A). The lean kernel form only: no body force, no CSM (pairsPay).
// PairHolding::Packed: while one node collides, the other's values of the pairs (q, q + 1) wait
// two a register (B's arrivals, then A's results), at the cost of 3 (Q - 1) / 2 byte permutes
// more a pair (the conversions are as many). Held one a register, they and MRT's own values passed
// the register budget of three resident blocks (D3Q19 MRT spilled 36-44 bytes at 80 registers;
// packed it spills none and runs 6.3-6.6 % faster on an H200); BGK, which does not spill, loses
// 1.2 % with them (UniformEngine.hpp, pairHolding).
template <class L, class Collision, bool Odd, PairHolding Holding>
struct BulkPairStep {
  static_assert(!(Odd && Holding == PairHolding::Staged), "staged pairs run even steps only");
  GridView grid;
  Collision collision;
  SlotBases<L, std::uint16_t> slots;
  VelocityTap tap;  // (see BulkStep)
  Index boxEnd;

  OCTO_HD void operator()(Index p, Index j, Index k) const {
    const Index i = 2 * p;
    if constexpr (Holding == PairHolding::Staged) {
      stagedEvenStep(i, j, k);
      return;
    }
    const Neighbourhood n(grid.extent, i, j, k);  // of A; B's x - 1 is A's x, its x + 1 is `beyondB`
    const NodeIndex a = n.node(), x = static_cast<NodeIndex>(i);
    const NodeIndex beyondB = x + 2 == static_cast<NodeIndex>(grid.extent.nx) ? 0u : x + 2;
    const bool tapped = tap.wants(a);  // A and B share a 32-byte sector of the tap (VelocityTap::wants)

    std::uint32_t word[L::Q];  // population q arriving at A (low half) and at B (high half)
    OCTO_UNROLL
    for (int q = 0; q < L::Q; ++q) {
      if (!Odd) {
        word[q] = pairs::loadWord(slots[q] + a);
        continue;
      }
      const std::uint16_t* row = slots[L::opposite(q)] + (n.offset[1][1 - L::c(q, 1)] + n.offset[2][1 - L::c(q, 2)]);
      // For c_x != 0 one half of `here` is discarded: another pair may be writing it in this step
      // (on the CPU too, where the word is read with memcpy; its value is never used).
      const std::uint32_t here = pairs::loadWord(row + x);
      if (L::c(q, 0) == 0)
        word[q] = here;
      else if (L::c(q, 0) > 0)  // from x - 1: B's is A's value here, A's the half before
        word[q] = static_cast<std::uint32_t>(loadPopulation(row + n.offset[0][0])) | here << 16;
      else  // from x + 1: A's is B's value here, B's the half after
        word[q] = here >> 16 | static_cast<std::uint32_t>(loadPopulation(row + beyondB)) << 16;
    }

    // The populations are loaded before the nodes' kinds are known (see BulkStep).
    const bool bulkA = grid.kindOf(a) == kBulkNode;
    const bool bulkB = i + 1 < boxEnd && grid.kindOf(a + 1) == kBulkNode;
    if (!bulkA && !bulkB) return;
    [[maybe_unused]] float gA[L::Q], gB[L::Q];  // one value a register (PairHolding::Registers)
    if constexpr (Holding == PairHolding::Packed) {
      collidePacked(word, a, bulkA && tapped, bulkB && tapped);
    } else {
      OCTO_UNROLL
      for (int q = 0; q < L::Q; ++q) {
        gA[q] = pairs::lowValue(word[q]);
        gB[q] = pairs::highValue(word[q]);
      }
      collideNode(gA, a, bulkA && tapped);
      collideNode(gB, a + 1, bulkB && tapped);
    }

    OCTO_UNROLL
    for (int q = 0; q < L::Q; ++q) {
      // Packed as it is stored (not in a pass of its own: TRT pairs ran 2.8 % slower that way).
      std::uint32_t values;
      if constexpr (Holding == PairHolding::Packed)
        values = word[q];
      else
        values = pairs::packWord(gA[q], gB[q]);
      if (!Odd) {
        storePair(slots[L::opposite(q)] + a, values, bulkA, bulkB);
        continue;
      }
      std::uint16_t* row = slots[q] + (n.offset[1][1 + L::c(q, 1)] + n.offset[2][1 + L::c(q, 2)]);
      if (L::c(q, 0) == 0) {
        storePair(row + x, values, bulkA, bulkB);
        continue;
      }
      const bool forward = L::c(q, 0) > 0;  // to x + 1: A's to B's x; to x - 1: B's to A's x
      if (bulkA) row[forward ? x + 1 : n.offset[0][0]] = static_cast<std::uint16_t>(values);
      if (bulkB) row[forward ? beyondB : x] = static_cast<std::uint16_t>(values >> 16);
    }
  }

private:
  // An even step with the pair's words staged (PairHolding::Staged): A collides from the low
  // halves and its results replace them; B collides from the high halves and the words are stored
  // with A's results low and B's high.
  OCTO_HD OCTO_INLINE void stagedEvenStep(Index i, Index j, Index k) const {
    const NodeIndex a = static_cast<NodeIndex>(grid.extent.linear(i, j, k));
    pairs::StagedWords<L::Q> words;
    OCTO_UNROLL
    for (int q = 0; q < L::Q; ++q) words.stage(q, slots[q] + a);
    // The nodes' kinds and the tap are read while the words are in flight.
    const bool tapped = tap.wants(a);
    const bool bulkA = grid.kindOf(a) == kBulkNode;
    const bool bulkB = i + 1 < boxEnd && grid.kindOf(a + 1) == kBulkNode;
    words.wait();
    if (!bulkA && !bulkB) return;
    float g[L::Q];
    OCTO_UNROLL
    for (int q = 0; q < L::Q; ++q) g[q] = pairs::lowValue(words[q]);
    collideNode(g, a, bulkA && tapped);
    OCTO_UNROLL
    for (int q = 0; q < L::Q; ++q) words.set(q, pairs::withLowValue(words[q], g[q]));
    OCTO_UNROLL
    for (int q = 0; q < L::Q; ++q) g[q] = pairs::highValue(words[q]);
    collideNode(g, a + 1, bulkB && tapped);
    OCTO_UNROLL
    for (int q = 0; q < L::Q; ++q)
      storePair(slots[L::opposite(q)] + a, pairs::withHighValue(words[q], g[q]), bulkA, bulkB);
  }
  // A node's collision in FP16's stored units (and first its velocity for the tap, where
  // `recorded`). A node this step does not update collides too (its result is not stored): no
  // branch in the warp.
  OCTO_HD OCTO_INLINE void collideNode(float (&g)[L::Q], NodeIndex node, bool recorded) const {
    using Scale = Fp16Storage::Scale;
    if (recorded) {  // as bulkMoments computes it
      float rho;
      Vector3 u;
      moments<L, Scale>(g, grid.acceleration, rho, u);
      tap.record(node, u);
    }
    collision.template collide<L, false, Scale>(g, grid.acceleration);
  }
  // The two nodes' collisions with the values waiting two a register (HoldPacked): `word` holds the
  // pair's arrivals (A low, B high) and takes its results.
  OCTO_HD OCTO_INLINE void collidePacked(std::uint32_t (&word)[L::Q], NodeIndex a, bool recordedA,
                                         bool recordedB) const {
    constexpr int kPairs = (L::Q - 1) / 2;
    std::uint32_t held[kPairs];
    float g[L::Q];
    OCTO_UNROLL
    for (int q = 0; q < L::Q; ++q) g[q] = pairs::lowValue(word[q]);
    OCTO_UNROLL
    for (int p = 0; p < kPairs; ++p) held[p] = pairs::highHalves(word[2 * p + 1], word[2 * p + 2]);
    collideNode(g, a, recordedA);
    const float restA = g[0];
    g[0] = pairs::highValue(word[0]);
    OCTO_UNROLL
    for (int p = 0; p < kPairs; ++p) {
      const std::uint32_t arrivalsB = held[p];
      held[p] = pairs::packWord(g[2 * p + 1], g[2 * p + 2]);  // A's results
      g[2 * p + 1] = pairs::lowValue(arrivalsB);
      g[2 * p + 2] = pairs::highValue(arrivalsB);
    }
    collideNode(g, a + 1, recordedB);
    word[0] = pairs::packWord(restA, g[0]);
    OCTO_UNROLL
    for (int p = 0; p < kPairs; ++p) {
      const std::uint32_t resultsB = pairs::packWord(g[2 * p + 1], g[2 * p + 2]);
      word[2 * p + 1] = pairs::lowHalves(held[p], resultsB);
      word[2 * p + 2] = pairs::highHalves(held[p], resultsB);
    }
  }
  // A word at an even node index: whole where both of its nodes are updated here, else by halves.
  OCTO_HD OCTO_INLINE static void storePair(std::uint16_t* address, std::uint32_t values, bool bulkA, bool bulkB) {
    if (bulkA && bulkB) {
      pairs::storeWord(address, values);
      return;
    }
    if (bulkA) address[0] = static_cast<std::uint16_t>(values);
    if (bulkB) address[1] = static_cast<std::uint16_t>(values >> 16);
  }
};

}  // namespace octoflow::lbm
