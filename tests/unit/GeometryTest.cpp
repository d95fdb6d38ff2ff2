// Obstacles: analytic shapes mark exactly the lattice points inside them, STL files load in both
// encodings, ray-parity rasterisation agrees with the analytic shapes, and bad files are named.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "TestSupport.hpp"
#include "common/Error.hpp"
#include "geometry/Obstacle.hpp"
#include "geometry/StlMesh.hpp"

using namespace octoflow;
using geometry::ObstacleSpec;
using geometry::ShapeKind;
using geometry::StlMesh;
using geometry::Triangle;
using Vector = std::array<double, 3>;

namespace {

constexpr double kPi = 3.14159265358979323846;

// The twelve triangles of the box [lower, upper], counter-clockwise seen from outside.
std::vector<Triangle> cubeTriangles(const Vector& lower, const Vector& upper) {
  auto corner = [&](int bits) {
    return Vector{(bits & 1) ? upper[0] : lower[0], (bits & 2) ? upper[1] : lower[1], (bits & 4) ? upper[2] : lower[2]};
  };
  // Each face as four corners counter-clockwise seen from outside (corner bits: x = 1, y = 2, z = 4).
  const int faces[6][4] = {{0, 4, 6, 2}, {1, 3, 7, 5}, {0, 1, 5, 4}, {2, 6, 7, 3}, {0, 2, 3, 1}, {4, 5, 7, 6}};
  std::vector<Triangle> triangles;
  for (const auto& face : faces) {
    triangles.push_back(Triangle{{corner(face[0]), corner(face[1]), corner(face[2])}});
    triangles.push_back(Triangle{{corner(face[0]), corner(face[2]), corner(face[3])}});
  }
  return triangles;
}

// An icosahedron subdivided `levels` times, every vertex pushed onto the sphere of `radius`
// about the origin; outward orientation. Midpoints are shared through a cache, so neighbouring
// triangles hold bit-identical vertices (a watertight mesh).
std::vector<Triangle> icosphere(double radius, int levels) {
  const double t = (1.0 + std::sqrt(5.0)) / 2.0;
  std::vector<Vector> points = {{-1, t, 0}, {1, t, 0}, {-1, -t, 0}, {1, -t, 0}, {0, -1, t}, {0, 1, t},
                                {0, -1, -t}, {0, 1, -t}, {t, 0, -1}, {t, 0, 1}, {-t, 0, -1}, {-t, 0, 1}};
  auto toSphere = [](Vector p) {
    const double length = std::sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
    return Vector{p[0] / length, p[1] / length, p[2] / length};
  };
  for (auto& p : points) p = toSphere(p);
  std::vector<std::array<int, 3>> faces = {{0, 11, 5}, {0, 5, 1},  {0, 1, 7},   {0, 7, 10}, {0, 10, 11},
                                           {1, 5, 9},  {5, 11, 4}, {11, 10, 2}, {10, 7, 6}, {7, 1, 8},
                                           {3, 9, 4},  {3, 4, 2},  {3, 2, 6},   {3, 6, 8},  {3, 8, 9},
                                           {4, 9, 5},  {2, 4, 11}, {6, 2, 10},  {8, 6, 7},  {9, 8, 1}};
  for (int level = 0; level < levels; ++level) {
    std::map<std::pair<int, int>, int> midpoints;
    auto midpoint = [&](int a, int b) {
      const auto key = std::make_pair(std::min(a, b), std::max(a, b));
      const auto found = midpoints.find(key);
      if (found != midpoints.end()) return found->second;
      const Vector& p = points[a];
      const Vector& q = points[b];
      points.push_back(toSphere({(p[0] + q[0]) / 2, (p[1] + q[1]) / 2, (p[2] + q[2]) / 2}));
      return midpoints[key] = static_cast<int>(points.size()) - 1;
    };
    std::vector<std::array<int, 3>> finer;
    for (const auto& f : faces) {
      const int ab = midpoint(f[0], f[1]);
      const int bc = midpoint(f[1], f[2]);
      const int ca = midpoint(f[2], f[0]);
      finer.push_back({f[0], ab, ca});
      finer.push_back({f[1], bc, ab});
      finer.push_back({f[2], ca, bc});
      finer.push_back({ab, bc, ca});
    }
    faces = std::move(finer);
  }
  std::vector<Triangle> triangles;
  for (const auto& f : faces) {
    Triangle triangle;
    for (int v = 0; v < 3; ++v)
      for (int axis = 0; axis < 3; ++axis) triangle.vertices[v][axis] = radius * points[f[v]][axis];
    triangles.push_back(triangle);
  }
  return triangles;
}

StlMesh meshOf(std::vector<Triangle> triangles) {
  StlMesh mesh;
  mesh.triangles() = std::move(triangles);
  return mesh;
}

// ASCII STL as exporters write it, written by the test (not by the code under test).
void writeAsciiStl(const std::filesystem::path& path, const std::vector<Triangle>& triangles) {
  std::ofstream out(path);
  out << "solid test_mesh\n";
  char line[200];
  for (const Triangle& triangle : triangles) {
    out << "  facet normal 0 0 0\n    outer loop\n";
    for (const auto& v : triangle.vertices) {
      std::snprintf(line, sizeof line, "      vertex %.17g %.17g %.17g\n", v[0], v[1], v[2]);
      out << line;
    }
    out << "    endloop\n  endfacet\n";
  }
  out << "endsolid test_mesh\n";
}

void writeText(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

std::string readBytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The message of the InputError that `action` raises ("" and a test failure if none).
std::string inputErrorOf(const std::function<void()>& action) {
  try {
    action();
  } catch (const InputError& error) {
    return error.what();
  }
  ADD_FAILURE() << "no InputError raised";
  return "";
}

std::vector<std::uint8_t> maskOf(const ObstacleSpec& spec, const Extent& extent, std::int64_t* marked = nullptr) {
  std::vector<std::uint8_t> mask(static_cast<std::size_t>(extent.cellCount()), 0);
  const std::int64_t count = geometry::rasterize(spec, extent, mask.data());
  if (marked) *marked = count;
  return mask;
}

std::int64_t countMarked(const std::vector<std::uint8_t>& mask) {
  std::int64_t count = 0;
  for (const auto value : mask) count += value != 0;
  return count;
}

// Lattice points (a, b, c) with a^2 + b^2 + c^2 <= r^2, counted in integers row by row: the
// number of integer a with a^2 <= rest is 2 floor(sqrt(rest)) + 1.
std::int64_t latticePointsInBall(std::int64_t radius) {
  auto integerSqrt = [](std::int64_t n) {
    std::int64_t root = static_cast<std::int64_t>(std::sqrt(static_cast<double>(n)));
    while (root * root > n) --root;
    while ((root + 1) * (root + 1) <= n) ++root;
    return root;
  };
  std::int64_t count = 0;
  for (std::int64_t b = -radius; b <= radius; ++b)
    for (std::int64_t c = -radius; c <= radius; ++c) {
      const std::int64_t rest = radius * radius - b * b - c * c;
      if (rest >= 0) count += 2 * integerSqrt(rest) + 1;
    }
  return count;
}

ObstacleSpec sphereSpec(Vector center, double radius) {
  ObstacleSpec spec;
  spec.kind = ShapeKind::Sphere;
  spec.center = center;
  spec.radius = radius;
  spec.source = "case.toml: obstacle[0]";
  return spec;
}

ObstacleSpec boxSpec(Vector lower, Vector upper) {
  ObstacleSpec spec;
  spec.kind = ShapeKind::Box;
  spec.min = lower;
  spec.max = upper;
  spec.source = "case.toml: obstacle[0]";
  return spec;
}

ObstacleSpec stlSpec(const std::filesystem::path& file, double scale = 1.0, Vector translate = {0, 0, 0}) {
  ObstacleSpec spec;
  spec.kind = ShapeKind::Stl;
  spec.file = file.string();
  spec.scale = scale;
  spec.translate = translate;
  spec.source = "case.toml: obstacle[0]";
  return spec;
}

using GeometryFiles = octoflow::testing::ScratchFolderTest;

}  // namespace

// --- analytic shapes ---------------------------------------------------------------------------

TEST(Geometry, SphereMarksTheKnownNumberOfLatticePoints) {
  // Lattice points in a ball of integer radius about a node: OEIS A000605 (515 for r = 5, 4169
  // for r = 10), and the same from the integer row count above.
  const Extent extent{21, 21, 21};
  for (const auto& [radius, known] : {std::pair<int, std::int64_t>{5, 515}, {10, 4169}}) {
    std::int64_t marked = 0;
    const auto mask = maskOf(sphereSpec({10, 10, 10}, radius), extent, &marked);
    EXPECT_EQ(marked, known) << "radius " << radius;
    EXPECT_EQ(latticePointsInBall(radius), known) << "radius " << radius;
    EXPECT_EQ(countMarked(mask), known) << "radius " << radius;
  }
}

TEST(Geometry, SphereMarksExactlyTheNodesWithinItsRadiusAndClipsToTheExtent) {
  // Off-node centre, partly outside the grid on x- and z+.
  const Extent extent{20, 24, 18};
  const Vector c{2.3, 11.6, 15.2};
  const double r = 6.7;
  std::vector<std::uint8_t> mask(static_cast<std::size_t>(extent.cellCount()), 0);
  mask[extent.linear(19, 23, 0)] = 1;  // an earlier obstacle far from the sphere stays marked
  const std::int64_t marked = geometry::rasterize(sphereSpec(c, r), extent, mask.data());
  std::int64_t expected = 0;
  for (Index k = 0; k < extent.nz; ++k)
    for (Index j = 0; j < extent.ny; ++j)
      for (Index i = 0; i < extent.nx; ++i) {
        const bool inside = (i - c[0]) * (i - c[0]) + (j - c[1]) * (j - c[1]) + (k - c[2]) * (k - c[2]) <= r * r;
        expected += inside;
        const bool earlier = i == 19 && j == 23 && k == 0;
        ASSERT_EQ(mask[extent.linear(i, j, k)], (inside || earlier) ? 1 : 0) << i << " " << j << " " << k;
      }
  EXPECT_EQ(marked, expected);
  EXPECT_GT(expected, 0);
}

TEST(Geometry, CylinderMarksTheGaussCircleCountOnEverySliceAlongEachAxis) {
  // Lattice points in a disc of radius 5 about a node: 81 (Gauss circle problem, OEIS A000328).
  const Extent extent{13, 14, 15};
  for (int axis = 0; axis < 3; ++axis) {
    ObstacleSpec spec;
    spec.kind = ShapeKind::Cylinder;
    spec.center = {6, 7, 7};
    spec.radius = 5.0;
    spec.axis = axis;
    std::int64_t marked = 0;
    const auto mask = maskOf(spec, extent, &marked);
    EXPECT_EQ(marked, 81 * extent.size(axis)) << "axis " << axis;
    EXPECT_EQ(countMarked(mask), marked) << "axis " << axis;
  }
  // 2D grid: the cylinder along z is a disc.
  ObstacleSpec disc;
  disc.kind = ShapeKind::Cylinder;
  disc.center = {8, 8, 0};
  disc.radius = 5.0;
  disc.axis = 2;
  EXPECT_EQ(countMarked(maskOf(disc, Extent{17, 17, 1})), 81);
}

TEST(Geometry, CylinderMarksExactlyTheNodesWithinItsRadiusOfTheAxis) {
  const Extent extent{16, 12, 10};
  ObstacleSpec spec;
  spec.kind = ShapeKind::Cylinder;
  spec.center = {100.0, 5.4, 3.7};  // a point on the axis far outside the grid: only y, z matter
  spec.radius = 4.2;
  spec.axis = 0;
  std::int64_t marked = 0;
  const auto mask = maskOf(spec, extent, &marked);
  std::int64_t expected = 0;
  for (Index k = 0; k < extent.nz; ++k)
    for (Index j = 0; j < extent.ny; ++j)
      for (Index i = 0; i < extent.nx; ++i) {
        const bool inside = (j - 5.4) * (j - 5.4) + (k - 3.7) * (k - 3.7) <= 4.2 * 4.2;
        expected += inside;
        ASSERT_EQ(mask[extent.linear(i, j, k)], inside ? 1 : 0) << i << " " << j << " " << k;
      }
  EXPECT_EQ(marked, expected);
}

TEST(Geometry, BoxMarksTheNodesWithinItsInclusiveBounds) {
  const Extent extent{12, 12, 12};
  // Corners on nodes are inside: 7 nodes (3..9) per axis.
  EXPECT_EQ(countMarked(maskOf(boxSpec({3, 3, 3}, {9, 9, 9}), extent)), 7 * 7 * 7);
  // Fractional corners: 3..9 on x, 3..9 on y, 4..8 on z.
  EXPECT_EQ(countMarked(maskOf(boxSpec({2.5, 3, 3.2}, {9.5, 9, 8.9}), extent)), 7 * 7 * 5);
  // Clipped to the extent {10, 8, 6}: x 0..4, y 2..7, z 3 only.
  std::int64_t marked = 0;
  const auto mask = maskOf(boxSpec({-5, 2, 3}, {4.5, 100, 3}), Extent{10, 8, 6}, &marked);
  EXPECT_EQ(marked, 5 * 6 * 1);
  EXPECT_EQ(countMarked(mask), marked);
  // Entirely outside: nothing.
  EXPECT_EQ(countMarked(maskOf(boxSpec({20, 0, 0}, {30, 5, 5}), extent)), 0);
}

TEST(Geometry, BadShapeParametersNameTheObstacleAndKey) {
  const Extent extent{8, 8, 8};
  std::vector<std::uint8_t> mask(static_cast<std::size_t>(extent.cellCount()), 0);
  auto problem = [&](const ObstacleSpec& spec) {
    return inputErrorOf([&] { geometry::rasterize(spec, extent, mask.data()); });
  };
  for (const double radius : {0.0, -1.0, std::nan("")}) {
    const std::string message = problem(sphereSpec({4, 4, 4}, radius));
    EXPECT_NE(message.find("case.toml: obstacle[0]: radius"), std::string::npos) << message;
  }
  ObstacleSpec cylinder = sphereSpec({4, 4, 4}, 2.0);
  cylinder.kind = ShapeKind::Cylinder;
  cylinder.axis = 3;
  EXPECT_NE(problem(cylinder).find("case.toml: obstacle[0]: axis"), std::string::npos);
  const std::string box = problem(boxSpec({1, 5, 1}, {2, 4, 2}));
  EXPECT_NE(box.find("case.toml: obstacle[0]: min"), std::string::npos) << box;
  EXPECT_NE(box.find("axis 1"), std::string::npos) << box;
  ObstacleSpec stl = stlSpec("unused.stl", 0.0);
  EXPECT_NE(problem(stl).find("case.toml: obstacle[0]: scale"), std::string::npos);
  EXPECT_EQ(countMarked(mask), 0) << "nothing is marked before an error";
}

// --- STL files ---------------------------------------------------------------------------------

TEST_F(GeometryFiles, BinaryAndAsciiCubesLoadWatertightWithTheirExactVolume) {
  const auto triangles = cubeTriangles({2.5, 2.5, 2.5}, {9.5, 9.5, 9.5});
  const auto binary = directory_ / "cube.stl";
  const auto ascii = directory_ / "cube_ascii.stl";
  meshOf(triangles).saveBinary(binary.string());
  writeAsciiStl(ascii, triangles);
  EXPECT_EQ(std::filesystem::file_size(binary), 84u + 50u * 12u);
  for (const auto& path : {binary, ascii}) {
    const StlMesh mesh = StlMesh::load(path.string());
    ASSERT_EQ(mesh.triangles().size(), 12u) << path;
    EXPECT_TRUE(mesh.isWatertight()) << path;
    // Corners are exact in float32 and the six face terms are exact sums: only the last bits
    // of the accumulation may differ from 7^3.
    EXPECT_NEAR(mesh.volume(), 343.0, 1e-9) << path;
    Vector lower;
    Vector upper;
    mesh.bounds(lower, upper);
    EXPECT_EQ(lower, (Vector{2.5, 2.5, 2.5})) << path;
    EXPECT_EQ(upper, (Vector{9.5, 9.5, 9.5})) << path;
  }
  // Reversed orientation (inward normals) gives the negative volume.
  auto inward = triangles;
  for (auto& triangle : inward) std::swap(triangle.vertices[1], triangle.vertices[2]);
  EXPECT_NEAR(meshOf(inward).volume(), -343.0, 1e-9);  // as above
}

TEST_F(GeometryFiles, IcosphereVolumeLiesBetweenItsInscribedAndCircumscribedBalls) {
  const double radius = 8.0;
  const auto path = directory_ / "sphere.stl";
  meshOf(icosphere(radius, 3)).saveBinary(path.string());
  const StlMesh mesh = StlMesh::load(path.string());
  ASSERT_EQ(mesh.triangles().size(), 1280u);  // 20 * 4^3
  EXPECT_TRUE(mesh.isWatertight());
  // The polyhedron's vertices lie on the sphere, so it is inside the ball and its volume is
  // below 4/3 pi r^3; with 1280 faces the deficit is about 0.6 %, so 1 % bounds it.
  const double ball = 4.0 / 3.0 * kPi * radius * radius * radius;
  EXPECT_LT(mesh.volume(), ball);
  EXPECT_NEAR(mesh.volume(), ball, 0.01 * ball);
}

TEST_F(GeometryFiles, BinaryFileWhoseHeaderBeginsWithSolidIsReadAsBinary) {
  const auto path = directory_ / "solid_header.stl";
  meshOf(cubeTriangles({0, 0, 0}, {1, 1, 1})).saveBinary(path.string());
  std::string bytes = readBytes(path);
  std::memcpy(bytes.data(), "solid exported by some CAD tool", 31);
  writeText(path, bytes);
  const StlMesh mesh = StlMesh::load(path.string());
  EXPECT_EQ(mesh.triangles().size(), 12u);
  EXPECT_NEAR(mesh.volume(), 1.0, 1e-12);  // unit cube, exact corners: rounding only
}

TEST_F(GeometryFiles, AsciiLayoutIsFreeAndKeywordsIgnoreCase) {
  // One facet on a single line, CRLF endings, upper-case keywords, a second solid.
  const auto path = directory_ / "layout.stl";
  writeText(path,
            "solid first part\r\n"
            "FACET NORMAL 0 0 -1 OUTER LOOP VERTEX 0 0 0 VERTEX 0 1 0 VERTEX 1 0 0 ENDLOOP ENDFACET\r\n"
            "endsolid first\r\n"
            "solid second\n facet normal 0 0 1\n outer loop\n vertex +1e0 0 1\n vertex 0 1 1\n vertex 0 0 1\n"
            " endloop\n endfacet\nendsolid\n");
  const StlMesh mesh = StlMesh::load(path.string());
  ASSERT_EQ(mesh.triangles().size(), 2u);
  EXPECT_EQ(mesh.triangles()[1].vertices[0], (Vector{1, 0, 1}));
}

TEST_F(GeometryFiles, CubeStlMarksExactlyTheNodesOfTheMatchingBox) {
  // Faces half-way between nodes: the STL cube (2.5 .. 9.5) holds nodes 3 .. 9, the box
  // [3, 9] with inclusive bounds, node for node. Binary, ASCII and a scaled unit cube agree.
  const Extent extent{14, 13, 12};
  const auto box = maskOf(boxSpec({3, 3, 3}, {9, 9, 9}), extent);
  const auto binary = directory_ / "cube.stl";
  const auto ascii = directory_ / "cube_ascii.stl";
  const auto unit = directory_ / "unit.stl";
  meshOf(cubeTriangles({2.5, 2.5, 2.5}, {9.5, 9.5, 9.5})).saveBinary(binary.string());
  writeAsciiStl(ascii, cubeTriangles({2.5, 2.5, 2.5}, {9.5, 9.5, 9.5}));
  writeAsciiStl(unit, cubeTriangles({0, 0, 0}, {1, 1, 1}));
  for (const auto& spec : {stlSpec(binary), stlSpec(ascii), stlSpec(unit, 7.0, {2.5, 2.5, 2.5})}) {
    std::int64_t marked = 0;
    const auto mask = maskOf(spec, extent, &marked);
    EXPECT_EQ(marked, 343) << spec.file;
    EXPECT_TRUE(mask == box) << spec.file;
  }
}

TEST_F(GeometryFiles, IcosphereStlLiesBetweenTheSpheresOfItsInAndCircumradius) {
  // Radius 16 (the file's 8 scaled by 2), centred off-node in a 48^3 grid.
  const auto path = directory_ / "sphere.stl";
  meshOf(icosphere(8.0, 3)).saveBinary(path.string());
  const Vector center{24.3, 23.7, 24.1};
  const double scale = 2.0;
  const Extent extent{48, 48, 48};
  std::int64_t marked = 0;
  const auto mask = maskOf(stlSpec(path, scale, center), extent, &marked);
  EXPECT_EQ(countMarked(mask), marked);

  // In- and circumradius of the scaled polyhedron about its centre, from the file's vertices.
  const StlMesh mesh = StlMesh::load(path.string());
  double inradius = 1e300;
  double circumradius = 0.0;
  for (const Triangle& triangle : mesh.triangles()) {
    const auto& v = triangle.vertices;
    const Vector e1{v[1][0] - v[0][0], v[1][1] - v[0][1], v[1][2] - v[0][2]};
    const Vector e2{v[2][0] - v[0][0], v[2][1] - v[0][1], v[2][2] - v[0][2]};
    const Vector n{e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
    const double length = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    inradius = std::min(inradius, scale * (n[0] * v[0][0] + n[1] * v[0][1] + n[2] * v[0][2]) / length);
    for (const auto& p : v) circumradius = std::max(circumradius, scale * std::sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]));
  }
  // Rays pass ~3e-7 beside the nodes, so a node that close to a face may go either way: the
  // spheres are shrunk and grown by 1e-6.
  const auto inner = maskOf(sphereSpec(center, inradius - 1e-6), extent);
  const auto outer = maskOf(sphereSpec(center, circumradius + 1e-6), extent);
  for (std::size_t node = 0; node < mask.size(); ++node) {
    ASSERT_LE(inner[node], mask[node]) << "node " << node << " inside the inscribed sphere but not marked";
    ASSERT_LE(mask[node], outer[node]) << "node " << node << " marked outside the circumscribed sphere";
  }
  // The node count estimates the volume: for a ball of radius 16 lattice-point counts stray from
  // the volume by O(r) ~ a few tens of nodes out of ~17000, so 1 % holds with a wide margin.
  const double volume = scale * scale * scale * mesh.volume();
  EXPECT_NEAR(static_cast<double>(marked), volume, 0.01 * volume);
}

