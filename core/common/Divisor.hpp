#pragma once
// Division by a divisor known only at run time but fixed for a kernel launch, as one widening
// multiply and a shift (Granlund & Montgomery, "Division by invariant integers using
// multiplication", PLDI 1994, theorem 4.2 with N = 31): made on the host, used where a GPU's
// integer division costs some twenty instructions a point (a point's block and coordinates).
#include <cstdint>
#include <string>

#include "common/Error.hpp"
#include "common/Macros.hpp"

namespace octoflow {

struct Divisor {
  std::uint32_t multiplier = 1u << 31;
  std::uint32_t shift = 31;  // divides by 1

  // For every divisor from 1 to 2^31 - 1: l = ceil(log2 d), m = ceil(2^(31 + l) / d) (below 2^32,
  // and m d - 2^(31 + l) < d <= 2^l), so floor(n m / 2^(31 + l)) = floor(n / d) for n < 2^31.
  static Divisor of(std::uint32_t divisor) {
    if (divisor == 0 || divisor >= (1u << 31)) throw Error("Divisor: " + std::to_string(divisor) + " is outside 1 .. 2^31 - 1");
    std::uint32_t log2Ceiling = 0;
    while ((std::uint64_t{1} << log2Ceiling) < divisor) ++log2Ceiling;
    const std::uint64_t scale = std::uint64_t{1} << (31 + log2Ceiling);
    Divisor made;
    made.multiplier = static_cast<std::uint32_t>((scale + divisor - 1) / divisor);
    made.shift = 31 + log2Ceiling;
    return made;
  }

  // n / divisor, for n below 2^31.
  OCTO_HD OCTO_INLINE std::uint32_t divide(std::uint32_t n) const {
    return static_cast<std::uint32_t>((static_cast<std::uint64_t>(n) * multiplier) >> shift);
  }
};

// A flat index over the points of a list of cubes of side^3 points each (point order: x fastest),
// split into the cube's place in the list and the point's coordinates in it, with no division.
struct CubeIndexer {
  std::uint32_t side = 1, points = 1;
  Divisor byCube, byPlane, byRow;

  static CubeIndexer of(int side) {
    if (side < 1 || side > 1290) throw Error("CubeIndexer: a side of " + std::to_string(side) + " points");
    CubeIndexer made;
    made.side = static_cast<std::uint32_t>(side);
    made.points = made.side * made.side * made.side;
    made.byCube = Divisor::of(made.points);
    made.byPlane = Divisor::of(made.side * made.side);
    made.byRow = Divisor::of(made.side);
    return made;
  }

  // The place in the list of the cube that flat index `flat` lies in.
  OCTO_HD OCTO_INLINE std::uint32_t cube(std::uint32_t flat) const { return byCube.divide(flat); }

  // The coordinates of point `point` of a cube.
  OCTO_HD OCTO_INLINE void coordinates(std::uint32_t point, int (&x)[3]) const {
    const std::uint32_t z = byPlane.divide(point);
    const std::uint32_t y = byRow.divide(point - z * side * side);
    x[0] = static_cast<int>(point - (z * side + y) * side);
    x[1] = static_cast<int>(y);
    x[2] = static_cast<int>(z);
  }

  // Both: the cube's place in the list, and in x the coordinates of the point in it.
  OCTO_HD OCTO_INLINE std::uint32_t split(std::uint32_t flat, int (&x)[3]) const {
    const std::uint32_t at = cube(flat);
    coordinates(flat - at * points, x);
    return at;
  }
};

}  // namespace octoflow
