#include "geometry/Obstacle.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "common/Error.hpp"
#include "geometry/StlMesh.hpp"

namespace octoflow::geometry {
namespace {

std::string sourceOf(const ObstacleSpec& spec) { return spec.source.empty() ? std::string("obstacle") : spec.source; }

std::string formatNumber(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

void requireFinite(const ObstacleSpec& spec, const char* key, const std::array<double, 3>& values) {
  for (const double value : values)
    if (!std::isfinite(value))
      throw InputError(sourceOf(spec), key, "expected three finite numbers, got [" + formatNumber(values[0]) + ", " +
                                                formatNumber(values[1]) + ", " + formatNumber(values[2]) + "]");
}

void requirePositive(const ObstacleSpec& spec, const char* key, double value) {
  if (!(std::isfinite(value) && value > 0.0))
    throw InputError(sourceOf(spec), key, "expected a finite number > 0, got " + formatNumber(value));
}

// The nodes n with lower <= n <= upper, clipped to 0 .. count - 1; first > last when none. The
// bounds are clamped as doubles before the conversion, so huge values cannot overflow Index.
void nodeRange(double lower, double upper, Index count, Index& first, Index& last) {
  const double low = std::max(std::ceil(lower), 0.0);
  const double high = std::min(std::floor(upper), static_cast<double>(count - 1));
  if (!(low <= high)) {
    first = 0;
    last = -1;
    return;
  }
  first = static_cast<Index>(low);
  last = static_cast<Index>(high);
}

// Visits the nodes of the box [lower, upper] (clipped to the extent) that satisfy `inside`,
// marks them and counts them. The box is widened by one node on each side: a node that passes
// the exact test by rounding just outside the analytic bounding box is still visited, so the
// mask equals the test's verdict on every node of the extent.
template <typename Inside>
std::int64_t markWhere(const Extent& extent, const std::array<double, 3>& lower, const std::array<double, 3>& upper,
                       std::uint8_t* mask, Inside inside) {
  Index first[3];
  Index last[3];
  for (int axis = 0; axis < 3; ++axis) nodeRange(lower[axis] - 1.0, upper[axis] + 1.0, extent.size(axis), first[axis], last[axis]);
  std::int64_t marked = 0;
  for (Index k = first[2]; k <= last[2]; ++k)
    for (Index j = first[1]; j <= last[1]; ++j)
      for (Index i = first[0]; i <= last[0]; ++i)
        if (inside(static_cast<double>(i), static_cast<double>(j), static_cast<double>(k))) {
          mask[extent.linear(i, j, k)] = 1;
          ++marked;
        }
  return marked;
}

std::int64_t rasterizeSphere(const ObstacleSpec& spec, const Extent& extent, std::uint8_t* mask) {
  requireFinite(spec, "center", spec.center);
  requirePositive(spec, "radius", spec.radius);
  const auto& c = spec.center;
  const double r = spec.radius;
  const double r2 = r * r;
  return markWhere(extent, {c[0] - r, c[1] - r, c[2] - r}, {c[0] + r, c[1] + r, c[2] + r}, mask,
                   [&](double x, double y, double z) {
                     const double dx = x - c[0];
                     const double dy = y - c[1];
                     const double dz = z - c[2];
                     return dx * dx + dy * dy + dz * dz <= r2;
                   });
}

std::int64_t rasterizeCylinder(const ObstacleSpec& spec, const Extent& extent, std::uint8_t* mask) {
  requireFinite(spec, "center", spec.center);
  requirePositive(spec, "radius", spec.radius);
  if (spec.axis < 0 || spec.axis > 2)
    throw InputError(sourceOf(spec), "axis", "expected 0 (x), 1 (y) or 2 (z), got " + std::to_string(spec.axis));
  // The two axes across the cylinder, in increasing order.
  const int first = spec.axis == 0 ? 1 : 0;
  const int second = spec.axis == 2 ? 1 : 2;
  const auto& c = spec.center;
  const double r = spec.radius;
  const double r2 = r * r;
  std::array<double, 3> lower{c[0] - r, c[1] - r, c[2] - r};
  std::array<double, 3> upper{c[0] + r, c[1] + r, c[2] + r};
  // Infinite along its axis: the whole extent in that direction.
  lower[spec.axis] = 0.0;
  upper[spec.axis] = static_cast<double>(extent.size(spec.axis) - 1);
  return markWhere(extent, lower, upper, mask, [&](double x, double y, double z) {
    const double position[3] = {x, y, z};
    const double d1 = position[first] - c[first];
    const double d2 = position[second] - c[second];
    return d1 * d1 + d2 * d2 <= r2;
  });
}

std::int64_t rasterizeBox(const ObstacleSpec& spec, const Extent& extent, std::uint8_t* mask) {
  requireFinite(spec, "min", spec.min);
  requireFinite(spec, "max", spec.max);
  for (int axis = 0; axis < 3; ++axis)
    if (spec.min[axis] > spec.max[axis])
      throw InputError(sourceOf(spec), "min", "min must not exceed max on any axis; on axis " + std::to_string(axis) +
                                                   " min is " + formatNumber(spec.min[axis]) + " and max " +
                                                   formatNumber(spec.max[axis]));
  // Integer node coordinates against the bounds: ceil/floor give the inclusive range exactly.
  Index first[3];
  Index last[3];
  for (int axis = 0; axis < 3; ++axis) nodeRange(spec.min[axis], spec.max[axis], extent.size(axis), first[axis], last[axis]);
  std::int64_t marked = 0;
  for (Index k = first[2]; k <= last[2]; ++k)
    for (Index j = first[1]; j <= last[1]; ++j)
      for (Index i = first[0]; i <= last[0]; ++i) {
        mask[extent.linear(i, j, k)] = 1;
        ++marked;
      }
  return marked;
}

// A triangle seen along x: its corners in the y-z plane, their x, and the rows (j, k) of the
// extent whose rays may cross it (its y-z bounding box, one row wider on each side).
struct ProjectedTriangle {
  double x[3];
  double y[3];
  double z[3];
  Index jFirst, jLast, kFirst, kLast;
};

// The rays run along +x through (y, z) = (j, k) + this offset. Irrational multiples of a small
// step: no lattice-aligned vertex or edge of a mesh (cube faces at integers or half-integers,
// float32 coordinates) lies exactly on a ray, so the parity count never has to decide whether
// a ray through a shared edge or vertex crosses once or twice.
const double kRayOffsetY = 1e-7 * (1.0 + std::sqrt(2.0));
const double kRayOffsetZ = 1e-7 * (1.0 + std::sqrt(3.0));

// Twice the signed area of (a, b, p) in the y-z plane, evaluated with the edge's endpoints in a
// fixed (lexicographic) order whatever the triangle's orientation: the two triangles sharing an
// edge then see exactly opposite values, so a point near the edge falls in exactly one of them.
// A value of exactly 0 counts as positive in the fixed order, for the same reason.
struct EdgeSide {
  double value;   // in the triangle's own orientation
  bool positive;  // the side, with the tie rule above
};

EdgeSide edgeSide(double ay, double az, double by, double bz, double py, double pz) {
  const bool swapped = by < ay || (by == ay && bz < az);
  if (swapped) {
    std::swap(ay, by);
    std::swap(az, bz);
  }
  const double orient = (by - ay) * (pz - az) - (bz - az) * (py - ay);
  const bool positive = orient >= 0.0;
  return swapped ? EdgeSide{-orient, !positive} : EdgeSide{orient, positive};
}

// Where the ray through (py, pz) crosses the triangle, if it does: 2D barycentric coordinates
// in the y-z plane (the ray is parallel to x), then x interpolated from the corners.
bool crossing(const ProjectedTriangle& t, double py, double pz, double& x) {
  const EdgeSide e0 = edgeSide(t.y[1], t.z[1], t.y[2], t.z[2], py, pz);  // opposite corner 0
  const EdgeSide e1 = edgeSide(t.y[2], t.z[2], t.y[0], t.z[0], py, pz);  // opposite corner 1
  const EdgeSide e2 = edgeSide(t.y[0], t.z[0], t.y[1], t.z[1], py, pz);  // opposite corner 2
  if (e0.positive != e1.positive || e1.positive != e2.positive) return false;
  const double sum = e0.value + e1.value + e2.value;
  if (sum == 0.0) return false;
  x = (e0.value * t.x[0] + e1.value * t.x[1] + e2.value * t.x[2]) / sum;
  // Rounding must not carry the crossing outside the triangle.
  x = std::clamp(x, std::min({t.x[0], t.x[1], t.x[2]}), std::max({t.x[0], t.x[1], t.x[2]}));
  return true;
}

// Inside by ray parity (the Jordan curve theorem in 3D): a ray from a point crosses a closed
// surface an odd number of times exactly when the point is inside. For each row (j, k) one ray
// along +x collects all crossings; sorted, consecutive pairs enter and leave the solid, and the
// nodes between a pair are inside. Only rows crossed by some triangle's y-z bounding box are
// visited: triangles are swept slice by slice in k and bucketed by row j within a slice, so the
// work is the sum of the triangles' bounding-box rows plus the marked nodes.
std::int64_t rasterizeStl(const ObstacleSpec& spec, const Extent& extent, std::uint8_t* mask) {
  requirePositive(spec, "scale", spec.scale);
  requireFinite(spec, "translate", spec.translate);
  StlMesh mesh = StlMesh::load(spec.file);
  const std::size_t openEdges = detail::openEdgeCount(mesh.triangles());
  if (openEdges != 0)
    throw InputError(spec.file, "", "not watertight: " + std::to_string(openEdges) +
                                        " open edges (edges not shared by exactly two triangles), so inside and outside are undefined");

  std::vector<ProjectedTriangle> projected;
  projected.reserve(mesh.triangles().size());
  for (const Triangle& triangle : mesh.triangles()) {
    ProjectedTriangle t;
    for (int v = 0; v < 3; ++v) {
      t.x[v] = spec.scale * triangle.vertices[v][0] + spec.translate[0];
      t.y[v] = spec.scale * triangle.vertices[v][1] + spec.translate[1];
      t.z[v] = spec.scale * triangle.vertices[v][2] + spec.translate[2];
      if (!std::isfinite(t.x[v]) || !std::isfinite(t.y[v]) || !std::isfinite(t.z[v]))
        throw InputError(sourceOf(spec), "scale", "scaled and translated coordinates of " + spec.file + " overflow");
    }
    // A triangle parallel to x has no area seen along x; no generic ray crosses it.
    const double area = (t.y[1] - t.y[0]) * (t.z[2] - t.z[0]) - (t.z[1] - t.z[0]) * (t.y[2] - t.y[0]);
    if (area == 0.0) continue;
    const double yMin = std::min({t.y[0], t.y[1], t.y[2]}) - kRayOffsetY;
    const double yMax = std::max({t.y[0], t.y[1], t.y[2]}) - kRayOffsetY;
    const double zMin = std::min({t.z[0], t.z[1], t.z[2]}) - kRayOffsetZ;
    const double zMax = std::max({t.z[0], t.z[1], t.z[2]}) - kRayOffsetZ;
    // One row wider on each side than the bounding box: the exact test decides.
    nodeRange(std::floor(yMin), std::ceil(yMax), extent.ny, t.jFirst, t.jLast);
    nodeRange(std::floor(zMin), std::ceil(zMax), extent.nz, t.kFirst, t.kLast);
    if (t.jFirst > t.jLast || t.kFirst > t.kLast) continue;
    projected.push_back(t);
  }

  std::vector<std::size_t> byFirstSlice(projected.size());
  std::iota(byFirstSlice.begin(), byFirstSlice.end(), std::size_t{0});
  std::sort(byFirstSlice.begin(), byFirstSlice.end(),
            [&](std::size_t a, std::size_t b) { return projected[a].kFirst < projected[b].kFirst; });

  std::int64_t marked = 0;
  std::vector<std::size_t> active;               // triangles whose slices include k
  std::vector<std::size_t> rowStart(extent.ny + 1);  // per row j of the slice: its triangles
  std::vector<std::size_t> rowTriangles;
  std::vector<double> crossings;
  std::size_t next = 0;
  for (Index k = 0; k < extent.nz; ++k) {
    while (next < byFirstSlice.size() && projected[byFirstSlice[next]].kFirst <= k) active.push_back(byFirstSlice[next++]);
    active.erase(std::remove_if(active.begin(), active.end(), [&](std::size_t t) { return projected[t].kLast < k; }),
                 active.end());
    if (active.empty()) continue;

    // Bucket the slice's triangles by row (counting sort into one array).
    std::fill(rowStart.begin(), rowStart.end(), 0);
    for (const std::size_t t : active)
      for (Index j = projected[t].jFirst; j <= projected[t].jLast; ++j) ++rowStart[j + 1];
    for (Index j = 0; j < extent.ny; ++j) rowStart[j + 1] += rowStart[j];
    rowTriangles.resize(rowStart[extent.ny]);
    {
      std::vector<std::size_t> fill(rowStart.begin(), rowStart.end() - 1);
      for (const std::size_t t : active)
        for (Index j = projected[t].jFirst; j <= projected[t].jLast; ++j) rowTriangles[fill[j]++] = t;
    }

    const double pz = static_cast<double>(k) + kRayOffsetZ;
    for (Index j = 0; j < extent.ny; ++j) {
      if (rowStart[j] == rowStart[j + 1]) continue;
      const double py = static_cast<double>(j) + kRayOffsetY;
      crossings.clear();
      for (std::size_t at = rowStart[j]; at < rowStart[j + 1]; ++at) {
        double x;
        if (crossing(projected[rowTriangles[at]], py, pz, x)) crossings.push_back(x);
      }
      if (crossings.size() % 2 != 0)
        throw InputError(spec.file, "", "surface not closed along the ray y = " + std::to_string(j) + ", z = " +
                                            std::to_string(k) + " (in lattice nodes): " + std::to_string(crossings.size()) +
                                            " crossings, an odd number");
      std::sort(crossings.begin(), crossings.end());
      for (std::size_t pair = 0; pair < crossings.size(); pair += 2) {
        Index first;
        Index last;
        nodeRange(crossings[pair], crossings[pair + 1], extent.nx, first, last);
        for (Index i = first; i <= last; ++i) mask[extent.linear(i, j, k)] = 1;
        marked += last >= first ? last - first + 1 : 0;
      }
    }
  }
  return marked;
}

}  // namespace

std::int64_t rasterize(const ObstacleSpec& spec, const Extent& extent, std::uint8_t* mask) {
  switch (spec.kind) {
    case ShapeKind::Sphere:
      return rasterizeSphere(spec, extent, mask);
    case ShapeKind::Cylinder:
      return rasterizeCylinder(spec, extent, mask);
    case ShapeKind::Box:
      return rasterizeBox(spec, extent, mask);
    case ShapeKind::Stl:
      return rasterizeStl(spec, extent, mask);
  }
  throw InputError(sourceOf(spec), "kind", "unknown obstacle kind");
}

ObstacleSpec transformed(const ObstacleSpec& spec, double scale, const std::array<double, 3>& shift) {
  ObstacleSpec out = spec;
  const auto map = [&](const std::array<double, 3>& point) {
    return std::array<double, 3>{scale * point[0] + shift[0], scale * point[1] + shift[1], scale * point[2] + shift[2]};
  };
  out.center = map(spec.center);
  out.radius = scale * spec.radius;
  out.min = map(spec.min);
  out.max = map(spec.max);
  out.scale = scale * spec.scale;        // stl: x' = scale (s x + t) + shift
  out.translate = map(spec.translate);
  return out;
}

}  // namespace octoflow::geometry
