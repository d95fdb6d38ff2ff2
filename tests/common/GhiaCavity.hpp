#pragma once
// The lid-driven cavity's centre lines against Ghia, Ghia & Shin (1982)
// (data/reference/ghia1982_*.csv; column 1: Re = 100, 2: Re = 1000), for any solver whose n x n
// output nodes sit at the cell centres ((i + 1/2) / n, (j + 1/2) / n) of the unit square.
#include <algorithm>
#include <cmath>
#include <functional>

#include "TestSupport.hpp"

namespace octoflow::testing {

struct CavityErrors {
  double maxU = 0.0;  // largest |u_ours - u_Ghia| / U_lid on the vertical centre line
  double maxV = 0.0;  // largest |v_ours - v_Ghia| / U_lid on the horizontal centre line
};

// `velocity` holds xyz per node, x fastest; velocities are divided by `lid`.
inline CavityErrors compareWithGhia(int n, const float* velocity, double lid, int column) {
  auto u = [&](int i, int j) { return velocity[3 * (i + n * j)] / lid; };
  auto v = [&](int i, int j) { return velocity[3 * (i + n * j) + 1] / lid; };
  // The centre lines x = 1/2 and y = 1/2 fall between nodes n/2 - 1 and n/2 (n even): the mean of
  // the two, interpolated linearly along the line.
  auto sample = [&](double position, const std::function<double(int, int)>& component, bool alongY) {
    const double s = position * n - 0.5;
    const int below = std::clamp(static_cast<int>(std::floor(s)), 0, n - 2);
    const double t = s - below;
    auto centre = [&](int along) {
      return alongY ? 0.5 * (component(n / 2 - 1, along) + component(n / 2, along))
                    : 0.5 * (component(along, n / 2 - 1) + component(along, n / 2));
    };
    return (1.0 - t) * centre(below) + t * centre(below + 1);
  };
  CavityErrors errors;
  for (const auto& row : readReferenceTable("ghia1982_u_vertical_centerline.csv")) {
    if (row[0] <= 0.0 || row[0] >= 1.0) continue;  // the wall values themselves
    errors.maxU = std::max(errors.maxU, std::abs(sample(row[0], u, true) - row[column]));
  }
  for (const auto& row : readReferenceTable("ghia1982_v_horizontal_centerline.csv")) {
    if (row[0] <= 0.0 || row[0] >= 1.0) continue;
    errors.maxV = std::max(errors.maxV, std::abs(sample(row[0], v, false) - row[column]));
  }
  return errors;
}

}  // namespace octoflow::testing
