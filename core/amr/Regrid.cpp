#include "amr/Regrid.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "exec/cpu/HostThreads.hpp"

namespace octoflow::amr {

namespace {

// d value / d axis at local point x of a block by central differences (one-sided on the block's
// faces), or false where a point it needs is solid.
bool derivative(const float* block, const std::uint8_t* solid, int B, const int (&x)[3], int axis, int component,
                double& out) {
  int lower[3] = {x[0], x[1], x[2]}, upper[3] = {x[0], x[1], x[2]};
  lower[axis] = std::max(x[axis] - 1, 0);
  upper[axis] = std::min(x[axis] + 1, B - 1);
  const std::size_t a = static_cast<std::size_t>(lower[0] + B * (lower[1] + B * lower[2]));
  const std::size_t b = static_cast<std::size_t>(upper[0] + B * (upper[1] + B * upper[2]));
  if (solid && (solid[a] || solid[b])) return false;
  out = (static_cast<double>(block[3 * b + static_cast<std::size_t>(component)]) -
         static_cast<double>(block[3 * a + static_cast<std::size_t>(component)])) /
        static_cast<double>(upper[axis] - lower[axis]);
  return true;
}

}  // namespace

std::vector<double> blockIndicator(int blockNodes, std::size_t blocks, RegridCriterion criterion, const float* values,
                                   int components, const std::uint8_t* solid) {
  if (criterion == RegridCriterion::Vorticity && components != 3)
    throw std::invalid_argument("the vorticity criterion needs a velocity (3 components)");
  const int B = blockNodes;
  const std::size_t points = static_cast<std::size_t>(B) * static_cast<std::size_t>(B) * static_cast<std::size_t>(B);
  std::vector<double> indicator(blocks, 0.0);
  // On the host's threads, a block at a time (each value its block's alone: the same on any number).
  exec::forEachOnHostThreads(static_cast<Index>(blocks), [&](Index index) {
    const std::size_t block = static_cast<std::size_t>(index);
    const float* own = values + block * points * static_cast<std::size_t>(components);
    const std::uint8_t* ownSolid = solid ? solid + block * points : nullptr;
    double largest = 0.0;
    for (int k = 0; k < B; ++k)
      for (int j = 0; j < B; ++j)
        for (int i = 0; i < B; ++i) {
          const std::size_t n = static_cast<std::size_t>(i + B * (j + B * k));
          if (ownSolid && ownSolid[n]) continue;
          double value = 0.0;
          if (criterion == RegridCriterion::Vorticity) {
            const int x[3] = {i, j, k};
            double d[3][3];  // d[axis][component]
            bool fluid = true;
            for (int axis = 0; axis < 3 && fluid; ++axis)
              for (int component = 0; component < 3 && fluid; ++component)
                if (axis != component) fluid = derivative(own, ownSolid, B, x, axis, component, d[axis][component]);
            if (!fluid) continue;
            const double curl[3] = {d[1][2] - d[2][1], d[2][0] - d[0][2], d[0][1] - d[1][0]};
            value = std::sqrt(curl[0] * curl[0] + curl[1] * curl[1] + curl[2] * curl[2]);
          } else {
            double square = 0.0;
            for (int c = 0; c < components; ++c) {
              const double v = own[n * static_cast<std::size_t>(components) + static_cast<std::size_t>(c)];
              square += v * v;
            }
            value = components == 1 ? own[n] : std::sqrt(square);
          }
          largest = std::max(largest, value);
        }
    indicator[block] = largest;
  });
  return indicator;
}

std::vector<LeafChange> regridChanges(const std::vector<double>& indicator, const RegridSettings& settings) {
  const double coarsenBelow = settings.coarseningThreshold();
  std::vector<LeafChange> changes(indicator.size(), LeafChange::Keep);
  for (std::size_t n = 0; n < indicator.size(); ++n) {
    if (indicator[n] > settings.threshold)
      changes[n] = LeafChange::Refine;
    else if (indicator[n] < coarsenBelow)
      changes[n] = LeafChange::Coarsen;
  }
  return changes;
}

}  // namespace octoflow::amr
