#pragma once
// Properties of an extracted triangle surface that tests assert: closed and consistently wound
// (every edge used once in each direction), its area and enclosed volume, its Euler number.
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <utility>

#include "insitu/Isosurface.hpp"

namespace octoflow::testing {

inline std::array<double, 3> surfacePoint(const insitu::Surface& s, std::int32_t v) {
  return {s.points[3 * v], s.points[3 * v + 1], s.points[3 * v + 2]};
}

struct SurfaceMeasures {
  double area = 0.0;
  double volume = 0.0;         // divergence theorem: positive when the triangles face outward
  long long openEdges = 0;     // directed edges without their opposite
  long long repeatedEdges = 0; // directed edges used more than once (a fold or a wrong winding)
  long long edges = 0;         // undirected
  long long eulerNumber = 0;   // V - E + F (2 for a sphere)
};

inline SurfaceMeasures measureSurface(const insitu::Surface& s) {
  SurfaceMeasures m;
  std::map<std::pair<std::int32_t, std::int32_t>, int> directed;
  for (Index t = 0; t < s.triangleCount; ++t) {
    const std::int32_t* v = s.triangles + 3 * t;
    const auto a = surfacePoint(s, v[0]), b = surfacePoint(s, v[1]), c = surfacePoint(s, v[2]);
    const double ab[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, ac[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    const double n[3] = {ab[1] * ac[2] - ab[2] * ac[1], ab[2] * ac[0] - ab[0] * ac[2], ab[0] * ac[1] - ab[1] * ac[0]};
    m.area += 0.5 * std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    m.volume += (a[0] * n[0] + a[1] * n[1] + a[2] * n[2]) / 6.0;
    for (int e = 0; e < 3; ++e) ++directed[{v[e], v[(e + 1) % 3]}];
  }
  for (const auto& [edge, count] : directed) {
    if (count > 1) m.repeatedEdges += count - 1;
    if (!directed.count({edge.second, edge.first})) ++m.openEdges;
    if (edge.first < edge.second || !directed.count({edge.second, edge.first})) ++m.edges;
  }
  m.eulerNumber = s.pointCount - m.edges + s.triangleCount;
  return m;
}

// phi of a diffuse sphere (1 inside, 0 outside, interface width `width` nodes), as the phase
// field has it; phi = 0.5 on the sphere of `radius` about `centre`.
inline float spherePhi(double x, double y, double z, const double (&centre)[3], double radius, double width) {
  const double r = std::sqrt((x - centre[0]) * (x - centre[0]) + (y - centre[1]) * (y - centre[1]) +
                             (z - centre[2]) * (z - centre[2]));
  return static_cast<float>(0.5 * (1.0 + std::tanh((radius - r) / width)));
}

}  // namespace octoflow::testing
