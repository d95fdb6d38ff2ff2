#pragma once
// What both phase-field models (KobayashiModel.hpp, KarmaRappelModel.hpp) share, point-wise and
// written once for the CPU reference and the CUDA kernels: the anisotropic flux through a face
// (4-fold in 2D, cubic in 3D, the same function of the normal in both models), its divergence over
// a node's 19-point neighbourhood, and the counter-based noise.
#include <cstdint>

#include "common/Macros.hpp"

namespace octoflow::phasefield {

// 1 / x for x in [1e-20, 1e20]: the hardware's approximate reciprocal on the GPU (1 ulp), the
// division on the CPU. The parity test bounds the difference it makes (PhaseFieldParityTest).
OCTO_HD inline float fastReciprocal(float x) {
#if defined(__CUDA_ARCH__)
  return __fdividef(1.0f, x);
#else
  return 1.0f / x;
#endif
}

// chi in [-1, 1) from the seed, the global node and the step alone (counter-based: SplitMix64
// finalisers), so that noise does not depend on the decomposition or the backend.
OCTO_HD inline std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
OCTO_HD inline float noiseValue(std::uint64_t seed, std::uint64_t node, std::uint64_t step) {
  const std::uint64_t bits = mix64(seed + mix64(node * 0x9e3779b97f4a7c15ull + mix64(step + 0x632be59bd9b4e019ull)));
  return static_cast<float>(bits >> 40) * (2.0f / 16777216.0f) - 1.0f;  // 24 bits: exact in FP32
}

// Where phi is flat its direction is undefined: below this |grad phi|^2 (grid units) the
// isotropic form is used, which vanishes with the gradient.
constexpr float kFlatGradientSquared = 1e-20f;

// The anisotropy factor a(n) = 1 - 3 gamma + 4 gamma (n_x^4 + n_y^4 + n_z^4) of the direction of
// (gx, gy, gz) (any scale): 1 + gamma cos 4 theta in a plane. 1 where the gradient is flat.
OCTO_HD inline float anisotropyFactor(float gx, float gy, float gz, float gamma) {
  const float x2 = gx * gx, y2 = gy * gy, z2 = gz * gz;
  const float G = x2 + y2 + z2;
  if (!(G > kFlatGradientSquared)) return 1.0f;
  const float inverseG = fastReciprocal(G);
  return 1.0f - 3.0f * gamma + 4.0f * gamma * ((x2 * x2 + y2 * y2 + z2 * z2) * inverseG * inverseG);
}

// The flux a^2 grad phi + a (d a / d grad phi) |grad phi|^2 through a face (the interface energy's
// flux divided by epsBar^2, Kobayashi, or W0^2, Karma-Rappel) along the face's normal: `normal`
// is the gradient across the face, `t1`, `t2` the gradients along it (grid units). With
// S = sum of the fourth powers, G = |grad phi|^2: d a / d phi_n = 16 gamma (phi_n^3/G^2 - phi_n S/G^3),
// so the flux is a phi_n (a + 16 gamma (phi_n^2/G - S/G^2)).
OCTO_HD inline float faceFlux(float normal, float t1, float t2, float gamma) {
  const float n2 = normal * normal, a2 = t1 * t1, b2 = t2 * t2;
  const float G = n2 + a2 + b2;
  if (!(G > kFlatGradientSquared)) return normal;
  const float inverseG = fastReciprocal(G);
  const float S = (n2 * n2 + a2 * a2 + b2 * b2) * inverseG * inverseG;  // S / G^2 in [1/3, 1]
  const float e = 1.0f - 3.0f * gamma + 4.0f * gamma * S;
  return e * normal * (e + 16.0f * gamma * (n2 * inverseG - S));
}

// The flux through the face between node A and the next node B along an axis: the normal gradient
// from the two nodes, each tangential gradient the mean of the two nodes' centred differences
// (tA1, tB1 along the face's first tangential axis, tA2, tB2 its second; first = the lower of the
// two other axes). The CPU reference and the CUDA kernel both call this with the same operands,
// so a face shared by two nodes has one value.
OCTO_HD inline float faceFluxBetween(float phiA, float phiB, float tA1, float tB1, float tA2, float tB2, float gamma) {
  return faceFlux(phiB - phiA, 0.25f * (tA1 + tB1), 0.25f * (tA2 + tB2), gamma);
}

// phi around a node: p[i][j][k] = phi at (x + i - 1, y + j - 1, z + k - 1); corners unused. 2D:
// only k = 1 is read.
struct PhiNeighbourhood {
  float p[3][3][3];
};

// The divergence of the face fluxes (grid units): the six faces' (2D: four) flux differences,
// x faces, then y, then z: 19 points in 3D, 9 in 2D (second order).
template <int Dimensions>
OCTO_HD inline float fluxDivergence(const PhiNeighbourhood& n, float gamma) {
  const auto& p = n.p;
  // Centred differences: along x at node (1, j, k), along y at (i, 1, k), along z at (i, j, 1).
  const auto dX = [&](int j, int k) { return p[2][j][k] - p[0][j][k]; };
  const auto dY = [&](int i, int k) { return p[i][2][k] - p[i][0][k]; };
  const auto dZ = [&](int i, int j) { return Dimensions == 3 ? p[i][j][2] - p[i][j][0] : 0.0f; };
  const float centre = p[1][1][1];
  const float east = faceFluxBetween(centre, p[2][1][1], dY(1, 1), dY(2, 1), dZ(1, 1), dZ(2, 1), gamma);
  const float west = faceFluxBetween(p[0][1][1], centre, dY(0, 1), dY(1, 1), dZ(0, 1), dZ(1, 1), gamma);
  const float north = faceFluxBetween(centre, p[1][2][1], dX(1, 1), dX(2, 1), dZ(1, 1), dZ(1, 2), gamma);
  const float south = faceFluxBetween(p[1][0][1], centre, dX(0, 1), dX(1, 1), dZ(1, 0), dZ(1, 1), gamma);
  float divergence = (east - west) + (north - south);
  if (Dimensions == 3) {
    const float top = faceFluxBetween(centre, p[1][1][2], dX(1, 1), dX(1, 2), dY(1, 1), dY(1, 2), gamma);
    const float bottom = faceFluxBetween(p[1][1][0], centre, dX(1, 0), dX(1, 1), dY(1, 0), dY(1, 1), gamma);
    divergence += top - bottom;
  }
  return divergence;
}

// The explicit schemes' largest stable time steps: the heat equation's and the phase field's
// (each model's own bounds: KobayashiModel.hpp, KarmaRappelModel.hpp).
struct StabilityLimits {
  double heat = 0.0, phase = 0.0;
  double limit() const { return heat < phase ? heat : phase; }
};

// What a model's point update reads of a node, besides its coefficients: phi and the flux
// divergence, the temperature u and its Laplacian (grid units), phi's centred differences (the
// node's normal), and the noise key (whole-grid node index, step).
struct NodeState {
  float phi, divergence, u, uLaplacian;
  float gradient[3];
  std::uint64_t node, step;
};

}  // namespace octoflow::phasefield
