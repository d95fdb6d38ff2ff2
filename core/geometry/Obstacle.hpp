#pragma once
// Solid obstacles on a uniform grid: shapes in lattice node coordinates (node (i,j,k) sits at
// (i,j,k)), rasterised into a per-node solid mask. Knows nothing of LBM.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "common/Extent.hpp"

namespace octoflow::geometry {

enum class ShapeKind { Sphere, Cylinder, Box, Stl };

struct ObstacleSpec {
  ShapeKind kind = ShapeKind::Sphere;
  std::array<double, 3> center{0.0, 0.0, 0.0};  // sphere, cylinder (a point on the axis)
  double radius = 0.0;                          // sphere, cylinder
  int axis = 2;                                 // cylinder axis: 0 = x, 1 = y, 2 = z (2D cylinders: z)
  std::array<double, 3> min{0.0, 0.0, 0.0};     // box: inclusive corner coordinates
  std::array<double, 3> max{0.0, 0.0, 0.0};
  std::string file;                             // stl: path to a binary or ASCII STL file
  double scale = 1.0;                           // stl: x' = scale * x + translate
  std::array<double, 3> translate{0.0, 0.0, 0.0};
  std::string source;                           // where the spec came from, for messages ("case.toml: obstacle[0]")
};

// Marks every node whose position lies inside the shape: mask[node] = 1 (x fastest,
// node = i + nx (j + ny k)); other entries are left as they are. A node exactly on the surface
// counts as inside for sphere, cylinder and box. STL files: inside is decided by ray parity, so
// the surface must be closed; a file that cannot be read, is truncated, holds non-finite
// coordinates or is not watertight raises InputError naming the file and the problem.
// Returns the number of nodes this shape marked (including ones already marked).
std::int64_t rasterize(const ObstacleSpec& spec, const Extent& extent, std::uint8_t* mask);

// The shape in other node coordinates, x' = scale x + shift (scale > 0): a shape given on one grid
// rasterised on the nodes of a finer or shifted one (a block of an octree).
ObstacleSpec transformed(const ObstacleSpec& spec, double scale, const std::array<double, 3>& shift);

}  // namespace octoflow::geometry
