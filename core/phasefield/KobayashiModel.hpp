#pragma once
// The pure-metal dendrite model of the seed (Ogawa, Aoki, Yamanaka 2010, after Kobayashi 1993),
// point-wise: one source for the CPU reference and the CUDA kernels. Constants and the choices
// the seed's text leaves open: docs/PHASEFIELD.md.
//
//   dphi/dt = M [ div(eps^2 grad phi + eps (d eps / d grad phi) |grad phi|^2)
//                 + 4 W phi (1 - phi) (phi - 1/2 + beta + a chi) ]                        eq. (1)
//   beta    = -(15 L / 2W) (T - Tm) / Tm  phi (1 - phi)                                    eq. (2)
//   eps     = epsBar (1 - 3 gamma + 4 gamma (phi_x^4 + phi_y^4 + phi_z^4) / |grad phi|^4)  eq. (3)
//   dT/dt   = kappa lap T + (L/C) dp(phi)/dt,  p = phi^3 (10 - 15 phi + 6 phi^2)         eqs. (4)-(6)
//
// Temperature is kept dimensionless, u = (T - Tm) C / L (FP32 holds u ~ -0.5 to 1e-7 where T ~
// 1500 K only to 1e-4 K), and space in grid spacings: a step reads the 19-point neighbourhood of
// phi (centre, faces, edges) and the 7-point one of u.
#include <cmath>
#include <cstdint>

#include "common/Macros.hpp"

namespace octoflow::phasefield {

// Physical constants of the model (SI). Defaults: pure nickel as in the seed (docs/PHASEFIELD.md).
struct KobayashiMaterial {
  double meltingTemperature = 1728.0;  // Tm, K
  double latentHeat = 2.35e9;          // L, J/m^3
  double heatCapacity = 5.42e6;        // C, J/(m^3 K)
  double diffusivity = 1.55e-5;        // kappa, m^2/s
  double interfaceEnergy = 0.37;       // sigma, J/m^2
  double kineticCoefficient = 2.0;     // mu, m/(K s)
  double interfaceWidth = 8e-8;        // delta, m (4 dx at dx = 20 nm)
  double widthParameter = 0.1;         // lambda: delta spans lambda <= phi <= 1 - lambda

