#pragma once
// What dendrite.csv reports of a phi field (host memory, the whole grid): the solid fraction, the
// interface area and the tip positions along each axis from the nucleus centre.
#include <array>

#include "common/Extent.hpp"

namespace octoflow::phasefield {

struct DendriteMetrics {
  double solidFraction = 0.0;  // mean of phi clamped to [0, 1]
  // Sum of |grad phi| (central differences) over the nodes: the diffuse interface's area in
  // nodes^2 (3D) or length in nodes (2D), as phi goes from 0 to 1 across it.
  double interfaceArea = 0.0;
  // Distance (nodes) from the nucleus centre to the furthest phi = 0.5 crossing along +x, +y, +z on
  // the grid line through the centre (nearest node line), linearly interpolated between nodes; NaN
  // where the line holds no solid.
  std::array<double, 3> tip{};
};

DendriteMetrics measureDendrite(const float* phi, const Extent& extent, int dimensions,
                                const std::array<double, 3>& centre);

// The Karma-Rappel free energy F = sum over nodes of h^d (W(n)^2 |grad psi|^2 / 2 + f(psi, U)),
// f = -psi^2/2 + psi^4/4 + lambda U psi (1 - 2 psi^2 / 3 + psi^4 / 5), psi = 2 phi - 1 (centred
// differences; dimensionless, W0 = 1): PFHub benchmark 3's free_energy.
double karmaRappelFreeEnergy(const float* phi, const float* u, const Extent& extent, int dimensions, double h,
                             double anisotropy, double coupling);

}  // namespace octoflow::phasefield
