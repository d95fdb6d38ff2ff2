#pragma once
// Point-wise LBM physics, written once for host and device. Populations are stored as
// deviations from the rest weights, g_q = f_q - w_q (rho_0 = 1): in FP32 this keeps the small
// differences that carry the flow instead of rounding them away against O(1) values.
#include <cmath>

#include "common/Macros.hpp"
#include "lbm/Lattice.hpp"
#include "lbm/PopulationStorage.hpp"

namespace octoflow::lbm {

struct Vector3 {
  float x = 0.0f, y = 0.0f, z = 0.0f;
  OCTO_HD float operator[](int axis) const { return axis == 0 ? x : (axis == 1 ? y : z); }
};

OCTO_HD OCTO_INLINE float dot(const Vector3& a, const Vector3& b) { return a.x * b.x + a.y * b.y + a.z * b.z; }

// sum + c v for a lattice velocity component (or product of two) c in {-1, 0, 1}, the product never
// formed. In the unrolled kernels c is a constant and this folds to nothing, an add or a subtract,
// where sum + c * v kept a multiply-add even for c = 0: a compiler may not drop x * 0 (it is -0 or
// NaN for some x). The same bits as sum + c * v for finite v, but for the sign of a zero sum.
OCTO_HD OCTO_INLINE float plusComponent(float sum, int c, float v) { return c == 0 ? sum : (c > 0 ? sum + v : sum - v); }

// c_q . v, summed over the non-zero components of c_q in axis order (0 for the rest velocity):
// the bits of the dot product with c_q as floats, without its multiplies and zero terms.
template <class L>
OCTO_HD OCTO_INLINE float velocityDot(int q, const Vector3& v) {
  float sum = 0.0f;
  bool started = false;
  OCTO_UNROLL
  for (int axis = 0; axis < 3; ++axis) {
    const int c = L::c(q, axis);
    if (c == 0) continue;
    sum = started ? plusComponent(sum, c, v[axis]) : (c > 0 ? v[axis] : -v[axis]);
    started = true;
  }
  return sum;
}

// Density and velocity of one node from its (pre-collision) population deviations, with the
// half-force correction of Guo forcing: rho u = sum_q f_q c_q + F/2, F = rho a
// (Guo, Zheng & Shi, Phys. Rev. E 65, 046308 (2002), eq. (4) with the force shift of eq. (20)).
// Every function that takes or returns population deviations has a Scale parameter (PopulationScale,
// PopulationStorage.hpp): the units those are in, g itself by default.
template <class L, class Scale = Unscaled>
OCTO_HD OCTO_INLINE void moments(const float (&g)[L::Q], const Vector3& acceleration, float& rho,
                                 Vector3& u) {
  // By pairs (q, q + 1) of opposite velocities (Lattice.hpp): a pair adds c_q (g_q - g_q+1) to
  // the momentum. The sums start at -0: x + -0 is x for every x, so the first term costs no add.
  float deltaRho = g[0];
  Vector3 momentum{-0.0f, -0.0f, -0.0f};
  OCTO_UNROLL
  for (int q = 1; q < L::Q; q += 2) {
    deltaRho += g[q] + g[q + 1];
    const float difference = g[q] - g[q + 1];
    momentum.x = plusComponent(momentum.x, L::c(q, 0), difference);
    momentum.y = plusComponent(momentum.y, L::c(q, 1), difference);
    momentum.z = plusComponent(momentum.z, L::c(q, 2), difference);
  }
  rho = 1.0f + deltaRho * Scale::inverse;
  const float inverseRho = 1.0f / rho;
  u.x = (momentum.x * Scale::inverse + 0.5f * rho * acceleration.x) * inverseRho;
  u.y = (momentum.y * Scale::inverse + 0.5f * rho * acceleration.y) * inverseRho;
  u.z = (momentum.z * Scale::inverse + 0.5f * rho * acceleration.z) * inverseRho;
}

// The second-order equilibrium (seed 1 eq. (6): f^eq = w rho [1 - 1.5 u^2 + 3 c.u + 4.5 (c.u)^2])
// minus the weights, taken apart by parity in c: with cu = c_q . u,
//   f_q^eq - w_q = even_q + odd_q,  even_q = w_q [(rho - 1) - 1.5 rho u.u + 4.5 rho cu^2],
//   odd_q = 3 w_q rho cu,
// and the opposite velocity has the same even part and the opposite odd one. The node's factors
// are worked out once, times `scale` (a collision folds its rate in there), so a pair of opposite
// populations costs its c.u, a multiply and a multiply-add, and a multiply-add each.
template <class L, class Scale = Unscaled>
struct Equilibrium {
  float constant;  // scale ((rho - 1) - 1.5 rho u.u), in the units Scale
  float square;    // scale 4.5 rho, in the units Scale
  float linear;    // scale 3 rho, in the units Scale

