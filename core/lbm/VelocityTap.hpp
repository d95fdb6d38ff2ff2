#pragma once
// The velocity tap: a step records the velocity of the state it reads at the nodes a bit mask
// marks, so that tracers moved right after it (lbm/TracerFlow.hpp, TappedFlow) read 16 bytes a
// corner instead of every population there. The velocity is computed from the populations the
// step has gathered, by the function the macroscopic pass and FlowAtNodes use (moments), so a
// tapped velocity has the same bits as theirs.
#include <cstdint>

#include "common/Extent.hpp"
#include "lbm/Collision.hpp"

namespace octoflow::lbm {

// A node's recorded velocity and the stamp of the step that recorded it (a small integer as a
// float; 0 never is one), 16 bytes: one vector load or store, two nodes a 32-byte sector.
struct alignas(16) TappedVelocity {
  float x, y, z, stamp;
};

// Words of a tap mask over `nodes` nodes: a bit a node (node n: bit n % 32 of word n / 32).
OCTO_HD inline Index tapMaskWords(Index nodes) { return (nodes + 31) / 32; }

// What a step records: null `marked` (every step but a tapped one) records nothing.
struct VelocityTap {
  const std::uint32_t* marked = nullptr;
  TappedVelocity* velocity = nullptr;  // a value a node
  float stamp = 0.0f;

  // Node indices of one grid are 32-bit (lbm/StreamCollide.hpp, NodeIndex). A node is recorded
  // where it or the other node of its 32-byte sector (node ^ 1) is marked: the step then writes
  // whole sectors, which memory takes without first reading them.
  OCTO_HD OCTO_INLINE bool wants(std::uint32_t node) const {
    return marked && ((marked[node >> 5] >> (node & 30u)) & 3u);
  }
  OCTO_HD OCTO_INLINE void record(std::uint32_t node, const Vector3& u) const {
    velocity[node] = TappedVelocity{u.x, u.y, u.z, stamp};
  }
};

// Sets bits of a mask word; tracers moved on many threads mark neighbouring nodes at once.
OCTO_HD inline void setMaskBits(std::uint32_t* word, std::uint32_t bits) {
#if defined(__CUDA_ARCH__)
  atomicOr(word, bits);
#else
  __atomic_fetch_or(word, bits, __ATOMIC_RELAXED);
#endif
}

// Zeroes a mask word that other threads may zero too.
OCTO_HD inline void clearMaskWord(std::uint32_t* word) {
#if defined(__CUDA_ARCH__)
  *word = 0u;
#else
  __atomic_store_n(word, 0u, __ATOMIC_RELAXED);
#endif
}

// Clears a mask: one word a thread.
struct ClearMask {
  std::uint32_t* words;
  OCTO_HD void operator()(Index w) const { words[w] = 0u; }
};

}  // namespace octoflow::lbm
