#include "insitu/Isosurface.hpp"

#include <limits>
#include <string>

#include "common/Error.hpp"

namespace octoflow::insitu {

std::unique_ptr<IsosurfaceExtractor> IsosurfaceExtractor::create(exec::Backend backend) {
  if (backend == exec::Backend::Cuda) {
#if OCTOFLOW_HAVE_CUDA
    return detail::makeCudaIsosurfaceExtractor();
#else
    throw Error("isosurface extraction on CUDA: this build has no CUDA backend");
#endif
  }
  return detail::makeCpuIsosurfaceExtractor();
}

namespace detail {

RowOffsets scanRows(const std::int32_t* vertexCounts, const std::int32_t* triangleCounts, Index rows,
                    std::int32_t* firstVertex, std::int32_t* firstTriangle) {
  RowOffsets totals;
  for (Index row = 0; row < rows; ++row) {
    firstVertex[row] = static_cast<std::int32_t>(totals.vertexCount);
    firstTriangle[row] = static_cast<std::int32_t>(totals.triangleCount);
    totals.vertexCount += vertexCounts[row];
    totals.triangleCount += triangleCounts[row];
    // Vertex numbers and the connectivity's offsets (3 a triangle) are 32-bit, as VTK's 32-bit
    // cell arrays take them.
    constexpr Index limit = std::numeric_limits<std::int32_t>::max() / 3;
    if (totals.vertexCount > limit || totals.triangleCount > limit)
      throw Error("isosurface: more than " + std::to_string(limit) + " vertices or triangles (" +
                  std::to_string(totals.vertexCount) + " vertices, " + std::to_string(totals.triangleCount) +
                  " triangles so far)");
  }
  return totals;
}

}  // namespace detail
}  // namespace octoflow::insitu