// --- STL errors: each names the file -----------------------------------------------------------

TEST_F(GeometryFiles, MissingFileIsNamed) {
  const auto path = directory_ / "absent.stl";
  for (const std::string& message : {inputErrorOf([&] { StlMesh::load(path.string()); }),
                                     inputErrorOf([&] { maskOf(stlSpec(path), Extent{4, 4, 4}); })}) {
    EXPECT_NE(message.find(path.string()), std::string::npos) << message;
    EXPECT_NE(message.find("not found"), std::string::npos) << message;
  }
}

TEST_F(GeometryFiles, TruncatedBinaryGivesExpectedAndActualSize) {
  const auto path = directory_ / "truncated.stl";
  meshOf(cubeTriangles({0, 0, 0}, {1, 1, 1})).saveBinary(path.string());
  std::filesystem::resize_file(path, 84 + 50 * 12 - 7);
  const std::string message = inputErrorOf([&] { StlMesh::load(path.string()); });
  EXPECT_NE(message.find(path.string()), std::string::npos) << message;
  EXPECT_NE(message.find("truncated"), std::string::npos) << message;
  EXPECT_NE(message.find("684 bytes"), std::string::npos) << message;  // 84 + 50 * 12
  EXPECT_NE(message.find("677 bytes"), std::string::npos) << message;

  // The same with a "solid" header: still reported as a truncated binary, not as bad ASCII.
  std::string bytes = readBytes(path);
  std::memcpy(bytes.data(), "solid", 5);
  writeText(path, bytes);
  const std::string solid = inputErrorOf([&] { StlMesh::load(path.string()); });
  EXPECT_NE(solid.find("truncated"), std::string::npos) << solid;

  // Shorter than the preamble and not ASCII.
  writeText(path, std::string(40, '\x01'));
  const std::string tiny = inputErrorOf([&] { StlMesh::load(path.string()); });
  EXPECT_NE(tiny.find(path.string()), std::string::npos) << tiny;
  EXPECT_NE(tiny.find("40 bytes"), std::string::npos) << tiny;
}

