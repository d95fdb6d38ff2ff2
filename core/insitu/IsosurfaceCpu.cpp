// The CPU execution of IsosurfaceExtractor: the reference the CUDA one is checked against. A row
// of nodes (along x) is one thread's work, so that numbering along it is a running count.
#include <chrono>
#include <vector>

#include "exec/cpu/CpuExecutor.hpp"
#include "insitu/Isosurface.hpp"

namespace octoflow::insitu::detail {
namespace {

class CpuIsosurfaceExtractor final : public IsosurfaceExtractor {
public:
  Surface extract(const ScalarFieldView& field, float level) override {
    const auto start = std::chrono::steady_clock::now();
    const Extent& e = field.extent;
    const float* values = field.values;
    const MarchingCubesTable& table = marchingCubesTable();
    const Index rows = e.ny * e.nz;
    rowVertices_.assign(static_cast<std::size_t>(rows), 0);
    rowTriangles_.assign(static_cast<std::size_t>(rows), 0);
    firstVertex_.resize(static_cast<std::size_t>(rows));
    firstTriangle_.resize(static_cast<std::size_t>(rows));
    exec::CpuExecutor executor;
    const auto hasCells = [&](Index j, Index k) { return j + 1 < e.ny && k + 1 < e.nz; };
    executor.parallelFor(rows, [&](Index row) {
      const Index j = row % e.ny, k = row / e.ny;
      std::int32_t vertices = 0, triangles = 0;
      for (Index i = 0; i < e.nx; ++i) {
        vertices += edgeCount(crossedEdges(values, e, i, j, k, level));
        if (i + 1 < e.nx && hasCells(j, k)) triangles += table.triangleCount[cellCase(values, e, i, j, k, level)];
      }
      rowVertices_[row] = vertices;
      rowTriangles_[row] = triangles;
    });
    const RowOffsets totals = scanRows(rowVertices_.data(), rowTriangles_.data(), rows, firstVertex_.data(),
                                       firstTriangle_.data());
    points_.resize(static_cast<std::size_t>(3 * totals.vertexCount));
    normals_.resize(static_cast<std::size_t>(3 * totals.vertexCount));
    triangles_.resize(static_cast<std::size_t>(3 * totals.triangleCount));
    vertexFirst_.resize(static_cast<std::size_t>(e.cellCount()));
    executor.parallelFor(rows, [&](Index row) {
      if (rowVertices_[row] == 0) return;
      const Index j = row % e.ny, k = row / e.ny;
      std::int32_t next = firstVertex_[row];
      for (Index i = 0; i < e.nx; ++i) {
        const unsigned mask = crossedEdges(values, e, i, j, k, level);
        if (mask == 0) continue;
        vertexFirst_[e.linear(i, j, k)] = next;
        for (int axis = 0; axis < 3; ++axis)
          if (mask & (1u << axis)) {
            const std::size_t at = 3 * static_cast<std::size_t>(next);
            edgeVertex(values, e, field.geometry, i, j, k, axis, level, &points_[at], &normals_[at]);
            ++next;
          }
      }
    });
    executor.parallelFor(rows, [&](Index row) {
      if (rowTriangles_[row] == 0) return;
      const Index j = row % e.ny, k = row / e.ny;
      std::int32_t* out = triangles_.data() + 3 * static_cast<Index>(firstTriangle_[row]);
      for (Index i = 0; i + 1 < e.nx; ++i) {
        const unsigned pattern = cellCase(values, e, i, j, k, level);
        cellTriangles(table, pattern, values, e, i, j, k, level, vertexFirst_.data(), out);
        out += 3 * table.triangleCount[pattern];
      }
    });
    times_.extractSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    times_.copySeconds = 0.0;  // already in host memory
    return Surface{points_.data(), normals_.data(), triangles_.data(), totals.vertexCount, totals.triangleCount};
  }
  IsosurfaceTimes lastTimes() const override { return times_; }

private:
  std::vector<std::int32_t> rowVertices_, rowTriangles_, firstVertex_, firstTriangle_, vertexFirst_, triangles_;
  std::vector<float> points_, normals_;
  IsosurfaceTimes times_;
};

}  // namespace

std::unique_ptr<IsosurfaceExtractor> makeCpuIsosurfaceExtractor() { return std::make_unique<CpuIsosurfaceExtractor>(); }

}  // namespace octoflow::insitu::detail
