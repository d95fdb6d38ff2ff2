#pragma once
// OCTO_HD marks functions compiled for host and device: the one physics source that both
// the OpenMP and the CUDA execution call (docs/ARCHITECTURE.md, "One physics source").
#if defined(__CUDACC__)
#define OCTO_HD __host__ __device__
#define OCTO_INLINE __forceinline__
#define OCTO_UNROLL _Pragma("unroll")
#else
#define OCTO_HD
#define OCTO_INLINE inline __attribute__((always_inline))
// Full unrolling over the velocity set turns the lattice tables into immediates.
#define OCTO_UNROLL _Pragma("GCC unroll 32")
#endif