TEST_F(GeometryFiles, MalformedAsciiGivesTheLine) {
  const auto path = directory_ / "malformed.stl";
  writeText(path,
            "solid broken\n"
            "  facet normal 0 0 1\n"
            "    outer loop\n"
            "      vertex 0 0 0\n"
            "      vertex 1 0\n"  // a coordinate missing: 'vertex' is read as the third number
            "      vertex 0 1 0\n"
            "    endloop\n"
            "  endfacet\n"
            "endsolid broken\n");
  const std::string message = inputErrorOf([&] { StlMesh::load(path.string()); });
  EXPECT_NE(message.find(path.string()), std::string::npos) << message;
  EXPECT_NE(message.find("line 6"), std::string::npos) << message;
  EXPECT_NE(message.find("'vertex'"), std::string::npos) << message;

  writeText(path, "solid cut\n facet normal 0 0 1\n  outer loop\n   vertex 0 0 0\n");
  const std::string cut = inputErrorOf([&] { StlMesh::load(path.string()); });
  EXPECT_NE(cut.find("end of file"), std::string::npos) << cut;
  EXPECT_NE(cut.find(path.string()), std::string::npos) << cut;

  writeText(path, "solid empty\nendsolid empty\n");
  const std::string empty = inputErrorOf([&] { StlMesh::load(path.string()); });
  EXPECT_NE(empty.find("no triangles"), std::string::npos) << empty;
  EXPECT_NE(empty.find(path.string()), std::string::npos) << empty;
}

