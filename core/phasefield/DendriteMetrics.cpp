#include "phasefield/DendriteMetrics.hpp"

#include <algorithm>
#include <cmath>

namespace octoflow::phasefield {

namespace {

// A field's value at a node, coordinates clamped into the grid (centred differences at its faces).
double clampedValue(const float* field, const Extent& e, Index x, Index y, Index z) {
  x = std::clamp<Index>(x, 0, e.nx - 1);
  y = std::clamp<Index>(y, 0, e.ny - 1);
  z = std::clamp<Index>(z, 0, e.nz - 1);
  return static_cast<double>(field[e.linear(x, y, z)]);
}

}  // namespace

DendriteMetrics measureDendrite(const float* phi, const Extent& e, int dimensions, const std::array<double, 3>& centre) {
  DendriteMetrics m;
  double solid = 0.0, area = 0.0;
  // Sums in double over a fixed order of rows: the same on every run and thread count.
#pragma omp parallel for collapse(2) reduction(+ : solid, area) schedule(static)
  for (Index k = 0; k < e.nz; ++k)
    for (Index j = 0; j < e.ny; ++j)
      for (Index i = 0; i < e.nx; ++i) {
        const auto at = [&](Index x, Index y, Index z) { return clampedValue(phi, e, x, y, z); };
        solid += std::clamp(at(i, j, k), 0.0, 1.0);
        const double gx = 0.5 * (at(i + 1, j, k) - at(i - 1, j, k)), gy = 0.5 * (at(i, j + 1, k) - at(i, j - 1, k));
        const double gz = dimensions == 3 ? 0.5 * (at(i, j, k + 1) - at(i, j, k - 1)) : 0.0;
        area += std::sqrt(gx * gx + gy * gy + gz * gz);
      }
  m.solidFraction = solid / static_cast<double>(e.cellCount());
  m.interfaceArea = area;
  Index line[3];
  for (int axis = 0; axis < 3; ++axis)
    line[axis] = std::clamp<Index>(static_cast<Index>(std::lround(centre[axis])), 0, e.size(axis) - 1);
  for (int axis = 0; axis < 3; ++axis) {
    m.tip[axis] = NAN;
    if (axis >= dimensions) continue;
    const Index n = e.size(axis);
    const auto value = [&](Index s) {
      Index p[3] = {line[0], line[1], line[2]};
      p[axis] = s;
      return static_cast<double>(phi[e.linear(p[0], p[1], p[2])]);
    };
    // The furthest node from the centre along +axis that is solid (phi >= 0.5).
    for (Index s = n - 1; s >= line[axis]; --s) {
      if (value(s) < 0.5) continue;
      double position = static_cast<double>(s);
      if (s + 1 < n) position += (value(s) - 0.5) / (value(s) - value(s + 1));
      m.tip[axis] = position - centre[axis];
      break;
    }
  }
  return m;
}

double karmaRappelFreeEnergy(const float* phi, const float* u, const Extent& e, int dimensions, double h,
                             double anisotropy, double coupling) {
  double energy = 0.0;
#pragma omp parallel for collapse(2) reduction(+ : energy) schedule(static)
  for (Index k = 0; k < e.nz; ++k)
    for (Index j = 0; j < e.ny; ++j)
      for (Index i = 0; i < e.nx; ++i) {
        const auto psi = [&](Index x, Index y, Index z) { return 2.0 * clampedValue(phi, e, x, y, z) - 1.0; };
        const double gx = psi(i + 1, j, k) - psi(i - 1, j, k), gy = psi(i, j + 1, k) - psi(i, j - 1, k);
        const double gz = dimensions == 3 ? psi(i, j, k + 1) - psi(i, j, k - 1) : 0.0;
        const double g2 = gx * gx + gy * gy + gz * gz;
        double a = 1.0;
        if (g2 > 1e-20)
          a = 1.0 - 3.0 * anisotropy + 4.0 * anisotropy * (gx * gx * gx * gx + gy * gy * gy * gy + gz * gz * gz * gz) / (g2 * g2);
        const double p = psi(i, j, k), p2 = p * p, U = static_cast<double>(u[e.linear(i, j, k)]);
        const double bulk = -0.5 * p2 + 0.25 * p2 * p2 + coupling * U * p * (1.0 - 2.0 * p2 / 3.0 + p2 * p2 / 5.0);
        energy += 0.5 * a * a * g2 / (4.0 * h * h) + bulk;
      }
  return energy * std::pow(h, dimensions);
}

}  // namespace octoflow::phasefield
