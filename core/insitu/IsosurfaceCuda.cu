// The CUDA execution of IsosurfaceExtractor. A warp walks a row of nodes (along x) 32 at a time:
// reads stay coalesced and a warp prefix sum numbers the row's vertices and triangles in the
// same order as the CPU. Rows the surface misses are skipped after one read of their count, so
// beyond one pass over the field the work follows the surface's size. Only the triangles and
// vertices are copied to the host.
#include <chrono>

#include "exec/Memory.hpp"
#include "exec/cuda/CudaCheck.hpp"
#include "insitu/Isosurface.hpp"

namespace octoflow::insitu::detail {
namespace {

constexpr int kWarp = 32;
constexpr int kRowsPerBlock = 8;  // 256 threads
constexpr unsigned kAllLanes = 0xffffffffu;

__device__ std::int32_t warpSum(std::int32_t value) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) value += __shfl_xor_sync(kAllLanes, value, offset);
  return value;
}
__device__ std::int32_t warpExclusiveSum(std::int32_t value, std::int32_t& total) {
  const int lane = threadIdx.x % kWarp;
  std::int32_t inclusive = value;
  for (int offset = 1; offset < kWarp; offset *= 2) {
    const std::int32_t below = __shfl_up_sync(kAllLanes, inclusive, offset);
    if (lane >= offset) inclusive += below;
  }
  total = __shfl_sync(kAllLanes, inclusive, kWarp - 1);
  return inclusive - value;
}
__device__ Index warpRow() { return static_cast<Index>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kWarp; }

__global__ void countRows(const float* field, Extent e, float level, const MarchingCubesTable* table,
                          std::int32_t* rowVertices, std::int32_t* rowTriangles) {
  const Index rows = e.ny * e.nz, row = warpRow();
  if (row >= rows) return;
  const Index j = row % e.ny, k = row / e.ny;
  const bool hasCells = j + 1 < e.ny && k + 1 < e.nz;
  std::int32_t vertices = 0, triangles = 0;
  for (Index i = threadIdx.x % kWarp; i < e.nx; i += kWarp) {
    vertices += edgeCount(crossedEdges(field, e, i, j, k, level));
    if (hasCells && i + 1 < e.nx) triangles += table->triangleCount[cellCase(field, e, i, j, k, level)];
  }
  vertices = warpSum(vertices);
  triangles = warpSum(triangles);
  if (threadIdx.x % kWarp == 0) {
    rowVertices[row] = vertices;
    rowTriangles[row] = triangles;
  }
}

__global__ void emitVertices(const float* field, Extent e, GridGeometry geometry, float level,
                             const std::int32_t* rowVertices, const std::int32_t* firstVertex,
                             std::int32_t* vertexFirst, float* points, float* normals) {
  const Index rows = e.ny * e.nz, row = warpRow();
  if (row >= rows || rowVertices[row] == 0) return;
  const Index j = row % e.ny, k = row / e.ny;
  std::int32_t next = firstVertex[row];
  for (Index start = 0; start < e.nx; start += kWarp) {
    const Index i = start + threadIdx.x % kWarp;
    const unsigned mask = i < e.nx ? crossedEdges(field, e, i, j, k, level) : 0u;
    std::int32_t total;
    std::int32_t vertex = next + warpExclusiveSum(edgeCount(mask), total);
    if (mask) {
      vertexFirst[e.linear(i, j, k)] = vertex;
      for (int axis = 0; axis < 3; ++axis)
        if (mask & (1u << axis)) {
          edgeVertex(field, e, geometry, i, j, k, axis, level, points + 3 * static_cast<Index>(vertex),
                     normals + 3 * static_cast<Index>(vertex));
          ++vertex;
        }
    }
    next += total;
  }
}

__global__ void emitTriangles(const float* field, Extent e, float level, const MarchingCubesTable* table,
                              const std::int32_t* rowTriangles, const std::int32_t* firstTriangle,
                              const std::int32_t* vertexFirst, std::int32_t* triangles) {
  const Index rows = e.ny * e.nz, row = warpRow();
  if (row >= rows || rowTriangles[row] == 0) return;
  const Index j = row % e.ny, k = row / e.ny;
  std::int32_t next = firstTriangle[row];
  for (Index start = 0; start + 1 < e.nx; start += kWarp) {
    const Index i = start + threadIdx.x % kWarp;
    const unsigned pattern = i + 1 < e.nx ? cellCase(field, e, i, j, k, level) : 0u;
    std::int32_t total;
    const std::int32_t first = next + warpExclusiveSum(table->triangleCount[pattern], total);
    if (table->triangleCount[pattern] > 0)
      cellTriangles(*table, pattern, field, e, i, j, k, level, vertexFirst, triangles + 3 * static_cast<Index>(first));
    next += total;
  }
}