TEST_F(GeometryFiles, NonFiniteCoordinateIsRejected) {
  const auto ascii = directory_ / "nan_ascii.stl";
  writeText(ascii, "solid s\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 nan 0\nvertex 0 1 0\n"
                   "endloop\nendfacet\nendsolid s\n");
  const std::string message = inputErrorOf([&] { StlMesh::load(ascii.string()); });
  EXPECT_NE(message.find(ascii.string()), std::string::npos) << message;
  EXPECT_NE(message.find("line 5"), std::string::npos) << message;
  EXPECT_NE(message.find("non-finite"), std::string::npos) << message;

  const auto binary = directory_ / "nan_binary.stl";
  auto triangles = cubeTriangles({0, 0, 0}, {1, 1, 1});
  triangles[4].vertices[2][1] = std::nan("");
  meshOf(triangles).saveBinary(binary.string());
  const std::string binaryMessage = inputErrorOf([&] { maskOf(stlSpec(binary), Extent{4, 4, 4}); });
  EXPECT_NE(binaryMessage.find(binary.string()), std::string::npos) << binaryMessage;
  EXPECT_NE(binaryMessage.find("triangle 4"), std::string::npos) << binaryMessage;
  EXPECT_NE(binaryMessage.find("non-finite"), std::string::npos) << binaryMessage;
}

