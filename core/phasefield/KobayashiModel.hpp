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
#include "phasefield/PhaseFieldStencil.hpp"

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

  // One forward-Euler step of a node: phi from eq. (1)-(3), then u from eq. (4) with the latent
  // heat released in the step written as p(phi_new) - p(phi) (first-order equal to
  // p'(phi) dphi/dt dt, and enthalpy u - p(phi) is then conserved exactly up to rounding). The
  // noise acts through phi (1 - phi): where that is 0 (bulk solid or liquid) no noise is drawn.
  OCTO_HD void update(const NodeState& node, float& phiNew, float& uNew) const;
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

OCTO_HD inline void KobayashiStep::update(const NodeState& node, float& phiNew, float& uNew) const {
  const float phi = node.phi, u = node.u;
  const float solidLiquid = phi * (1.0f - phi);
  const float beta = -drivingFactor * u * solidLiquid;
  const float chi = noiseAmplitude != 0.0f && solidLiquid != 0.0f ? noiseValue(noiseSeed, node.node, node.step) : 0.0f;
  const float change =
      gradientFactor * node.divergence + reactionFactor * solidLiquid * (phi - 0.5f + beta + noiseAmplitude * chi);
  phiNew = phi + change;
  uNew = u + heatFactor * node.uLaplacian + (latentFraction(phiNew) - latentFraction(phi));
}

}  // namespace octoflow::phasefield
