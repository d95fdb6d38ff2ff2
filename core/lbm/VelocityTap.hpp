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

// On the GPU the recorded velocities are stored and read with an L2::evict_last policy (sm_80 and
// later): the step that records them streams its populations through L2 and would otherwise evict
// them before the move reads them, and tracers, moving a fraction of a node a step, mark nearly the
// same nodes step after step, so their lines are rewritten in L2 rather than fetched from memory
// (a move of 10^5 tracers on an H100: 0.047 -> 0.032 ms, docs/PERFORMANCE.md). No part of L2 is set
// aside for them (cudaLimitPersistingL2CacheSize): measured, any set-aside slows the step itself.
// The store clobbers no memory for the compiler: no kernel that records reads the tap, and the
// step's population loads and stores stay free to move around it.
OCTO_HD OCTO_INLINE void storeTapped(TappedVelocity* address, const TappedVelocity& v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "{\n\t.reg .b64 policy;\n\t"
      "createpolicy.fractional.L2::evict_last.b64 policy, 1.0;\n\t"
      "st.global.L2::cache_hint.v4.f32 [%0], {%1, %2, %3, %4}, policy;\n\t}"
      :
      : "l"(address), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.stamp));
#else
  *address = v;
#endif
}
// The load of a recorded velocity (kernels that read the tap do not write it: the asm is not
// volatile and may move among the loads).
OCTO_HD OCTO_INLINE TappedVelocity loadTapped(const TappedVelocity* address) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  TappedVelocity v;
  asm("{\n\t.reg .b64 policy;\n\t"
      "createpolicy.fractional.L2::evict_last.b64 policy, 1.0;\n\t"
      "ld.global.L2::cache_hint.v4.f32 {%0, %1, %2, %3}, [%4], policy;\n\t}"
      : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.stamp)
      : "l"(address));
  return v;
#else
  return *address;
#endif
}

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
    storeTapped(velocity + node, TappedVelocity{u.x, u.y, u.z, stamp});
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
