// Division by a run-time divisor as a multiply and a shift (common/Divisor.hpp): the quotient of
// every dividend below 2^31 that can go wrong (around each multiple of the divisor, the largest
// dividends) for every divisor an octree block can have and beyond, and a refused divisor; a flat
// index split into cube and point coordinates (CubeIndexer) as nested loops number them.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#include "common/Divisor.hpp"

namespace octoflow {
namespace {

constexpr std::uint32_t kLargestDividend = (1u << 31) - 1;

// Whether every checked quotient of `divisor` is right (the first wrong one reported).
bool expectQuotients(std::uint32_t divisor, std::mt19937& random) {
  const Divisor by = Divisor::of(divisor);
  bool right = true;
  const auto expectAt = [&](std::uint32_t n) {
    if (!right || by.divide(n) == n / divisor) return;
    right = false;
    ADD_FAILURE() << n << " / " << divisor << ": " << by.divide(n) << ", not " << n / divisor;
  };
  // Each side of the first multiples and of the multiples just below 2^31.
  const std::uint64_t lastMultiple = kLargestDividend / divisor;
  for (std::uint64_t k = 1; k <= 64 && k <= lastMultiple; ++k) {
    for (const std::uint64_t multiple : {k * divisor, (lastMultiple - k + 1) * divisor}) {
      expectAt(static_cast<std::uint32_t>(multiple));
      expectAt(static_cast<std::uint32_t>(multiple - 1));
      if (multiple < kLargestDividend) expectAt(static_cast<std::uint32_t>(multiple + 1));
    }
  }
  for (std::uint32_t n = 0; n < 300; ++n) expectAt(n);
  expectAt(kLargestDividend);
  std::uniform_int_distribution<std::uint32_t> anyDividend(0, kLargestDividend);
  for (int sample = 0; sample < 200; ++sample) expectAt(anyDividend(random));
  return right;
}

TEST(Divisor, GivesTheQuotientOfEveryDividendBelowTwoToThe31) {
  std::mt19937 random(7);
  // Every divisor up to 5000, then every 997th up to 65^3 + 1; the points of every block side
  // (15, 17, 31, 33, 63, 65: inner cubes and blocks), their squares; powers of two and their
  // neighbours; some large ones. Stops at the first divisor with a wrong quotient.
  for (std::uint32_t divisor = 1; divisor <= 65 * 65 * 65 + 1; divisor += divisor < 5000 ? 1 : 997)
    ASSERT_TRUE(expectQuotients(divisor, random));
  for (const std::uint32_t side : {15u, 17u, 31u, 33u, 63u, 65u}) {
    ASSERT_TRUE(expectQuotients(side * side, random));
    ASSERT_TRUE(expectQuotients(side * side * side, random));
  }
  for (int power = 1; power < 31; ++power)
    for (const std::int64_t nudge : {-1, 0, 1})
      ASSERT_TRUE(expectQuotients(static_cast<std::uint32_t>((std::int64_t{1} << power) + nudge), random));
  for (const std::uint32_t divisor : {1000000007u, kLargestDividend}) ASSERT_TRUE(expectQuotients(divisor, random));
}

TEST(Divisor, RefusesZeroAndDivisorsFrom2To31) {
  EXPECT_THROW(Divisor::of(0), Error);
  EXPECT_THROW(Divisor::of(1u << 31), Error);
  EXPECT_NO_THROW(Divisor::of(kLargestDividend));
}

TEST(CubeIndexer, SplitsAFlatIndexIntoCubeAndPointInPointOrder) {
  for (const int side : {1, 2, 15, 17, 31, 33, 65}) {
    const CubeIndexer cubes = CubeIndexer::of(side);
    std::uint32_t flat = 0;
    for (std::uint32_t cube = 0; cube < 3; ++cube)
      for (int z = 0; z < side; ++z)
        for (int y = 0; y < side; ++y)
          for (int x = 0; x < side; ++x, ++flat) {
            int at[3];
            ASSERT_EQ(cubes.split(flat, at), cube) << "side " << side << ", index " << flat;
            ASSERT_EQ(at[0], x);
            ASSERT_EQ(at[1], y);
            ASSERT_EQ(at[2], z);
          }
  }
  // The last point below 2^31 of cubes of 17^3 points (the octree's 32-bit cap).
  const CubeIndexer leaves = CubeIndexer::of(17);
  const std::uint32_t last = kLargestDividend;
  int at[3];
  EXPECT_EQ(leaves.split(last, at), last / 4913u);
  const std::uint32_t point = last % 4913u;
  const int expected[3] = {static_cast<int>(point % 17), static_cast<int>(point / 17 % 17), static_cast<int>(point / 289)};
  for (int axis = 0; axis < 3; ++axis) EXPECT_EQ(at[axis], expected[axis]) << "axis " << axis;
  EXPECT_THROW(CubeIndexer::of(0), Error);
  EXPECT_THROW(CubeIndexer::of(1291), Error);
}

}  // namespace
}  // namespace octoflow
