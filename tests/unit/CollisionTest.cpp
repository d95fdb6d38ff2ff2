// Equilibrium moments and the conservation properties of BGK collision with Guo forcing.
#include <gtest/gtest.h>

#include <cmath>

#include <random>
#include <stdexcept>
#include <type_traits>

#include "lbm/Collision.hpp"
#include "lbm/Mrt.hpp"

using namespace octoflow::lbm;

template <class L>
class CollisionTest : public ::testing::Test {};
using Lattices = ::testing::Types<D2Q9, D3Q19, D3Q27>;
TYPED_TEST_SUITE(CollisionTest, Lattices);

namespace {
template <class L>
Vector3 sampleVelocity() {
  return Vector3{0.05f, -0.03f, L::dimensions == 3 ? 0.02f : 0.0f};
}
// A non-equilibrium state: equilibrium plus a random perturbation with zero mass.
template <class L>
void perturbedState(float (&g)[L::Q], float rho, const Vector3& u, unsigned seed) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<float> noise(-1e-3f, 1e-3f);
  for (int q = 0; q < L::Q; ++q) g[q] = equilibriumDeviation<L>(q, rho, u) + noise(random) * L::w(q);
}
template <class L>
void sums(const float (&g)[L::Q], double& rho, double (&momentum)[3]) {
  rho = 1.0;
  momentum[0] = momentum[1] = momentum[2] = 0.0;
  for (int q = 0; q < L::Q; ++q) {
    rho += g[q];
    for (int a = 0; a < 3; ++a) momentum[a] += static_cast<double>(g[q]) * L::c(q, a);
  }
}
// FP32 sums over <= 27 values of size ~1e-1: a few ulp of 1.
constexpr double kFloatSumTolerance = 2e-6;
}  // namespace

TYPED_TEST(CollisionTest, EquilibriumHasTheDensityMomentumAndMomentumFlux) {
  using L = TypeParam;
  const float rho = 1.02f;
  const Vector3 u = sampleVelocity<L>();
  double density = 1.0, momentum[3] = {0, 0, 0}, flux[3][3] = {};
  for (int q = 0; q < L::Q; ++q) {
    const double f = equilibriumDeviation<L>(q, rho, u);
    density += f;
    for (int a = 0; a < 3; ++a) {
      momentum[a] += f * L::c(q, a);
      for (int b = 0; b < 3; ++b) flux[a][b] += (f + L::w(q)) * L::c(q, a) * L::c(q, b);
    }
  }
  EXPECT_NEAR(density, rho, kFloatSumTolerance);
  for (int a = 0; a < 3; ++a) {
    EXPECT_NEAR(momentum[a], rho * u[a], kFloatSumTolerance);
    for (int b = 0; b < L::dimensions; ++b)  // Pi_ab = rho cs^2 d_ab + rho u_a u_b
      EXPECT_NEAR(flux[a][b], rho * kSoundSpeedSquared * (a == b) + rho * u[a] * u[b], kFloatSumTolerance);
  }
}

TYPED_TEST(CollisionTest, BgkConservesMassAndMomentum) {
  using L = TypeParam;
  for (float tau : {0.51f, 0.8f, 1.0f, 2.5f}) {
    float g[L::Q];
    perturbedState<L>(g, 0.98f, sampleVelocity<L>(), 7);
    double rhoBefore, momentumBefore[3], rhoAfter, momentumAfter[3];
    sums<L>(g, rhoBefore, momentumBefore);
    Bgk{tau}.collide<L>(g, Vector3{});
    sums<L>(g, rhoAfter, momentumAfter);
    EXPECT_NEAR(rhoAfter, rhoBefore, kFloatSumTolerance) << "tau " << tau;
    for (int a = 0; a < 3; ++a) EXPECT_NEAR(momentumAfter[a], momentumBefore[a], kFloatSumTolerance) << "tau " << tau;
  }
}