  OCTO_HD OCTO_INLINE Equilibrium(float rho, const Vector3& u, float scale = 1.0f) {
    const float factor = scale * Scale::factor;
    constant = factor * ((rho - 1.0f) - 1.5f * rho * dot(u, u));
    square = factor * (4.5f * rho);
    linear = factor * (3.0f * rho);
  }
  // cu = velocityDot<L>(q, u).
  OCTO_HD OCTO_INLINE float even(int q, float cu) const {
    const bool rest = L::c(q, 0) == 0 && L::c(q, 1) == 0 && L::c(q, 2) == 0;  // cu is 0: no terms in it
    return rest ? L::w(q) * constant : (L::w(q) * square) * cu * cu + L::w(q) * constant;
  }
  OCTO_HD OCTO_INLINE float odd(int q, float cu) const { return (L::w(q) * linear) * cu; }
  OCTO_HD OCTO_INLINE float value(int q, const Vector3& u) const {
    const float cu = velocityDot<L>(q, u);
    return even(q, cu) + odd(q, cu);
  }
};

// f_q^eq - w_q of one population (Equilibrium).
template <class L, class Scale = Unscaled>
OCTO_HD OCTO_INLINE float equilibriumDeviation(int q, float rho, const Vector3& u) {
  return Equilibrium<L, Scale>(rho, u).value(q, u);
}

// Guo forcing source term without its (1 - 1/(2 tau)) prefactor:
// w_q [3 (c_q - u) + 9 (c_q.u) c_q] . F   (Guo et al. 2002, eq. (20)), F = rho a.
template <class L, class Scale = Unscaled>
OCTO_HD OCTO_INLINE float guoSource(int q, float rho, const Vector3& u, const Vector3& acceleration) {
  const float cu = velocityDot<L>(q, u);
  const Vector3 force{rho * acceleration.x, rho * acceleration.y, rho * acceleration.z};
  float direction[3];
  OCTO_UNROLL
  for (int axis = 0; axis < 3; ++axis) {
    const int c = L::c(q, axis);
    direction[axis] = 3.0f * (static_cast<float>(c) - u[axis]);
    if (c != 0) direction[axis] += c > 0 ? 9.0f * cu : -(9.0f * cu);
  }
  return (L::w(q) * Scale::factor) * dot(Vector3{direction[0], direction[1], direction[2]}, force);
}

// Large-eddy simulation: an eddy viscosity that raises the local relaxation time.
enum class LesModel : unsigned char { None, Smagorinsky, Csm };

// The resolved velocity gradient at a node, g[i][j] = du_i/dx_j (lattice units).
struct VelocityGradient {
  float g[3][3] = {};
};

// Eddy viscosity of the coherent-structure Smagorinsky model (Kobayashi, Phys. Fluids 17,
// 045104 (2005); Kobayashi, Ham & Wu, Int. J. Heat Fluid Flow 29, 640 (2008)):
// nu_t = C Delta^2 |S|, C = C' |F_CS|^(3/2) (1 - F_CS), F_CS = Q / E with
// Q = (W:W - S:S) / 2 (the second invariant) and E = (W:W + S:S) / 2, |S| = sqrt(2 S:S), Delta = 1.
// F_CS tends to 0 at walls: the model damps itself there, and vanishes in pure shear or rotation.
OCTO_HD OCTO_INLINE float csmEddyViscosity(const VelocityGradient& gradient, float cPrime) {
  float strain = 0.0f, rotation = 0.0f;  // S:S, W:W
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      const float s = 0.5f * (gradient.g[i][j] + gradient.g[j][i]);
      const float w = 0.5f * (gradient.g[i][j] - gradient.g[j][i]);
      strain += s * s;
      rotation += w * w;
    }
  const float magnitude = 0.5f * (rotation + strain);
  if (!(magnitude > 1e-30f)) return 0.0f;
  float coherence = 0.5f * (rotation - strain) / magnitude;  // F_CS, in [-1, 1]
  coherence = coherence < -1.0f ? -1.0f : (coherence > 1.0f ? 1.0f : coherence);
  const float magnitudeOfF = coherence < 0.0f ? -coherence : coherence;
  const float c = cPrime * magnitudeOfF * sqrtf(magnitudeOfF) * (1.0f - coherence);
  return c * sqrtf(2.0f * strain);
}

