#pragma once
// The thin-interface model of Karma and Rappel (Phys. Rev. E 57, 4323, 1998) as posed by the
// community dendrite benchmark (PFHub benchmark 3), dimensionless, point-wise: one source for the
// CPU reference and the CUDA kernels (docs/PHASEFIELD.md).
//
//   tau(n) dpsi/dt = div(W^2 grad psi + W (d W / d grad psi) |grad psi|^2)
//                    + (psi - lambda U (1 - psi^2)) (1 - psi^2)
//   dU/dt          = D lap U + (1/2) dpsi/dt
//   W = W0 a(n), tau = tau0 a(n)^2, a(n) = 1 - 3 eps4 + 4 eps4 (n_x^4 + n_y^4 + n_z^4)  (1 + eps4 cos 4 theta in 2D)
//   lambda = D tau0 / (a2 W0^2), a2 = 0.6267 (vanishing interface kinetics)
//
// psi = +1 solid, -1 liquid; U = (T - Tm) / (L / c_p). Lengths in W0, times in tau0 (W0 = tau0 = 1).
#include <cstdint>

#include "common/Macros.hpp"
#include "phasefield/PhaseFieldStencil.hpp"

namespace octoflow::phasefield {

// The model's parameters, dimensionless: the benchmark's defaults.
struct KarmaRappelParameters {
  double diffusivity = 10.0;  // D, W0^2 / tau0
  static constexpr double kA2 = 0.6267;
  double coupling() const { return diffusivity / kA2; }  // lambda = 15.9566 at D = 10
};

// One explicit step in grid units (spacing h and step dt in W0 and tau0).
struct KarmaRappelStep {
  float gradientFactor = 0.0f;  // (W0 / h)^2
  float timeFactor = 0.0f;      // dt / tau0
  float coupling = 0.0f;        // lambda
  float heatFactor = 0.0f;      // D dt / h^2
  float anisotropy = 0.0f;      // eps4
  float noiseAmplitude = 0.0f;  // a: a chi (1 - psi^2) joins the driving force
  std::uint64_t noiseSeed = 0;

  // Forward Euler of a node: psi, then U with the latent heat of the step, (psi_new - psi) / 2
  // (the enthalpy U - psi / 2 is conserved to rounding). tau(n) takes the direction of the node's
  // centred differences.
  OCTO_HD void update(const NodeState& node, float& psiNew, float& uNew) const {
    const float psi = node.phi, u = node.u;
    const float q = 1.0f - psi * psi;
    const float chi = noiseAmplitude != 0.0f && q != 0.0f ? noiseValue(noiseSeed, node.node, node.step) : 0.0f;
    const float a = anisotropyFactor(node.gradient[0], node.gradient[1], node.gradient[2], anisotropy);
    const float force = gradientFactor * node.divergence + (psi - coupling * u * q + noiseAmplitude * chi) * q;
    psiNew = psi + timeFactor * force * fastReciprocal(a * a);
    uNew = u + heatFactor * node.uLaplacian + 0.5f * (psiNew - psi);
  }
};

inline KarmaRappelStep karmaRappelStep(const KarmaRappelParameters& p, double h, double dt, double anisotropy,
                                       double noiseAmplitude, std::uint64_t noiseSeed) {
  KarmaRappelStep s;
  s.gradientFactor = static_cast<float>(1.0 / (h * h));
  s.timeFactor = static_cast<float>(dt);
  s.coupling = static_cast<float>(p.coupling());
  s.heatFactor = static_cast<float>(p.diffusivity * dt / (h * h));
  s.anisotropy = static_cast<float>(anisotropy);
  s.noiseAmplitude = static_cast<float>(noiseAmplitude);
  s.noiseSeed = noiseSeed;
  return s;
}

// Largest stable dt (tau0) of the explicit scheme: heat, D dt / h^2 <= 1 / (2 d); psi, its
// gradient term with the largest anisotropic stiffness (1 + eps4)(1 + 15 eps4) over the smallest
// tau, tau0 (1 - eps4)^2, and its driving force, whose slope in psi is at most
// 2 + (8 / (3 sqrt 3)) lambda |U| with |U| <= the undercooling.
inline StabilityLimits karmaRappelStability(const KarmaRappelParameters& p, double h, int dimensions,
                                            double anisotropy, double undercooling) {
  StabilityLimits limits;
  const double d = static_cast<double>(dimensions);
  const double tauMin = (1.0 - anisotropy) * (1.0 - anisotropy);
  limits.heat = h * h / (2.0 * d * p.diffusivity);
  const double gradient = h * h * tauMin / (2.0 * d * (1.0 + anisotropy) * (1.0 + 15.0 * anisotropy));
  const double reaction = 2.0 * tauMin / (2.0 + 1.5396 * p.coupling() * undercooling);
  limits.phase = gradient < reaction ? gradient : reaction;
  return limits;
}

}  // namespace octoflow::phasefield
