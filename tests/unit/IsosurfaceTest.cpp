// Marching cubes on the CPU (the reference of the GPU extraction): the case table, closed and
// consistently wound surfaces even through ambiguous faces, and a sphere's area and volume.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "SurfaceChecks.hpp"
#include "insitu/Isosurface.hpp"

using namespace octoflow;
using namespace octoflow::insitu;
using octoflow::testing::measureSurface;
using octoflow::testing::SurfaceMeasures;

namespace {

std::vector<float> sphereField(const Extent& e, const double (&centre)[3], double radius, double width) {
  std::vector<float> phi(static_cast<std::size_t>(e.cellCount()));
  for (Index k = 0; k < e.nz; ++k)
    for (Index j = 0; j < e.ny; ++j)
      for (Index i = 0; i < e.nx; ++i)
        phi[e.linear(i, j, k)] = octoflow::testing::spherePhi(i, j, k, centre, radius, width);
  return phi;
}

}  // namespace

// Every pattern's triangles use exactly the edges whose two corners differ.
TEST(MarchingCubes, EveryPatternUsesExactlyTheCrossedEdges) {
  const MarchingCubesTable& table = marchingCubesTable();
  EXPECT_EQ(table.triangleCount[0], 0);
  EXPECT_EQ(table.triangleCount[255], 0);
  for (unsigned pattern = 0; pattern < 256; ++pattern) {
    unsigned used = 0;
    for (int n = 0; n < 3 * table.triangleCount[pattern]; ++n) used |= 1u << table.edges[pattern][n];
    unsigned crossed = 0;
    for (int e = 0; e < kCellEdgeCount; ++e) {
      const CellEdge edge = cellEdge(e);
      const int other = edge.corner | (1 << edge.axis);
      if (((pattern >> edge.corner) & 1u) != ((pattern >> other) & 1u)) crossed |= 1u << e;
    }
    EXPECT_EQ(used, crossed) << "pattern " << pattern;
  }
}

// No triangle lies flat in a cell face (the cell across that face could lay the same one, and
// the surface would fold): the three edges of a triangle never share a face.
TEST(MarchingCubes, NoTriangleLiesInACellFace) {
  const MarchingCubesTable& table = marchingCubesTable();
  const auto faces = [](int e) {
    const CellEdge edge = cellEdge(e);
    unsigned bits = 0;
    for (int axis = 0; axis < 3; ++axis)
      if (axis != edge.axis) bits |= 1u << (2 * axis + ((edge.corner >> axis) & 1));
    return bits;
  };
  for (unsigned pattern = 0; pattern < 256; ++pattern)
    for (int t = 0; t < table.triangleCount[pattern]; ++t) {
      const std::uint8_t* v = table.edges[pattern] + 3 * t;
      EXPECT_EQ(faces(v[0]) & faces(v[1]) & faces(v[2]), 0u) << "pattern " << pattern << " triangle " << t;
    }
}

// A sphere of radius 10 nodes: one closed surface (Euler number 2), every edge used once each
// way, triangles facing out (positive volume), normals pointing away from the centre, area and
// volume of the sphere to within the discretisation (1 %: linear interpolation across a tanh
// profile 2 nodes wide puts the vertices ~0.1 node off the exact sphere).
TEST(Isosurface, SphereIsClosedFacesOutwardAndHasTheSpheresAreaAndVolume) {
  const Extent e{32, 30, 28};
  const double centre[3] = {15.3, 14.6, 13.9}, radius = 10.0;
  const std::vector<float> phi = sphereField(e, centre, radius, 2.0);
  auto extractor = IsosurfaceExtractor::create(exec::Backend::Cpu);
  const Surface s = extractor->extract(ScalarFieldView{phi.data(), e, {}}, 0.5f);
  ASSERT_GT(s.triangleCount, 1000);
  const SurfaceMeasures m = measureSurface(s);
  EXPECT_EQ(m.openEdges, 0);
  EXPECT_EQ(m.repeatedEdges, 0);
  EXPECT_EQ(m.eulerNumber, 2);
  const double pi = std::acos(-1.0);
  EXPECT_NEAR(m.area / (4.0 * pi * radius * radius), 1.0, 0.01);
  EXPECT_NEAR(m.volume / (4.0 / 3.0 * pi * radius * radius * radius), 1.0, 0.01);
  for (Index v = 0; v < s.pointCount; ++v) {
    const float* p = s.points + 3 * v;
    const float* n = s.normals + 3 * v;
    const double out[3] = {p[0] - centre[0], p[1] - centre[1], p[2] - centre[2]};
    const double r = std::sqrt(out[0] * out[0] + out[1] * out[1] + out[2] * out[2]);
    EXPECT_NEAR(r, radius, 0.15) << "vertex " << v;
    EXPECT_NEAR(n[0] * n[0] + n[1] * n[1] + n[2] * n[2], 1.0, 1e-5);
    EXPECT_GT((n[0] * out[0] + n[1] * out[1] + n[2] * out[2]) / r, 0.99) << "vertex " << v;
  }
}