TYPED_TEST(CollisionTest, GuoForcingAddsExactlyTheForceToTheMomentum) {
  // With Guo forcing one collision adds F = rho a to sum f c and leaves the mass unchanged
  // (Guo et al. 2002: the half-force shift and the (1 - 1/2tau) source combine to F).
  using L = TypeParam;
  const Vector3 acceleration{1e-4f, -2e-4f, L::dimensions == 3 ? 3e-4f : 0.0f};
  float g[L::Q];
  perturbedState<L>(g, 1.01f, sampleVelocity<L>(), 11);
  double rhoBefore, momentumBefore[3], rhoAfter, momentumAfter[3];
  sums<L>(g, rhoBefore, momentumBefore);
  Bgk{0.7f}.collide<L>(g, acceleration);
  sums<L>(g, rhoAfter, momentumAfter);
  EXPECT_NEAR(rhoAfter, rhoBefore, kFloatSumTolerance);
  for (int a = 0; a < 3; ++a)
    EXPECT_NEAR(momentumAfter[a] - momentumBefore[a], rhoBefore * acceleration[a], kFloatSumTolerance) << "axis " << a;
}

TYPED_TEST(CollisionTest, EquilibriumIsAFixedPointWithoutForce) {
  using L = TypeParam;
  float g[L::Q];
  const Vector3 u = sampleVelocity<L>();
  for (int q = 0; q < L::Q; ++q) g[q] = equilibriumDeviation<L>(q, 1.03f, u);
  float before[L::Q];
  std::copy(std::begin(g), std::end(g), before);
  Bgk{0.6f}.collide<L>(g, Vector3{});
  for (int q = 0; q < L::Q; ++q) EXPECT_NEAR(g[q], before[q], 1e-7) << "q " << q;
}

TYPED_TEST(CollisionTest, BgkAndTrtEqualTheirDefinitionsInDouble) {
  // The collisions work on the equilibrium's even and odd parts by pairs, the BGK rate folded into
  // its factors; the reference is the textbook form in double: f_eq from the node's own moments,
  // BGK g + (f_eq - w - g) / tau, TRT relaxing each pair's symmetric and antisymmetric parts apart.
  // In FP16 units (1024 g) the same, scaled.
  using L = TypeParam;
  const double tau = 0.62, tauMinus = Trt{}.magic / (tau - 0.5) + 0.5;
  float g[L::Q];
  perturbedState<L>(g, 1.03f, sampleVelocity<L>(), 11);
  double rho, momentum[3];
  sums<L>(g, rho, momentum);
  double equilibrium[L::Q], bgk[L::Q], trt[L::Q];
  const double uu = (momentum[0] * momentum[0] + momentum[1] * momentum[1] + momentum[2] * momentum[2]) / (rho * rho);
  for (int q = 0; q < L::Q; ++q) {
    const double cu = (L::c(q, 0) * momentum[0] + L::c(q, 1) * momentum[1] + L::c(q, 2) * momentum[2]) / rho;
    equilibrium[q] = L::w(q) * rho * (1.0 + 3.0 * cu + 4.5 * cu * cu - 1.5 * uu) - L::w(q);
    bgk[q] = g[q] + (equilibrium[q] - g[q]) / tau;
  }
  trt[0] = bgk[0];
  for (int q = 1; q < L::Q; q += 2) {
    const double symmetric = 0.5 * (g[q] + g[q + 1] - equilibrium[q] - equilibrium[q + 1]) / tau;
    const double antisymmetric = 0.5 * (g[q] - g[q + 1] - equilibrium[q] + equilibrium[q + 1]) / tauMinus;
    trt[q] = g[q] - symmetric - antisymmetric;
    trt[q + 1] = g[q + 1] - symmetric + antisymmetric;
  }
  auto check = [&](auto collision, const double (&reference)[L::Q], const char* name) {
    float unscaled[L::Q], scaled[L::Q];
    for (int q = 0; q < L::Q; ++q) {
      unscaled[q] = g[q];
      scaled[q] = 1024.0f * g[q];
    }
    collision.template collide<L, false>(unscaled, Vector3{});
    collision.template collide<L, false, Fp16Storage::Scale>(scaled, Vector3{});
    for (int q = 0; q < L::Q; ++q) {
      // rho is a float near 1 (6e-8 apart), rho - 1 carries that: 1e-7 of a g of ~1e-2.
      EXPECT_NEAR(unscaled[q], reference[q], 1e-7) << name << " q " << q;
      EXPECT_EQ(scaled[q], 1024.0f * unscaled[q]) << name << " in FP16 units, q " << q;
    }
  };
  check(Bgk{static_cast<float>(tau)}, bgk, "bgk");
  check(Trt{static_cast<float>(tau)}, trt, "trt");
}

// --- MRT ---------------------------------------------------------------------------------