struct Les {
  LesModel model = LesModel::None;
  float constant = 0.16f;  // Smagorinsky C_s (0.1 to 0.17 in the literature); CSM: C', give
                           // kCsmConstant (1/22) explicitly: this default is Smagorinsky's
  static constexpr float kCsmConstant = 1.0f / 22.0f;

  // The model with its default constant: C_s = 0.16 for Smagorinsky, C' = 1/22 for CSM.
  static Les withDefaultConstant(LesModel model) {
    Les les;
    les.model = model;
    if (model == LesModel::Csm) les.constant = kCsmConstant;
    return les;
  }

  // The relaxation time that adds the Smagorinsky eddy viscosity nu_t = (C_s Delta)^2 |S| to
  // the molecular one, with |S| from the local non-equilibrium stress (Hou, Sterling, Chen &
  // Doolen, Fields Inst. Commun. 6, 151 (1996); Malaspinas & Sagaut, J. Fluid Mech. 700, 514
  // (2012), eq. 17): tau_eff = [tau + sqrt(tau^2 + 18 sqrt(2) C_s^2 |Pi_neq| / rho)] / 2,
  // Pi_neq the deviatoric part of sum c c (f - f_eq) + (F u + u F)/2 (Guo forcing), Delta = 1.
  // CSM takes the velocity gradient (finite differences of the velocity field, StreamCollide.hpp):
  // tau_eff = tau + 3 nu_t; without a gradient (null) the node keeps the molecular tau.
  template <class L, class Scale = Unscaled>
  OCTO_HD OCTO_INLINE float relaxationTime(float tau, const float (&g)[L::Q], float rho, const Vector3& u,
                                           const Vector3& acceleration,
                                           const VelocityGradient* gradient = nullptr) const {
    if (model == LesModel::None) return tau;
    if (model == LesModel::Csm) return gradient ? tau + 3.0f * csmEddyViscosity(*gradient, constant) : tau;
    float stress[3][3] = {};
    OCTO_UNROLL
    for (int q = 0; q < L::Q; ++q) {
      const float nonEquilibrium = g[q] - equilibriumDeviation<L, Scale>(q, rho, u);
      for (int a = 0; a < 3; ++a)
        for (int b = a; b < 3; ++b) stress[a][b] = plusComponent(stress[a][b], L::c(q, a) * L::c(q, b), nonEquilibrium);
    }
    const float force[3] = {rho * acceleration.x, rho * acceleration.y, rho * acceleration.z};
    for (int a = 0; a < 3; ++a)
      for (int b = a; b < 3; ++b) stress[a][b] += Scale::factor * (0.5f * (force[a] * u[b] + u[a] * force[b]));
    const float trace = (stress[0][0] + stress[1][1] + stress[2][2]) / L::dimensions;
    float norm = 0.0f;
    for (int a = 0; a < L::dimensions; ++a)
      for (int b = a; b < L::dimensions; ++b) {
        const float value = stress[a][b] - (a == b ? trace : 0.0f);
        norm += (a == b ? 1.0f : 2.0f) * value * value;
      }
    constexpr float kEighteenRootTwo = 25.455844f;  // 18 sqrt(2)
    return 0.5f * (tau + sqrtf(tau * tau + kEighteenRootTwo * constant * constant * (sqrtf(norm) * Scale::inverse) / rho));
  }
};

