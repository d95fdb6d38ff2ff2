#include "insitu/MarchingCubes.hpp"

#include <array>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace octoflow::insitu {
namespace {

using Point = std::array<float, 3>;

Point cornerPoint(int corner) {
  return {static_cast<float>(corner & 1), static_cast<float>((corner >> 1) & 1), static_cast<float>(corner >> 2)};
}

Point edgeMidpoint(int edge) {
  const CellEdge cell = cellEdge(edge);
  Point p = cornerPoint(cell.corner);
  p[cell.axis] += 0.5f;
  return p;
}

Point cross(const Point& a, const Point& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
Point minus(const Point& a, const Point& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
float dot(const Point& a, const Point& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

// The cell edge joining two corners that differ along one axis.
int edgeBetween(int first, int second) {
  const int low = first < second ? first : second;
  const int axis = (first ^ second) == 1 ? 0 : ((first ^ second) == 2 ? 1 : 2);
  for (int e = 0; e < kCellEdgeCount; ++e)
    if (cellEdge(e).corner == low && cellEdge(e).axis == axis) return e;
  throw std::logic_error("marching cubes: corners " + std::to_string(first) + ", " + std::to_string(second) +
                         " share no edge");
}

// The six faces' corners, counter-clockwise seen from outside the cell.
std::array<std::array<int, 4>, 6> facesCounterClockwise() {
  std::array<std::array<int, 4>, 6> faces{};
  for (int axis = 0; axis < 3; ++axis)
    for (int side = 0; side < 2; ++side) {
      const int b = (axis + 1) % 3, c = (axis + 2) % 3;
      const int square[4][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};  // (b, c) around the face
      std::array<int, 4> corners{};
      for (int n = 0; n < 4; ++n) corners[n] = (side << axis) | (square[n][0] << b) | (square[n][1] << c);
      Point outward{0.0f, 0.0f, 0.0f};
      outward[axis] = side ? 1.0f : -1.0f;
      const Point p0 = cornerPoint(corners[0]), p1 = cornerPoint(corners[1]), p2 = cornerPoint(corners[2]);
      if (dot(cross(minus(p1, p0), minus(p2, p1)), outward) < 0.0f) std::swap(corners[1], corners[3]);
      faces[2 * axis + side] = corners;
    }
  return faces;
}

// Bit f set for each cell face f (2 axis + side) the edge lies on.
unsigned edgeFaces(int edge) {
  const CellEdge cell = cellEdge(edge);
  unsigned faces = 0;
  for (int axis = 0; axis < 3; ++axis)
    if (axis != cell.axis) faces |= 1u << (2 * axis + ((cell.corner >> axis) & 1));
  return faces;
}

// A loop may run through one face twice (an ambiguous face whose inside corners connect through
// the cell). A fan from a vertex on that face would lay a triangle flat in it, which the cell on
// the other side can lay too: the surface would fold there. The fan's apex is therefore a loop
// vertex sharing no face with any vertex but its two neighbours, so every diagonal crosses the
// cell's inside.
std::size_t fanApex(const std::vector<int>& loop, unsigned pattern) {
  const std::size_t n = loop.size();
  for (std::size_t apex = 0; apex < n; ++apex) {
    bool clear = true;
    for (std::size_t step = 2; step + 1 < n && clear; ++step)
      clear = (edgeFaces(loop[apex]) & edgeFaces(loop[(apex + step) % n])) == 0;
    if (clear) return apex;
  }
  throw std::logic_error("marching cubes: no fan apex off the faces in pattern " + std::to_string(pattern));
}

// The triangles of one pattern as cell edges. On each face, a run of inside corners (in
// counter-clockwise order) is cut off by a segment from the edge where the run is left to the
// edge where it was entered; every crossed edge is left on one of its two faces and entered on
// the other, so the segments chain into closed loops, each fanned into triangles.
std::vector<std::array<int, 3>> patternTriangles(unsigned pattern, const std::array<std::array<int, 4>, 6>& faces) {
  std::array<int, kCellEdgeCount> next;
  next.fill(-1);
  for (const auto& face : faces) {
    const auto inside = [&](int n) { return ((pattern >> face[(n + 4) % 4]) & 1u) != 0; };
    for (int n = 0; n < 4; ++n) {
      if (!inside(n) || inside(n + 1)) continue;
      int first = n;  // the run's first corner
      while (inside(first - 1)) first = (first + 3) % 4;
      const int leaving = edgeBetween(face[n], face[(n + 1) % 4]);
      const int entering = edgeBetween(face[(first + 3) % 4], face[first]);
      next[leaving] = entering;
    }
  }
  std::vector<std::array<int, 3>> triangles;
  std::array<bool, kCellEdgeCount> used{};
  for (int start = 0; start < kCellEdgeCount; ++start) {
    if (next[start] < 0 || used[start]) continue;
    std::vector<int> loop;
    for (int e = start; !used[e]; e = next[e]) {
      used[e] = true;
      loop.push_back(e);
      if (next[e] < 0) throw std::logic_error("marching cubes: an open loop in pattern " + std::to_string(pattern));
    }
    const std::size_t apex = fanApex(loop, pattern), size = loop.size();
    for (std::size_t n = 1; n + 1 < size; ++n)
      triangles.push_back({loop[apex], loop[(apex + n) % size], loop[(apex + n + 1) % size]});
  }
  return triangles;
}

MarchingCubesTable buildTable() {
  const auto faces = facesCounterClockwise();
  // The loops' turning sense fixed above must face the triangles away from the inside corners:
  // corner 0 alone inside must give a triangle facing +(1, 1, 1).
  const auto single = patternTriangles(1u, faces);
  const Point a = edgeMidpoint(single[0][0]), b = edgeMidpoint(single[0][1]), c = edgeMidpoint(single[0][2]);
  const bool flip = dot(cross(minus(b, a), minus(c, a)), Point{1.0f, 1.0f, 1.0f}) < 0.0f;
  MarchingCubesTable table{};
  for (unsigned pattern = 0; pattern < 256; ++pattern) {
    const auto triangles = patternTriangles(pattern, faces);
    if (triangles.size() > static_cast<std::size_t>(kMaxTrianglesPerCell))
      throw std::logic_error("marching cubes: too many triangles in pattern " + std::to_string(pattern));
    table.triangleCount[pattern] = static_cast<std::uint8_t>(triangles.size());
    for (std::size_t t = 0; t < triangles.size(); ++t) {
      table.edges[pattern][3 * t + 0] = static_cast<std::uint8_t>(triangles[t][0]);
      table.edges[pattern][3 * t + 1] = static_cast<std::uint8_t>(triangles[t][flip ? 2 : 1]);
      table.edges[pattern][3 * t + 2] = static_cast<std::uint8_t>(triangles[t][flip ? 1 : 2]);
    }
  }
  return table;
}

}  // namespace

const MarchingCubesTable& marchingCubesTable() {
  static const MarchingCubesTable table = buildTable();
  return table;
}

}  // namespace octoflow::insitu