TYPED_TEST(CollisionTest, MrtBasisRowsAreOrthogonalAndComplete) {
  using L = TypeParam;
  for (int a = 0; a < L::Q; ++a)
    for (int b = 0; b < L::Q; ++b) {
      int dot = 0;
      for (int q = 0; q < L::Q; ++q) dot += MrtBasis<L>::moment(a, q) * MrtBasis<L>::moment(b, q);
      if (a == b)
        EXPECT_GT(dot, 0) << "row " << a << " is zero";
      else
        EXPECT_EQ(dot, 0) << "rows " << a << " and " << b;  // Q orthogonal non-zero rows: a basis
    }
  // Exactly 1 + dimensions conserved rows (mass and momentum).
  int conserved = 0;
  for (int row = 0; row < L::Q; ++row) conserved += mrtRowConserved<L>(row);
  EXPECT_EQ(conserved, 1 + L::dimensions);
}

TYPED_TEST(CollisionTest, MrtWithEveryRateOneOverTauIsBgk) {
  using L = TypeParam;
  const float tau = 0.7f;
  const Mrt mrt = Mrt::withRates<L>(tau, [](int, float shear) { return shear; });
  const Vector3 acceleration{1e-4f, -2e-4f, L::dimensions == 3 ? 3e-4f : 0.0f};
  float viaMrt[L::Q], viaBgk[L::Q];
  perturbedState<L>(viaMrt, 1.01f, sampleVelocity<L>(), 5);
  std::copy(std::begin(viaMrt), std::end(viaMrt), viaBgk);
  mrt.collide<L>(viaMrt, acceleration);
  Bgk{tau}.collide<L>(viaBgk, acceleration);
  // The same arithmetic reordered: a few FP32 ulp of values ~0.1.
  for (int q = 0; q < L::Q; ++q) EXPECT_NEAR(viaMrt[q], viaBgk[q], 1e-7) << "q " << q;
}

TYPED_TEST(CollisionTest, MrtEqualsTheFullProjectionOnEveryRow) {
  // The kernel form (pair sums, rows sharing one rate folded into one term, conserved rows left
  // out) against f* = f + F - M^T diag(s / |row|^2) M (f - f_eq + F/2) over every relaxed row, in
  // double, with the published rates.
  using L = TypeParam;
  const float tau = 0.62f;
  const Vector3 acceleration{2e-4f, -1e-4f, L::dimensions == 3 ? 1.5e-4f : 0.0f};
  float g[L::Q];
  perturbedState<L>(g, 1.015f, sampleVelocity<L>(), 11);
  const NodeState node = nodeState<L>(g, acceleration, tau, Les{}, nullptr);
  double shifted[L::Q], expected[L::Q];
  for (int q = 0; q < L::Q; ++q) {
    const double source = guoSource<L>(q, node.rho, node.u, acceleration);
    shifted[q] = static_cast<double>(g[q]) - equilibriumDeviation<L>(q, node.rho, node.u) + 0.5 * source;
    expected[q] = static_cast<double>(g[q]) + source;
  }
  for (int row = 0; row < L::Q; ++row) {
    if (mrtRowConserved<L>(row)) continue;
    double moment = 0.0;
    for (int q = 0; q < L::Q; ++q) moment += MrtBasis<L>::moment(row, q) * shifted[q];
    const double factor = MrtBasis<L>::rate(row, 1.0f / tau) / static_cast<double>(mrtRowNorm<L>(row));
    for (int q = 0; q < L::Q; ++q) expected[q] -= factor * MrtBasis<L>::moment(row, q) * moment;
  }
  Mrt::forLattice<L>(tau).template collide<L>(g, acceleration);
  for (int q = 0; q < L::Q; ++q) EXPECT_NEAR(g[q], expected[q], 1e-7) << "q " << q;
}