// Grid geometry scales and shifts the surface: spacing h multiplies the area by h^2.
TEST(Isosurface, GridGeometryPlacesTheSurface) {
  const Extent e{20, 20, 20};
  const double centre[3] = {9.5, 9.5, 9.5};
  const std::vector<float> phi = sphereField(e, centre, 6.0, 1.5);
  auto extractor = IsosurfaceExtractor::create(exec::Backend::Cpu);
  const SurfaceMeasures unit = measureSurface(extractor->extract(ScalarFieldView{phi.data(), e, {}}, 0.5f));
  GridGeometry geometry{{1.0f, -2.0f, 3.0f}, {0.5f, 0.5f, 0.5f}};
  const Surface scaled = extractor->extract(ScalarFieldView{phi.data(), e, geometry}, 0.5f);
  const SurfaceMeasures m = measureSurface(scaled);
  EXPECT_NEAR(m.area, 0.25 * unit.area, 1e-6 * unit.area);
  EXPECT_NEAR(m.volume, 0.125 * unit.volume, 1e-6 * unit.volume);
  double mean[3] = {0.0, 0.0, 0.0};
  for (Index v = 0; v < scaled.pointCount; ++v)
    for (int a = 0; a < 3; ++a) mean[a] += scaled.points[3 * v + a] / static_cast<double>(scaled.pointCount);
  for (int a = 0; a < 3; ++a) EXPECT_NEAR(mean[a], geometry.origin[a] + 0.5 * 9.5, 0.05) << "axis " << a;
}

// Random values (every ambiguous face and cell pattern occurs) inside a layer below the level:
// the surfaces are closed, so every edge must be used once each way, whatever the patterns.
TEST(Isosurface, RandomFieldGivesClosedConsistentlyWoundSurfaces) {
  const Extent e{18, 17, 16};
  std::mt19937 random(20261122);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  std::vector<float> field(static_cast<std::size_t>(e.cellCount()));
  for (Index k = 0; k < e.nz; ++k)
    for (Index j = 0; j < e.ny; ++j)
      for (Index i = 0; i < e.nx; ++i) {
        const bool border = i == 0 || j == 0 || k == 0 || i + 1 == e.nx || j + 1 == e.ny || k + 1 == e.nz;
        field[e.linear(i, j, k)] = border ? 0.0f : uniform(random);
      }
  auto extractor = IsosurfaceExtractor::create(exec::Backend::Cpu);
  const Surface s = extractor->extract(ScalarFieldView{field.data(), e, {}}, 0.5f);
  ASSERT_GT(s.triangleCount, 5000);
  const SurfaceMeasures m = measureSurface(s);
  EXPECT_EQ(m.openEdges, 0);
  EXPECT_EQ(m.repeatedEdges, 0);
  EXPECT_GT(m.volume, 0.0);
}

// No crossing, no surface; a field with no cells (2D) has no surface either.
TEST(Isosurface, FieldsWithoutCrossingsGiveEmptySurfaces) {
  auto extractor = IsosurfaceExtractor::create(exec::Backend::Cpu);
  const Extent e{8, 8, 8};
  std::vector<float> flat(static_cast<std::size_t>(e.cellCount()), 0.25f);
  EXPECT_EQ(extractor->extract(ScalarFieldView{flat.data(), e, {}}, 0.5f).triangleCount, 0);
  const Extent plane{8, 8, 1};
  std::vector<float> ramp(64);
  for (int n = 0; n < 64; ++n) ramp[n] = static_cast<float>(n % 8) / 7.0f;
  const Surface s = extractor->extract(ScalarFieldView{ramp.data(), plane, {}}, 0.5f);
  EXPECT_EQ(s.triangleCount, 0);
}
