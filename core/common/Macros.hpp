#pragma once
// OCTO_HD marks functions compiled for host and device: the one physics source that both
// the OpenMP and the CUDA execution call (docs/ARCHITECTURE.md, "One physics source").
#if defined(__CUDACC__)
#define OCTO_HD __host__ __device__
#define OCTO_INLINE __forceinline__
#define OCTO_UNROLL _Pragma("unroll")
#define OCTO_NO_UNROLL _Pragma("unroll 1")
#define OCTO_NOINLINE __noinline__
#else
#define OCTO_HD
#define OCTO_INLINE inline __attribute__((always_inline))
// Full unrolling over the velocity set turns the lattice tables into immediates.
#define OCTO_UNROLL _Pragma("GCC unroll 32")
#define OCTO_NO_UNROLL _Pragma("GCC unroll 1")
#define OCTO_NOINLINE __attribute__((noinline))
#endif
// OCTO_NOINLINE keeps a rarely taken, large path (a population rebuilt across octree levels) out
// of a loop that is unrolled over the velocity set: inlined 27 times it overflowed the GPU's
// instruction cache and ran the octree LBM's D3Q27 step 100 times slower (measured on an H100).
