#pragma once
// Isosurfaces of node-centred scalar fields (the phase field's phi = 0.5 and any other level),
// extracted where the field lives: on the GPU only the triangles cross to the host. The result
// is plain arrays in VTK's layout (adaptors/ wraps them without copying).
#include <cstdint>
#include <memory>

#include "common/Extent.hpp"
#include "exec/Backend.hpp"
#include "insitu/MarchingCubes.hpp"

namespace octoflow::insitu {

// A scalar field in the memory of the extractor's backend (device memory for CUDA), x fastest.
struct ScalarFieldView {
  const float* values = nullptr;
  Extent extent;
  GridGeometry geometry;
};

// An extracted surface in host memory (pinned with CUDA), valid until the extractor's next call.
struct Surface {
  const float* points = nullptr;            // xyz of each vertex
  const float* normals = nullptr;           // unit xyz of each vertex, out of the region >= level
  const std::int32_t* triangles = nullptr;  // three vertex numbers each, counter-clockwise from outside
  Index pointCount = 0;
  Index triangleCount = 0;
};

struct IsosurfaceTimes {
  double extractSeconds = 0.0;  // the whole call, copies to the host included
  double copySeconds = 0.0;     // of which copying the triangles and vertices to the host
};

class IsosurfaceExtractor {
public:
  // Throws octoflow::Error when the backend is not built in.
  static std::unique_ptr<IsosurfaceExtractor> create(exec::Backend backend);
  virtual ~IsosurfaceExtractor() = default;

  // The surface where the field crosses `level`: one vertex on each grid edge it crosses,
  // shared by the cells around that edge (a closed surface comes out watertight), numbered in
  // the order of their edges' nodes (x fastest, then the edge's axis): the same on every backend.
  virtual Surface extract(const ScalarFieldView& field, float level) = 0;
  virtual IsosurfaceTimes lastTimes() const = 0;
};

namespace detail {
// Rows are the lines of nodes along x, numbered j + ny k. From each row's vertex and triangle
// counts: each row's first vertex and first triangle (exclusive sums) and the totals. Throws
// when a surface has (2^31 - 1) / 3 vertices or triangles or more (32-bit connectivity).
struct RowOffsets {
  Index vertexCount = 0;
  Index triangleCount = 0;
};
RowOffsets scanRows(const std::int32_t* vertexCounts, const std::int32_t* triangleCounts, Index rows,
                    std::int32_t* firstVertex, std::int32_t* firstTriangle);
std::unique_ptr<IsosurfaceExtractor> makeCpuIsosurfaceExtractor();
std::unique_ptr<IsosurfaceExtractor> makeCudaIsosurfaceExtractor();
}  // namespace detail

}  // namespace octoflow::insitu