TYPED_TEST(CollisionTest, MrtMomentShortcutsMeasureWhatTheirRowsMeasure) {
  // A relaxed row's shortcut (the row plus a multiple of a conserved row, MrtMomentShortcut) takes the
  // same moment as the row of every vector whose conserved moments vanish: of every relaxed basis
  // row, in integers, exactly. And it never has more terms than the row.
  using L = TypeParam;
  int rowTerms = 0, shortcutTerms = 0;
  for (int row = 0; row < L::Q; ++row) {
    if (mrtRowConserved<L>(row)) continue;
    const MrtMomentShortcut shortcut = mrtMomentShortcut<L>(row);
    if (shortcut.multiple != 0)  // even rows take the row of ones, odd rows a c_a
      EXPECT_EQ(shortcut.axis < 0, mrtRowParity<L>(row) > 0) << "row " << row;
    for (int other = 0; other < L::Q; ++other) {
      if (mrtRowConserved<L>(other)) continue;
      int byRow = 0, byShortcut = 0;
      for (int q = 0; q < L::Q; ++q) {
        byRow += MrtBasis<L>::moment(row, q) * MrtBasis<L>::moment(other, q);
        byShortcut += mrtShortcutCoefficient<L>(row, q, shortcut) * MrtBasis<L>::moment(other, q);
      }
      EXPECT_EQ(byShortcut, byRow) << "row " << row << " on row " << other;
    }
    rowTerms += mrtShortcutTerms<L>(row, MrtMomentShortcut{});
    shortcutTerms += mrtShortcutTerms<L>(row, shortcut);
    EXPECT_LE(mrtShortcutTerms<L>(row, shortcut), mrtShortcutTerms<L>(row, MrtMomentShortcut{})) << "row " << row;
  }
  if (std::is_same_v<L, D3Q19>) {  // the count docs/PERFORMANCE.md quotes
    EXPECT_EQ(rowTerms, 83);
    EXPECT_EQ(shortcutTerms, 50);
  }
}

TEST(MrtSharedRate, RatesThatSplitTheSharedRowsAreRefused) {
  // D3Q27's rows from MrtSharedRate<D3Q27>::firstRow are never projected on: rates that differ
  // among them cannot be honoured and are refused, not silently replaced.
  constexpr int first = MrtSharedRate<D3Q27>::firstRow;
  static_assert(first < D3Q27::Q, "D3Q27 has rows sharing one rate");
  const auto lastRowApart = [](int row, float shear) {
    return row == D3Q27::Q - 1 ? 1.2f : MrtBasis<D3Q27>::rate(row, shear);
  };
  const auto sharedRowsAtOnePointThree = [](int row, float shear) {
    return row >= first ? 1.3f : MrtBasis<D3Q27>::rate(row, shear);
  };
  EXPECT_THROW(Mrt::withRates<D3Q27>(0.7f, lastRowApart), std::invalid_argument);
  EXPECT_NO_THROW(Mrt::withRates<D3Q27>(0.7f, sharedRowsAtOnePointThree));
}

TYPED_TEST(CollisionTest, UnforcedFormEqualsTheForcedOneWithoutForce) {
  // The kernels run the unforced form when the case has no body force: same result.
  using L = TypeParam;
  auto check = [&](auto collision, const char* name) {
    float forced[L::Q], unforced[L::Q];
    perturbedState<L>(forced, 1.02f, sampleVelocity<L>(), 4);
    std::copy(std::begin(forced), std::end(forced), unforced);
    collision.template collide<L, true>(forced, Vector3{});
    collision.template collide<L, false>(unforced, Vector3{});
    for (int q = 0; q < L::Q; ++q) EXPECT_NEAR(forced[q], unforced[q], 1e-8) << name << " q " << q;
  };
  check(Bgk{0.7f}, "bgk");
  check(Trt{0.7f}, "trt");
  check(Mrt::forLattice<L>(0.7f), "mrt");
}

TYPED_TEST(CollisionTest, MrtAndTrtConserveMassAndAddTheForce) {
  using L = TypeParam;
  const Vector3 acceleration{1e-4f, -2e-4f, L::dimensions == 3 ? 3e-4f : 0.0f};
  auto check = [&](auto collision, const char* name) {
    float g[L::Q];
    perturbedState<L>(g, 0.99f, sampleVelocity<L>(), 9);
    double rhoBefore, momentumBefore[3], rhoAfter, momentumAfter[3];
    sums<L>(g, rhoBefore, momentumBefore);
    collision.template collide<L>(g, acceleration);
    sums<L>(g, rhoAfter, momentumAfter);
    EXPECT_NEAR(rhoAfter, rhoBefore, kFloatSumTolerance) << name;
    for (int a = 0; a < 3; ++a)
      EXPECT_NEAR(momentumAfter[a] - momentumBefore[a], rhoBefore * acceleration[a], kFloatSumTolerance) << name << " axis " << a;
  };
  check(Mrt::forLattice<L>(0.6f), "mrt");
  check(Trt{0.6f}, "trt");
}

// --- LES -----------------------------------------------------------------------------------