// What every collision needs first: the node's density and velocity and its relaxation time
// (the molecular one, or with LES the local one).
struct NodeState {
  float rho;
  Vector3 u;
  float tau;
};

template <class L, class Scale = Unscaled>
OCTO_HD OCTO_INLINE NodeState nodeState(const float (&g)[L::Q], const Vector3& acceleration, float tau, const Les& les,
                                        const VelocityGradient* gradient) {
  NodeState node;
  moments<L, Scale>(g, acceleration, node.rho, node.u);
  node.tau = les.template relaxationTime<L, Scale>(tau, g, node.rho, node.u, acceleration, gradient);
  return node;
}

// Single-relaxation-time BGK collision with Guo forcing, in place on the deviations
// (seed 1 eqs. (1)-(2); seed 3 eq. (2) with the force term in Guo's second-order form). Like
// every collision it returns the state (density, velocity, relaxation time) it relaxed with;
// Forced = false drops the force terms (no body force: fewer instructions in the kernels).
struct Bgk {
  float tau = 1.0f;
  Les les;

  template <class L, bool Forced = true, class Scale = Unscaled>
  OCTO_HD OCTO_INLINE NodeState collide(float (&g)[L::Q], const Vector3& acceleration,
                                        const VelocityGradient* gradient = nullptr) const {
    return collideAt<L, Forced, Scale>(tau, g, acceleration, gradient);
  }

  // The collision with another molecular relaxation time than `tau` (every collision has it: the
  // levels of a refined grid share one operator, each with its own relaxation time).
  template <class L, bool Forced = true, class Scale = Unscaled>
  OCTO_HD OCTO_INLINE NodeState collideAt(float molecularTau, float (&g)[L::Q], const Vector3& acceleration,
                                          const VelocityGradient* gradient = nullptr) const {
    const NodeState node = nodeState<L, Scale>(g, acceleration, molecularTau, les, gradient);
    const float rho = node.rho;
    const Vector3 u = node.u;
    const float omega = 1.0f / node.tau;
    const float forcePrefactor = 1.0f - 0.5f * omega;
    // g + omega (f_eq - w - g) as (1 - omega) g + omega (f_eq - w), the rate folded into the
    // equilibrium's factors, a pair of opposite populations at a time.
    const Equilibrium<L, Scale> relaxedEquilibrium(rho, u, omega);
    const float kept = 1.0f - omega;
    [[maybe_unused]] const auto source = [&](int q) {
      return Forced ? forcePrefactor * guoSource<L, Scale>(q, rho, u, acceleration) : 0.0f;
    };
    g[0] = kept * g[0] + relaxedEquilibrium.even(0, 0.0f);
    if constexpr (Forced) g[0] += source(0);
    OCTO_UNROLL
    for (int q = 1; q < L::Q; q += 2) {  // pairs (q, q + 1) are opposite (Lattice.hpp)
      const float cu = velocityDot<L>(q, u);
      const float even = relaxedEquilibrium.even(q, cu), odd = relaxedEquilibrium.odd(q, cu);
      g[q] = kept * g[q] + (even + odd);
      g[q + 1] = kept * g[q + 1] + (even - odd);
      if constexpr (Forced) {
        g[q] += source(q);
        g[q + 1] += source(q + 1);
      }
    }
    return node;
  }

