#pragma once
// Point-wise LBM physics, written once for host and device. Populations are stored as
// deviations from the rest weights, g_q = f_q - w_q (rho_0 = 1): in FP32 this keeps the small
// differences that carry the flow instead of rounding them away against O(1) values.
#include "common/Macros.hpp"
#include "lbm/Lattice.hpp"

namespace octoflow::lbm {

struct Vector3 {
  float x = 0.0f, y = 0.0f, z = 0.0f;
  OCTO_HD float operator[](int axis) const { return axis == 0 ? x : (axis == 1 ? y : z); }
};

OCTO_HD OCTO_INLINE float dot(const Vector3& a, const Vector3& b) { return a.x * b.x + a.y * b.y + a.z * b.z; }

template <class L>
OCTO_HD OCTO_INLINE Vector3 velocityOf(int q) {
  return Vector3{static_cast<float>(L::c(q, 0)), static_cast<float>(L::c(q, 1)),
                 static_cast<float>(L::c(q, 2))};
}

// Density and velocity of one node from its (pre-collision) population deviations, with the
// half-force correction of Guo forcing: rho u = sum_q f_q c_q + F/2, F = rho a
// (Guo, Zheng & Shi, Phys. Rev. E 65, 046308 (2002), eq. (4) with the force shift of eq. (20)).
template <class L>
OCTO_HD OCTO_INLINE void moments(const float (&g)[L::Q], const Vector3& acceleration, float& rho,
                                 Vector3& u) {
  float deltaRho = 0.0f;
  Vector3 momentum;
  OCTO_UNROLL
  for (int q = 0; q < L::Q; ++q) {
    deltaRho += g[q];
    momentum.x += g[q] * L::c(q, 0);
    momentum.y += g[q] * L::c(q, 1);
    momentum.z += g[q] * L::c(q, 2);
  }
  rho = 1.0f + deltaRho;
  const float inverseRho = 1.0f / rho;
  u.x = (momentum.x + 0.5f * rho * acceleration.x) * inverseRho;
  u.y = (momentum.y + 0.5f * rho * acceleration.y) * inverseRho;
  u.z = (momentum.z + 0.5f * rho * acceleration.z) * inverseRho;
}

// Second-order equilibrium minus the weight, f_q^eq - w_q
// (seed 1 eq. (6): f^eq = w rho [1 - 1.5 u^2 + 3 c.u + 4.5 (c.u)^2]).
template <class L>
OCTO_HD OCTO_INLINE float equilibriumDeviation(int q, float rho, const Vector3& u) {
  const float cu = L::c(q, 0) * u.x + L::c(q, 1) * u.y + L::c(q, 2) * u.z;
  const float uu = dot(u, u);
  return L::w(q) * ((rho - 1.0f) + rho * (3.0f * cu + 4.5f * cu * cu - 1.5f * uu));
}

// Guo forcing source term without its (1 - 1/(2 tau)) prefactor:
// w_q [3 (c_q - u) + 9 (c_q.u) c_q] . F   (Guo et al. 2002, eq. (20)), F = rho a.
template <class L>
OCTO_HD OCTO_INLINE float guoSource(int q, float rho, const Vector3& u, const Vector3& acceleration) {
  const Vector3 c = velocityOf<L>(q);
  const float cu = dot(c, u);
  const Vector3 force{rho * acceleration.x, rho * acceleration.y, rho * acceleration.z};
  const Vector3 direction{3.0f * (c.x - u.x) + 9.0f * cu * c.x, 3.0f * (c.y - u.y) + 9.0f * cu * c.y,
                          3.0f * (c.z - u.z) + 9.0f * cu * c.z};
  return L::w(q) * dot(direction, force);
}

// Single-relaxation-time BGK collision with Guo forcing, in place on the deviations
// (seed 1 eqs. (1)-(2); seed 3 eq. (2) with the force term in Guo's second-order form).
struct Bgk {
  float tau = 1.0f;

  template <class L>
  OCTO_HD OCTO_INLINE void collide(float (&g)[L::Q], const Vector3& acceleration) const {
    float rho;
    Vector3 u;
    moments<L>(g, acceleration, rho, u);
    const float omega = 1.0f / tau;
    const float forcePrefactor = 1.0f - 0.5f * omega;
    OCTO_UNROLL
    for (int q = 0; q < L::Q; ++q) {
      g[q] += omega * (equilibriumDeviation<L>(q, rho, u) - g[q]) +
              forcePrefactor * guoSource<L>(q, rho, u, acceleration);
    }
  }
};

// Two-relaxation-time collision (Ginzburg, Verhaeghe & d'Humieres, Commun. Comput. Phys. 3
// (2008) 427, eqs. 5-8): the symmetric part of each pair (q, qbar) relaxes with 1/tau (the
// viscosity), the antisymmetric part with omega_minus fixed by the "magic" parameter
// Lambda = (tau - 1/2)(1/omega_minus - 1/2); Lambda = 3/16 puts half-way bounce-back walls
// exactly half-way for Poiseuille flow, whatever the viscosity. Guo forcing splits alike.
struct Trt {
  float tau = 1.0f;
  float magic = 3.0f / 16.0f;

  template <class L>
  OCTO_HD OCTO_INLINE void collide(float (&g)[L::Q], const Vector3& acceleration) const {
    float rho;
    Vector3 u;
    moments<L>(g, acceleration, rho, u);
    const float omegaPlus = 1.0f / tau;
    const float omegaMinus = 1.0f / (magic / (tau - 0.5f) + 0.5f);
    const float sourcePlus = 1.0f - 0.5f * omegaPlus;
    const float sourceMinus = 1.0f - 0.5f * omegaMinus;
    g[0] += omegaPlus * (equilibriumDeviation<L>(0, rho, u) - g[0]) +
            sourcePlus * guoSource<L>(0, rho, u, acceleration);
    OCTO_UNROLL
    for (int q = 1; q < L::Q; q += 2) {  // pairs (q, q + 1) are opposite (Lattice.hpp)
      const int r = q + 1;
      const float equilibriumQ = equilibriumDeviation<L>(q, rho, u);
      const float equilibriumR = equilibriumDeviation<L>(r, rho, u);
      const float sourceQ = guoSource<L>(q, rho, u, acceleration);
      const float sourceR = guoSource<L>(r, rho, u, acceleration);
      const float symmetric = omegaPlus * (0.5f * (g[q] + g[r]) - 0.5f * (equilibriumQ + equilibriumR)) -
                              sourcePlus * 0.5f * (sourceQ + sourceR);
      const float antisymmetric = omegaMinus * (0.5f * (g[q] - g[r]) - 0.5f * (equilibriumQ - equilibriumR)) -
                                  sourceMinus * 0.5f * (sourceQ - sourceR);
      g[q] -= symmetric + antisymmetric;
      g[r] -= symmetric - antisymmetric;
    }
  }
};

// Kinematic viscosity of BGK in lattice units: nu = cs^2 (tau - 1/2) (seed 3 eq. (3)).
inline double viscosityFromTau(double tau) { return (tau - 0.5) / 3.0; }
inline double tauFromViscosity(double viscosity) { return 3.0 * viscosity + 0.5; }

}  // namespace octoflow::lbm
