#pragma once
// How populations are kept in memory: FP32, or FP16 with FP32 arithmetic (half the bytes per
// update). The FP16 form stores the deviation g = f - w scaled by 2^10, so that the small
// deviations of slow flows stay in FP16's normal range (>= 6.1e-5 / 1024 = 6e-8) while the
// largest ones (|g| < 0.5) stay far below its maximum. Conversions round to nearest even in
// g++ code (_Float16) and nvcc code (cuda_fp16) alike, so both executions store the same bits.
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "common/Macros.hpp"

#if defined(__CUDACC__)
#include <cuda_fp16.h>
#endif

namespace octoflow::lbm {

enum class StorageKind { Fp32, Fp16 };

// The units a kernel may hold populations in: g times 2^Log2. Scaling by a power of two commutes
// with rounding (short of overflow and of the subnormal range), so a collision that works on the
// scaled values (Collision.hpp, its Scale parameter) gives the bits of the unscaled one, scaled:
// the FP16 bulk kernels collide 1024 g as stored and skip a multiply on every load and store.
template <int Log2>
struct PopulationScale {
  static_assert(Log2 >= 0 && Log2 < 31, "a scale of 2^0 to 2^30");
  static constexpr float factor = static_cast<float>(1u << Log2);
  static constexpr float inverse = 1.0f / factor;
};
using Unscaled = PopulationScale<0>;

// load/store convert between the stored value and g; loadScaled/storeScaled between the stored
// value and g in the units Scale.
struct Fp32Storage {
  using Value = float;
  using Scale = Unscaled;
  static constexpr StorageKind kind = StorageKind::Fp32;
  OCTO_HD static float load(Value value) { return value; }
  OCTO_HD static Value store(float value) { return value; }
  OCTO_HD static float loadScaled(Value value) { return value; }
  OCTO_HD static Value storeScaled(float value) { return value; }
};

struct Fp16Storage {
  using Value = std::uint16_t;  // IEEE binary16 bits
  using Scale = PopulationScale<10>;
  static constexpr StorageKind kind = StorageKind::Fp16;
  OCTO_HD static float loadScaled(Value bits) {
#if defined(__CUDACC__)  // cuda_fp16's conversions are host and device functions
    return __half2float(__ushort_as_half(bits));
#else
    _Float16 half;
    std::memcpy(&half, &bits, sizeof bits);
    return static_cast<float>(half);
#endif
  }
  OCTO_HD static Value storeScaled(float value) {
#if defined(__CUDACC__)
    return __half_as_ushort(__float2half_rn(value));
#else
    const _Float16 half = static_cast<_Float16>(value);
    Value bits;
    std::memcpy(&bits, &half, sizeof bits);
    return bits;
#endif
  }
  OCTO_HD static float load(Value bits) { return loadScaled(bits) * Scale::inverse; }
  OCTO_HD static Value store(float value) { return storeScaled(value * Scale::factor); }
};

// Reads one stored population of a bulk update. On the GPU the load asks L2 to fetch the 256
// bytes around it from memory (ld.global.L2::256B, sm_80 and later): the warps next to this one
// read those bytes a moment later and find them in L2, which keeps more bytes in flight than the
// threads alone can when each load is only 2 or 4 bytes wide. The asm is neither volatile nor
// clobbers memory, so the compiler may move it freely: fine for the update kernels, where every
// stored value depends on all the loaded ones (density), so no store can precede a load; keep it
// out of code that stores before it loads, or loads one address twice.
#ifndef OCTOFLOW_L2_PREFETCH
#define OCTOFLOW_L2_PREFETCH 1
#endif
// A 32-bit unsigned Value reads two FP16 populations at once (lbm/BulkPairStep.hpp).
template <class Value>
OCTO_HD OCTO_INLINE Value loadPopulation(const Value* address) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 && OCTOFLOW_L2_PREFETCH
  if constexpr (sizeof(Value) == 2) {
    unsigned short bits;
    asm("ld.global.L2::256B.u16 %0, [%1];" : "=h"(bits) : "l"(address));
    return bits;
  } else if constexpr (std::is_same_v<Value, float>) {
    float value;
    asm("ld.global.L2::256B.f32 %0, [%1];" : "=f"(value) : "l"(address));
    return value;
  } else {
    static_assert(std::is_same_v<Value, std::uint32_t>, "populations are 2 or 4 bytes");
    std::uint32_t word;
    asm("ld.global.L2::256B.b32 %0, [%1];" : "=r"(word) : "l"(address));
    return word;
  }
#else
  return *address;
#endif
}

inline const char* storageName(StorageKind kind) { return kind == StorageKind::Fp16 ? "fp16" : "fp32"; }
inline int storageBytes(StorageKind kind) { return kind == StorageKind::Fp16 ? 2 : 4; }

// Calls f(Storage{}) with the storage type `kind` names.
template <class F>
decltype(auto) withStorage(StorageKind kind, F&& f) {
  if (kind == StorageKind::Fp16) return f(Fp16Storage{});
  return f(Fp32Storage{});
}

}  // namespace octoflow::lbm