  // b = 2 artanh(1 - 2 lambda) (the seed prints artanh without the 2: docs/PHASEFIELD.md).
  double b() const { return 2.0 * std::atanh(1.0 - 2.0 * widthParameter); }
  double epsilonBarSquared() const { return 3.0 * interfaceWidth * interfaceEnergy / b(); }  // J/m
  double barrierHeight() const { return 6.0 * interfaceEnergy * b() / interfaceWidth; }      // W, J/m^3
  double mobility() const {                                                                 // M, m^3/(J s)
    return b() * meltingTemperature * kineticCoefficient / (3.0 * interfaceWidth * latentHeat);
  }
};

// What one explicit step needs, in grid units, for spacing dx and step dt (single precision, as
// the kernels use it).
struct KobayashiStep {
  float gradientFactor = 0.0f;  // dt M epsBar^2 / dx^2: scales the divergence of the face fluxes
  float reactionFactor = 0.0f;  // dt M 4 W
  float drivingFactor = 0.0f;   // 15 L^2 / (2 W Tm C): beta = -drivingFactor u phi (1 - phi)
  float heatFactor = 0.0f;      // kappa dt / dx^2
  float anisotropy = 0.0f;      // gamma
  float noiseAmplitude = 0.0f;  // a
  std::uint64_t noiseSeed = 0;
};

inline KobayashiStep kobayashiStep(const KobayashiMaterial& m, double dx, double dt, double anisotropy,
                                   double noiseAmplitude, std::uint64_t noiseSeed) {
  KobayashiStep s;
  const double M = m.mobility(), W = m.barrierHeight();
  s.gradientFactor = static_cast<float>(dt * M * m.epsilonBarSquared() / (dx * dx));
  s.reactionFactor = static_cast<float>(dt * M * 4.0 * W);
  s.drivingFactor =
      static_cast<float>(15.0 * m.latentHeat * m.latentHeat / (2.0 * W * m.meltingTemperature * m.heatCapacity));
  s.heatFactor = static_cast<float>(m.diffusivity * dt / (dx * dx));
  s.anisotropy = static_cast<float>(anisotropy);
  s.noiseAmplitude = static_cast<float>(noiseAmplitude);
  s.noiseSeed = noiseSeed;
  return s;
}

// Largest stable dt of the explicit scheme in `dimensions` dimensions (the smaller of the two
// equations'): heat, kappa dt / dx^2 <= 1 / (2 d); phase field, its gradient term with the
// anisotropic stiffness at most (1 + gamma)(1 + 15 gamma) epsBar^2 (4-fold, 2D bound used in 3D
// too), and its reaction term, dt M 2W <= 2 (|d/dphi| of 4W phi(1-phi)(phi-1/2) is at most 2W).
struct StabilityLimits {
  double heat = 0.0, phase = 0.0;
  double limit() const { return heat < phase ? heat : phase; }
};
inline StabilityLimits kobayashiStability(const KobayashiMaterial& m, double dx, int dimensions, double anisotropy) {
  StabilityLimits limits;
  const double d = static_cast<double>(dimensions);
  limits.heat = dx * dx / (2.0 * d * m.diffusivity);
  const double stiffness = (1.0 + anisotropy) * (1.0 + 15.0 * anisotropy);
  const double gradient = dx * dx / (2.0 * d * m.mobility() * m.epsilonBarSquared() * stiffness);
  const double reaction = 1.0 / (m.mobility() * m.barrierHeight());
  limits.phase = gradient < reaction ? gradient : reaction;
  return limits;
}

// Interpolation of the latent heat, eq. (6): p(0) = 0, p(1) = 1, p'(phi) = 30 phi^2 (1 - phi)^2.
OCTO_HD inline float latentFraction(float phi) { return phi * phi * phi * (10.0f + phi * (6.0f * phi - 15.0f)); }

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

// The flux eps^2 grad phi + eps (d eps/d grad phi) |grad phi|^2 through a face, divided by
// epsBar^2, along the face's normal: `normal` is the gradient across the face, `t1`, `t2` the
// gradients along it (grid units). With e = eps/epsBar and S = sum of the fourth powers, G =
// |grad phi|^2: d eps/d phi_n = 16 gamma epsBar (phi_n^3/G^2 - phi_n S/G^3), so the flux is
// e phi_n (e + 16 gamma (phi_n^2/G - S/G^2)). Where phi is flat (G ~ 0) the direction is
// undefined and the flux vanishes with the gradient: the isotropic form is used.
OCTO_HD inline float faceFlux(float normal, float t1, float t2, float gamma) {
  const float n2 = normal * normal, a2 = t1 * t1, b2 = t2 * t2;
  const float G = n2 + a2 + b2;
  if (!(G > 1e-20f)) return normal;
  const float inverseG = 1.0f / G;
  const float S = (n2 * n2 + a2 * a2 + b2 * b2) * inverseG * inverseG;  // S / G^2 in [1/3, 1]
  const float e = 1.0f - 3.0f * gamma + 4.0f * gamma * S;
  return e * normal * (e + 16.0f * gamma * (n2 * inverseG - S));
}

// phi around a node: p[i][j][k] = phi at (x + i - 1, y + j - 1, z + k - 1); corners unused. 2D:
// only k = 1 is read.
struct PhiNeighbourhood {
  float p[3][3][3];
};

// The divergence of the face fluxes (grid units, / epsBar^2): fluxes through the six faces with
// their tangential gradients averaged over the two nodes beside the face (eq. (1) in flux form,
// second order; 19 points in 3D, 9 in 2D).
template <int Dimensions>
OCTO_HD inline float fluxDivergence(const PhiNeighbourhood& n, float gamma) {
  const auto& p = n.p;
  // Tangential differences at the centre and at the neighbour across each face.
  const float cy = p[1][2][1] - p[1][0][1], cx = p[2][1][1] - p[0][1][1];
  float divergence = 0.0f;
  // x faces
  {
    const float cz = Dimensions == 3 ? p[1][1][2] - p[1][1][0] : 0.0f;
    const float east = faceFlux(p[2][1][1] - p[1][1][1], 0.25f * (cy + p[2][2][1] - p[2][0][1]),
                                Dimensions == 3 ? 0.25f * (cz + p[2][1][2] - p[2][1][0]) : 0.0f, gamma);
    const float west = faceFlux(p[1][1][1] - p[0][1][1], 0.25f * (cy + p[0][2][1] - p[0][0][1]),
                                Dimensions == 3 ? 0.25f * (cz + p[0][1][2] - p[0][1][0]) : 0.0f, gamma);
    divergence += east - west;
  }
  // y faces
  {
    const float cz = Dimensions == 3 ? p[1][1][2] - p[1][1][0] : 0.0f;
    const float north = faceFlux(p[1][2][1] - p[1][1][1], 0.25f * (cx + p[2][2][1] - p[0][2][1]),
                                 Dimensions == 3 ? 0.25f * (cz + p[1][2][2] - p[1][2][0]) : 0.0f, gamma);
    const float south = faceFlux(p[1][1][1] - p[1][0][1], 0.25f * (cx + p[2][0][1] - p[0][0][1]),
                                 Dimensions == 3 ? 0.25f * (cz + p[1][0][2] - p[1][0][0]) : 0.0f, gamma);
    divergence += north - south;
  }
  if (Dimensions == 3) {
    const float top = faceFlux(p[1][1][2] - p[1][1][1], 0.25f * (cx + p[2][1][2] - p[0][1][2]),
                               0.25f * (cy + p[1][2][2] - p[1][0][2]), gamma);
    const float bottom = faceFlux(p[1][1][1] - p[1][1][0], 0.25f * (cx + p[2][1][0] - p[0][1][0]),
                                  0.25f * (cy + p[1][2][0] - p[1][0][0]), gamma);
    divergence += top - bottom;
  }
  return divergence;
}

// One forward-Euler step of a node: phi from eq. (1)-(3), then u from eq. (4) with the latent
// heat released in the step written as p(phi_new) - p(phi) (first-order equal to
// p'(phi) dphi/dt dt, and enthalpy u - p(phi) is then conserved exactly up to rounding).
// `uLaplacian` is the 7-point (5-point in 2D) Laplacian of u in grid units.
template <int Dimensions>
OCTO_HD inline void kobayashiUpdate(const KobayashiStep& s, const PhiNeighbourhood& n, float u, float uLaplacian,
                                    float chi, float& phiNew, float& uNew) {
  const float phi = n.p[1][1][1];
  const float solidLiquid = phi * (1.0f - phi);
  const float beta = -s.drivingFactor * u * solidLiquid;
  const float change = s.gradientFactor * fluxDivergence<Dimensions>(n, s.anisotropy) +
                       s.reactionFactor * solidLiquid * (phi - 0.5f + beta + s.noiseAmplitude * chi);
  phiNew = phi + change;
  uNew = u + s.heatFactor * uLaplacian + (latentFraction(phiNew) - latentFraction(phi));
}

}  // namespace octoflow::phasefield
