#pragma once
// Marching cubes on a node-centred scalar field: where the field crosses a value, one vertex on
// each grid edge it crosses, and triangles inside each cell joining them (Lorensen & Cline,
// SIGGRAPH 1987). The per-node and per-cell pieces here are the one source of both executions
// (IsosurfaceExtractor on the CPU and on the GPU).
//
// Vertices are named by their edge: the node the edge starts at and its axis (+x, +y or +z), so
// the two cells sharing an edge share its vertex and a closed surface comes out watertight. The
// case table is built here, not copied: each cell face contributes segments between the crossed
// edges of its border, chained into loops and fanned into triangles. A face whose diagonal
// corners are inside ("inside" = value >= the level) keeps those corners apart; both cells of a
// face see the same four values and so take the same choice, which is what makes the surface
// crack-free (the classic 1987 table was not).
#include <cmath>
#include <cstdint>

#include "common/Extent.hpp"

namespace octoflow::insitu {

// Cell corner c sits at offset (c & 1, (c >> 1) & 1, c >> 2) from the cell's first node.
// Cell edge e runs from corner kEdgeCorner[e] along axis kEdgeAxis[e].
constexpr int kCellEdgeCount = 12;
constexpr int kMaxTrianglesPerCell = 10;  // 12 crossed edges at most, loops of 3 or more
struct CellEdge {
  std::uint8_t corner;
  std::uint8_t axis;
};
OCTO_HD constexpr CellEdge cellEdge(int e) {
  // x edges of corners 0, 2, 4, 6; y edges of 0, 1, 4, 5; z edges of 0, 1, 2, 3
  constexpr std::uint8_t corners[kCellEdgeCount] = {0, 2, 4, 6, 0, 1, 4, 5, 0, 1, 2, 3};
  return CellEdge{corners[e], static_cast<std::uint8_t>(e / 4)};
}

// For each of the 256 inside/outside patterns of a cell's corners (bit c = corner c inside):
// how many triangles, and their corners as cell edges, wound counter-clockwise seen from the
// outside (the side where the field is below the level).
struct MarchingCubesTable {
  std::uint8_t triangleCount[256];
  std::uint8_t edges[256][3 * kMaxTrianglesPerCell];
};
const MarchingCubesTable& marchingCubesTable();

// Which of the node's three edges (+x, +y, +z; bit = axis) the level crosses: one end inside,
// the other not. Edges leaving the grid are not there.
OCTO_HD inline unsigned crossedEdges(const float* field, const Extent& e, Index i, Index j, Index k, float level) {
  const Index node = e.linear(i, j, k);
  const bool inside = field[node] >= level;
  unsigned mask = 0;
  if (i + 1 < e.nx && (field[node + 1] >= level) != inside) mask |= 1u;
  if (j + 1 < e.ny && (field[node + e.nx] >= level) != inside) mask |= 2u;
  if (k + 1 < e.nz && (field[node + e.nx * e.ny] >= level) != inside) mask |= 4u;
  return mask;
}

// The inside/outside pattern of the cell whose first node is (i, j, k) (all of i+1, j+1, k+1 in
// the grid).
OCTO_HD inline unsigned cellCase(const float* field, const Extent& e, Index i, Index j, Index k, float level) {
  const Index node = e.linear(i, j, k);
  const Index sx = 1, sy = e.nx, sz = e.nx * e.ny;
  unsigned pattern = 0;
  pattern |= (field[node] >= level) ? 1u : 0u;
  pattern |= (field[node + sx] >= level) ? 2u : 0u;
  pattern |= (field[node + sy] >= level) ? 4u : 0u;
  pattern |= (field[node + sx + sy] >= level) ? 8u : 0u;
  pattern |= (field[node + sz] >= level) ? 16u : 0u;
  pattern |= (field[node + sx + sz] >= level) ? 32u : 0u;
  pattern |= (field[node + sy + sz] >= level) ? 64u : 0u;
  pattern |= (field[node + sx + sy + sz] >= level) ? 128u : 0u;
  return pattern;
}

// The field's gradient at a node: central differences inside, one-sided at the grid's faces,
// per unit of node spacing.
OCTO_HD inline void nodeGradient(const float* field, const Extent& e, Index i, Index j, Index k, float (&gradient)[3]) {
  const Index position[3] = {i, j, k};
  const Index stride[3] = {1, e.nx, e.nx * e.ny};
  const Index node = e.linear(i, j, k);
  for (int axis = 0; axis < 3; ++axis) {
    const Index size = e.size(axis);
    if (size == 1) {
      gradient[axis] = 0.0f;
      continue;
    }
    const bool hasLower = position[axis] > 0, hasUpper = position[axis] + 1 < size;
    const float lower = field[hasLower ? node - stride[axis] : node];
    const float upper = field[hasUpper ? node + stride[axis] : node];
    gradient[axis] = (upper - lower) / static_cast<float>((hasLower ? 1 : 0) + (hasUpper ? 1 : 0));
  }
}

// Where grid geometry puts a node: origin + spacing * (i, j, k).
struct GridGeometry {
  float origin[3] = {0.0f, 0.0f, 0.0f};
  float spacing[3] = {1.0f, 1.0f, 1.0f};
};

// The vertex on the edge of node (i, j, k) along `axis`: its position (linear interpolation of
// the field to the level) and unit normal (the interpolated gradient, negated: it points out of
// the region where the field is at or above the level, the side the triangles face).
OCTO_HD inline void edgeVertex(const float* field, const Extent& e, const GridGeometry& geometry, Index i, Index j,
                               Index k, int axis, float level, float* position, float* normal) {
  const Index node = e.linear(i, j, k);
  const Index stride = axis == 0 ? 1 : (axis == 1 ? e.nx : e.nx * e.ny);
  const float start = field[node], end = field[node + stride];
  const float t = (level - start) / (end - start);  // the ends differ: one is inside, one is not
  const Index index[3] = {i, j, k};
  for (int a = 0; a < 3; ++a)
    position[a] = geometry.origin[a] + geometry.spacing[a] * (static_cast<float>(index[a]) + (a == axis ? t : 0.0f));
  float first[3], second[3];
  nodeGradient(field, e, i, j, k, first);
  nodeGradient(field, e, i + (axis == 0), j + (axis == 1), k + (axis == 2), second);
  float length2 = 0.0f;
  for (int a = 0; a < 3; ++a) {
    normal[a] = -((1.0f - t) * first[a] + t * second[a]) / geometry.spacing[a];
    length2 += normal[a] * normal[a];
  }
  const float inverse = length2 > 0.0f ? 1.0f / sqrtf(length2) : 0.0f;
  for (int a = 0; a < 3; ++a) normal[a] *= inverse;
}

// How many of a node's three edges a crossedEdges mask holds.
OCTO_HD inline std::int32_t edgeCount(unsigned mask) {
  return static_cast<std::int32_t>((mask & 1u) + ((mask >> 1) & 1u) + ((mask >> 2) & 1u));
}

// Number of the vertex on edge `axis` of a node whose crossed edges are `mask`, its vertices
// numbered from `first` in axis order.
OCTO_HD inline std::int32_t vertexOfEdge(std::int32_t first, unsigned mask, int axis) {
  return first + edgeCount(mask & ((1u << axis) - 1u));
}

}  // namespace octoflow::insitu

namespace octoflow::insitu {

// The triangles of the cell whose first node is (i, j, k), `pattern` its cellCase, as vertex
// numbers: a vertex is vertexFirst[node of its edge] plus its rank among that node's crossed
// edges. Writes 3 * table.triangleCount[pattern] numbers to `out`.
OCTO_HD inline void cellTriangles(const MarchingCubesTable& table, unsigned pattern, const float* field, const Extent& e,
                                  Index i, Index j, Index k, float level, const std::int32_t* vertexFirst,
                                  std::int32_t* out) {
  const int count = 3 * table.triangleCount[pattern];
  for (int n = 0; n < count; ++n) {
    const CellEdge edge = cellEdge(table.edges[pattern][n]);
    const Index ni = i + (edge.corner & 1), nj = j + ((edge.corner >> 1) & 1), nk = k + (edge.corner >> 2);
    const unsigned mask = crossedEdges(field, e, ni, nj, nk, level);
    out[n] = vertexOfEdge(vertexFirst[e.linear(ni, nj, nk)], mask, edge.axis);
  }
}

}  // namespace octoflow::insitu