TEST_F(GeometryFiles, MeshWithAHoleIsNotWatertight) {
  // Removing one triangle of a closed icosphere leaves its three edges with one triangle each.
  const auto path = directory_ / "holed.stl";
  auto triangles = icosphere(8.0, 2);
  triangles.erase(triangles.begin() + 17);
  meshOf(triangles).saveBinary(path.string());
  EXPECT_FALSE(StlMesh::load(path.string()).isWatertight());
  std::vector<std::uint8_t> mask(32 * 32 * 32, 0);
  const std::string message =
      inputErrorOf([&] { geometry::rasterize(stlSpec(path, 1.0, {16, 16, 16}), Extent{32, 32, 32}, mask.data()); });
  EXPECT_NE(message.find(path.string()), std::string::npos) << message;
  EXPECT_NE(message.find("not watertight: 3 open edges"), std::string::npos) << message;
  EXPECT_EQ(countMarked(mask), 0) << "nothing is marked before the error";
}

#ifdef OCTOFLOW_SOURCE_DIR
TEST(Geometry, ShippedGeometryFilesAreClosedAndHaveTheirVolumes) {
  // data/geometry/make_geometry.py writes these; a changed script shows here.
  const std::filesystem::path folder = std::filesystem::path(OCTOFLOW_SOURCE_DIR) / "data" / "geometry";
  const StlMesh sphere = StlMesh::load((folder / "sphere_r8.stl").string());
  EXPECT_EQ(sphere.triangles().size(), 1280u);
  EXPECT_TRUE(sphere.isWatertight());
  const double ball = 4.0 / 3.0 * kPi * 512.0;
  EXPECT_LT(sphere.volume(), ball);
  EXPECT_NEAR(sphere.volume(), ball, 0.01 * ball);  // inscribed polyhedron, ~0.6 % below (as above)
  const StlMesh cube = StlMesh::load((folder / "cube_ascii.stl").string());
  EXPECT_EQ(cube.triangles().size(), 12u);
  EXPECT_TRUE(cube.isWatertight());
  EXPECT_NEAR(cube.volume(), 1.0, 1e-12);  // exact corners: rounding only
}
#endif