TYPED_TEST(CollisionTest, SmagorinskyRelaxationTimeSolvesItsQuadratic) {
  // tau_eff (tau_eff - tau) = (18 sqrt(2) / 4) C_s^2 |Pi_neq| / rho: the eddy viscosity
  // (C_s)^2 |S| with |S| taken from the stress at tau_eff itself (Hou et al. 1996).
  using L = TypeParam;
  Les les{LesModel::Smagorinsky, 0.16f};
  const float tau = 0.55f, rho = 1.0f;
  const Vector3 u = sampleVelocity<L>();
  float equilibrium[L::Q];
  for (int q = 0; q < L::Q; ++q) equilibrium[q] = equilibriumDeviation<L>(q, rho, u);
  EXPECT_FLOAT_EQ(les.relaxationTime<L>(tau, equilibrium, rho, u, Vector3{}), tau) << "no stress, no eddy viscosity";
  // A pure shear stress Pi_xy = s: f - f_eq = w_q 9/2 (c_x c_y) s... built from its moments.
  float sheared[L::Q];
  const float s = 1e-3f;
  for (int q = 0; q < L::Q; ++q) sheared[q] = equilibrium[q] + L::w(q) * 4.5f * 2.0f * L::c(q, 0) * L::c(q, 1) * s;
  const float tauEff = les.relaxationTime<L>(tau, sheared, rho, u, Vector3{});
  // |Pi_neq| = sqrt(2) s for a symmetric off-diagonal pair.
  const double expected = 18.0 * std::sqrt(2.0) / 4.0 * 0.16 * 0.16 * std::sqrt(2.0) * s / rho;
  EXPECT_GT(tauEff, tau);
  EXPECT_NEAR(tauEff * (tauEff - tau), expected, 1e-3 * expected);
}

// --- CSM ---------------------------------------------------------------------------------

TEST(Csm, EddyViscosityVanishesInPureShearAndRotationAndFollowsTheStrainLimit) {
  const float cPrime = Les::kCsmConstant, a = 0.01f;
  VelocityGradient shear;  // u = (a y, 0, 0): Q = 0, so F_CS = 0
  shear.g[0][1] = a;
  EXPECT_FLOAT_EQ(csmEddyViscosity(shear, cPrime), 0.0f);
  VelocityGradient rotation;  // solid-body rotation: S = 0, F_CS = 1, C = 0
  rotation.g[0][1] = -a;
  rotation.g[1][0] = a;
  EXPECT_FLOAT_EQ(csmEddyViscosity(rotation, cPrime), 0.0f);
  VelocityGradient strain;  // u = (a x, -a y, 0): F_CS = -1, C = 2 C' = 1/11, |S| = 2a
  strain.g[0][0] = a;
  strain.g[1][1] = -a;
  EXPECT_NEAR(csmEddyViscosity(strain, cPrime), 2.0f * a / 11.0f, 1e-9);
  EXPECT_FLOAT_EQ(csmEddyViscosity(VelocityGradient{}, cPrime), 0.0f);
  // A mixed gradient: 0 <= C <= 2 C' whatever F_CS is.
  VelocityGradient mixed;
  mixed.g[0][1] = 0.03f;
  mixed.g[1][0] = -0.01f;
  mixed.g[2][2] = 0.02f;
  mixed.g[0][0] = -0.02f;
  const float nuT = csmEddyViscosity(mixed, cPrime);
  float strainNorm = 0.0f;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      const float s = 0.5f * (mixed.g[i][j] + mixed.g[j][i]);
      strainNorm += 2.0f * s * s;
    }
  EXPECT_GT(nuT, 0.0f);
  EXPECT_LE(nuT, 2.0f * cPrime * std::sqrt(strainNorm));
}

TEST(Csm, RelaxationTimeAddsThreeTimesTheEddyViscosity) {
  using L = D3Q19;
  const Les csm{LesModel::Csm, Les::kCsmConstant};
  VelocityGradient strain;
  strain.g[0][0] = 0.01f;
  strain.g[1][1] = -0.01f;
  float g[L::Q] = {};
  const float tau = 0.55f;
  EXPECT_FLOAT_EQ(csm.relaxationTime<L>(tau, g, 1.0f, Vector3{}, Vector3{}, &strain),
                  tau + 3.0f * csmEddyViscosity(strain, Les::kCsmConstant));
  EXPECT_FLOAT_EQ(csm.relaxationTime<L>(tau, g, 1.0f, Vector3{}, Vector3{}), tau);  // no gradient: molecular
}
