#pragma once
// Triangle surfaces from STL files (binary or ASCII, detected from the content).
#include <array>
#include <cstddef>
#include <string>
#include <vector>

namespace octoflow::geometry {

struct Triangle {
  std::array<std::array<double, 3>, 3> vertices;
};

class StlMesh {
public:
  // Reads a binary or ASCII STL. Raises InputError naming the file for a missing or unreadable
  // file, a truncated binary file (size != 84 + 50 n), a malformed ASCII file (with its line),
  // an empty mesh, or non-finite coordinates.
  static StlMesh load(const std::string& path);
  // Writes the mesh as binary STL (used by data/geometry generation and tests).
  void saveBinary(const std::string& path) const;

  const std::vector<Triangle>& triangles() const { return triangles_; }
  std::vector<Triangle>& triangles() { return triangles_; }
  void bounds(std::array<double, 3>& lower, std::array<double, 3>& upper) const;
  // Each edge shared by exactly two triangles (vertices matched exactly): a closed surface.
  bool isWatertight() const;
  // Enclosed volume by the divergence theorem (positive for outward normals).
  double volume() const;

private:
  std::vector<Triangle> triangles_;
};

namespace detail {
// Edges not shared by exactly two triangles (vertices matched exactly): 0 for a closed surface.
// Shared by StlMesh::isWatertight and the STL rasteriser, whose error message gives the count.
std::size_t openEdgeCount(const std::vector<Triangle>& triangles);
}  // namespace detail

}  // namespace octoflow::geometry