  // The factor of the non-equilibrium part of a node's pre-collision populations carried to a grid
  // whose time step is `dtRatio` times the source grid's (grid refinement):
  // f_neq ~ -tau dt (d_t + c.grad) f_eq scales by dtRatio targetTau / sourceTau.
  OCTO_HD static OCTO_INLINE float nonEquilibriumScale(float dtRatio, float sourceTau, float targetTau) {
    return dtRatio * targetTau / sourceTau;
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
  Les les;

  template <class L, bool Forced = true, class Scale = Unscaled>
  OCTO_HD OCTO_INLINE NodeState collide(float (&g)[L::Q], const Vector3& acceleration,
                                        const VelocityGradient* gradient = nullptr) const {
    return collideAt<L, Forced, Scale>(tau, g, acceleration, gradient);
  }

  template <class L, bool Forced = true, class Scale = Unscaled>
  OCTO_HD OCTO_INLINE NodeState collideAt(float molecularTau, float (&g)[L::Q], const Vector3& acceleration,
                                          const VelocityGradient* gradient = nullptr) const {
    const NodeState node = nodeState<L, Scale>(g, acceleration, molecularTau, les, gradient);
    const float rho = node.rho;
    const Vector3 u = node.u;
    const float omegaPlus = 1.0f / node.tau;
    const float omegaMinus = 1.0f / antisymmetricTau(node.tau);
    const float sourcePlus = 1.0f - 0.5f * omegaPlus;
    const float sourceMinus = 1.0f - 0.5f * omegaMinus;
    [[maybe_unused]] const auto source = [&](int q) {
      return Forced ? guoSource<L, Scale>(q, rho, u, acceleration) : 0.0f;
    };
    const Equilibrium<L, Scale> equilibrium(rho, u);
    g[0] += omegaPlus * (equilibrium.even(0, 0.0f) - g[0]);
    if constexpr (Forced) g[0] += sourcePlus * source(0);
    OCTO_UNROLL
    for (int q = 1; q < L::Q; q += 2) {  // pairs (q, q + 1) are opposite (Lattice.hpp)
      const int r = q + 1;
      const float cu = velocityDot<L>(q, u);
      float symmetric = omegaPlus * (0.5f * (g[q] + g[r]) - equilibrium.even(q, cu));
      float antisymmetric = omegaMinus * (0.5f * (g[q] - g[r]) - equilibrium.odd(q, cu));
      if constexpr (Forced) {
        const float sourceQ = source(q), sourceR = source(r);
        symmetric -= sourcePlus * 0.5f * (sourceQ + sourceR);
        antisymmetric -= sourceMinus * 0.5f * (sourceQ - sourceR);
      }
      g[q] -= symmetric + antisymmetric;
      g[r] -= symmetric - antisymmetric;
    }
    return node;
  }

  // The antisymmetric relaxation time 1/omega_minus for a symmetric one (the magic parameter fixed).
  OCTO_HD OCTO_INLINE float antisymmetricTau(float symmetricTau) const { return magic / (symmetricTau - 0.5f) + 0.5f; }

  // Bgk::nonEquilibriumScale part by part, applied to the non-equilibrium populations: the
  // symmetric half of each pair scales with the symmetric relaxation times, the antisymmetric half
  // (which holds the first moment) with the antisymmetric ones. Returns the antisymmetric factor.
  template <class L>
  OCTO_HD OCTO_INLINE float rescaleNonEquilibrium(float (&nonEquilibrium)[L::Q], float dtRatio, float sourceTau,
                                                  float targetTau) const {
    const float plus = Bgk::nonEquilibriumScale(dtRatio, sourceTau, targetTau);
    const float minus = Bgk::nonEquilibriumScale(dtRatio, antisymmetricTau(sourceTau), antisymmetricTau(targetTau));
    nonEquilibrium[0] *= plus;
    OCTO_UNROLL
    for (int q = 1; q < L::Q; q += 2) {
      const float symmetric = 0.5f * (nonEquilibrium[q] + nonEquilibrium[q + 1]);
      const float antisymmetric = 0.5f * (nonEquilibrium[q] - nonEquilibrium[q + 1]);
      nonEquilibrium[q] = plus * symmetric + minus * antisymmetric;
      nonEquilibrium[q + 1] = plus * symmetric - minus * antisymmetric;
    }
    return minus;
  }
};

// The collision operators a case picks (lbm.collision): Bgk, Trt, Mrt (Mrt.hpp).
enum class CollisionKind { Bgk, Trt, Mrt };
const char* collisionName(CollisionKind kind);

// Kinematic viscosity of BGK in lattice units: nu = cs^2 (tau - 1/2) (seed 3 eq. (3)).
inline double viscosityFromTau(double tau) { return (tau - 0.5) / 3.0; }
inline double tauFromViscosity(double viscosity) { return 3.0 * viscosity + 0.5; }

}  // namespace octoflow::lbm