// Buffers only grow. Those sized by the surface grow by half again what is asked: a surface
// that grows a little at each extraction (a flow changing between hand-offs) must not reallocate
// pinned memory each time (several milliseconds for a surface of a million triangles).
template <class T>
void ensureCapacity(exec::Buffer<T>& buffer, exec::MemorySpace space, Index count, bool headroom = false) {
  if (static_cast<Index>(buffer.size()) < count)
    buffer = exec::Buffer<T>(space, static_cast<std::size_t>(headroom ? count + count / 2 : count));
}

class CudaIsosurfaceExtractor final : public IsosurfaceExtractor {
public:
  CudaIsosurfaceExtractor() : table_(exec::MemorySpace::Device, 1) { table_.copyFrom(&marchingCubesTable(), 1); }

  Surface extract(const ScalarFieldView& field, float level) override {
    using exec::MemorySpace;
    const auto start = std::chrono::steady_clock::now();
    const Extent& e = field.extent;
    const Index rows = e.ny * e.nz;
    const unsigned blocks = static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock);
    const unsigned threads = kRowsPerBlock * kWarp;
    for (auto* buffer : {&rowCounts_, &rowFirsts_}) ensureCapacity(*buffer, MemorySpace::Device, 2 * rows);
    for (auto* buffer : {&hostCounts_, &hostFirsts_}) ensureCapacity(*buffer, MemorySpace::Pinned, 2 * rows);
    ensureCapacity(vertexFirst_, MemorySpace::Device, e.cellCount());
    countRows<<<blocks, threads>>>(field.values, e, level, table_.data(), rowCounts_.data(), rowCounts_.data() + rows);
    OCTO_CUDA_CHECK(cudaGetLastError());
    exec::copyBytes(hostCounts_.data(), rowCounts_.data(), 2 * rows * sizeof(std::int32_t));
    const RowOffsets totals = scanRows(hostCounts_.data(), hostCounts_.data() + rows, rows, hostFirsts_.data(),
                                       hostFirsts_.data() + rows);
    exec::copyBytes(rowFirsts_.data(), hostFirsts_.data(), 2 * rows * sizeof(std::int32_t));
    ensureCapacity(points_, MemorySpace::Device, 3 * totals.vertexCount, true);
    ensureCapacity(normals_, MemorySpace::Device, 3 * totals.vertexCount, true);
    ensureCapacity(triangles_, MemorySpace::Device, 3 * totals.triangleCount, true);
    if (totals.vertexCount > 0) {
      emitVertices<<<blocks, threads>>>(field.values, e, field.geometry, level, rowCounts_.data(), rowFirsts_.data(),
                                        vertexFirst_.data(), points_.data(), normals_.data());
      OCTO_CUDA_CHECK(cudaGetLastError());
      emitTriangles<<<blocks, threads>>>(field.values, e, level, table_.data(), rowCounts_.data() + rows,
                                         rowFirsts_.data() + rows, vertexFirst_.data(), triangles_.data());
      OCTO_CUDA_CHECK(cudaGetLastError());
    }
    ensureCapacity(hostPoints_, MemorySpace::Pinned, 3 * totals.vertexCount, true);
    ensureCapacity(hostNormals_, MemorySpace::Pinned, 3 * totals.vertexCount, true);
    ensureCapacity(hostTriangles_, MemorySpace::Pinned, 3 * totals.triangleCount, true);
    OCTO_CUDA_CHECK(cudaDeviceSynchronize());
    const auto copyStart = std::chrono::steady_clock::now();
    exec::copyBytes(hostPoints_.data(), points_.data(), 3 * totals.vertexCount * sizeof(float));
    exec::copyBytes(hostNormals_.data(), normals_.data(), 3 * totals.vertexCount * sizeof(float));
    exec::copyBytes(hostTriangles_.data(), triangles_.data(), 3 * totals.triangleCount * sizeof(std::int32_t));
    const auto end = std::chrono::steady_clock::now();
    times_.extractSeconds = std::chrono::duration<double>(end - start).count();
    times_.copySeconds = std::chrono::duration<double>(end - copyStart).count();
    return Surface{hostPoints_.data(), hostNormals_.data(), hostTriangles_.data(), totals.vertexCount,
                   totals.triangleCount};
  }
  IsosurfaceTimes lastTimes() const override { return times_; }

private:
  exec::Buffer<MarchingCubesTable> table_;
  exec::Buffer<std::int32_t> rowCounts_, rowFirsts_, hostCounts_, hostFirsts_, vertexFirst_, triangles_, hostTriangles_;
  exec::Buffer<float> points_, normals_, hostPoints_, hostNormals_;
  IsosurfaceTimes times_;
};

}  // namespace

std::unique_ptr<IsosurfaceExtractor> makeCudaIsosurfaceExtractor() {
  return std::make_unique<CudaIsosurfaceExtractor>();
}

}  // namespace octoflow::insitu::detail
