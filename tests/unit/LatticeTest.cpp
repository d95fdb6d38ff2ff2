// Lattice velocity sets: the isotropy conditions the Chapman-Enskog expansion needs.
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "lbm/Lattice.hpp"

using namespace octoflow::lbm;

template <class L>
class LatticeTest : public ::testing::Test {};
using Lattices = ::testing::Types<D2Q9, D3Q19, D3Q27>;
TYPED_TEST_SUITE(LatticeTest, Lattices);

// Sums of a few dozen fractions in float: 1e-6 is ~10 ulp of 1.
constexpr double kTolerance = 1e-6;

TYPED_TEST(LatticeTest, WeightsSumToOne) {
  using L = TypeParam;
  double sum = 0.0;
  for (int q = 0; q < L::Q; ++q) sum += L::w(q);
  EXPECT_NEAR(sum, 1.0, kTolerance);
}

TYPED_TEST(LatticeTest, FirstAndThirdMomentsOfWeightsVanish) {
  using L = TypeParam;
  for (int a = 0; a < 3; ++a) {
    double first = 0.0;
    for (int q = 0; q < L::Q; ++q) first += L::w(q) * L::c(q, a);
    EXPECT_NEAR(first, 0.0, kTolerance) << "axis " << a;
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 3; ++c) {
        double third = 0.0;
        for (int q = 0; q < L::Q; ++q) third += L::w(q) * L::c(q, a) * L::c(q, b) * L::c(q, c);
        EXPECT_NEAR(third, 0.0, kTolerance);
      }
  }
}

TYPED_TEST(LatticeTest, SecondMomentIsSoundSpeedSquaredTimesIdentity) {
  using L = TypeParam;
  for (int a = 0; a < L::dimensions; ++a)
    for (int b = 0; b < L::dimensions; ++b) {
      double second = 0.0;
      for (int q = 0; q < L::Q; ++q) second += L::w(q) * L::c(q, a) * L::c(q, b);
      EXPECT_NEAR(second, a == b ? kSoundSpeedSquared : 0.0, kTolerance) << a << "," << b;
    }
}

TYPED_TEST(LatticeTest, FourthMomentIsIsotropic) {
  // sum w c_a c_b c_c c_d = cs^4 (d_ab d_cd + d_ac d_bd + d_ad d_bc): needed for Navier-Stokes.
  using L = TypeParam;
  const double cs4 = kSoundSpeedSquared * kSoundSpeedSquared;
  for (int a = 0; a < L::dimensions; ++a)
    for (int b = 0; b < L::dimensions; ++b)
      for (int c = 0; c < L::dimensions; ++c)
        for (int d = 0; d < L::dimensions; ++d) {
          double fourth = 0.0;
          for (int q = 0; q < L::Q; ++q) fourth += L::w(q) * L::c(q, a) * L::c(q, b) * L::c(q, c) * L::c(q, d);
          const double expected = cs4 * ((a == b) * (c == d) + (a == c) * (b == d) + (a == d) * (b == c));
          EXPECT_NEAR(fourth, expected, kTolerance);
        }
}

TYPED_TEST(LatticeTest, OppositesReverseVelocitiesAndVelocitiesAreDistinct) {
  using L = TypeParam;
  std::set<std::tuple<int, int, int>> seen;
  EXPECT_EQ(L::c(0, 0), 0);
  for (int q = 0; q < L::Q; ++q) {
    const int o = L::opposite(q);
    for (int a = 0; a < 3; ++a) EXPECT_EQ(L::c(o, a), -L::c(q, a)) << "q " << q;
    EXPECT_EQ(L::w(o), L::w(q));
    EXPECT_TRUE(seen.insert({L::c(q, 0), L::c(q, 1), L::c(q, 2)}).second) << "velocity " << q << " repeated";
    if (L::dimensions == 2) EXPECT_EQ(L::c(q, 2), 0);
  }
}
