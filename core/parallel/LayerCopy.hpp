#pragma once
// Copies between a box of nodes of a field and a packed buffer (x fastest), where the field lives:
// the layers a halo exchange sends and receives (parallel/GridDistribution.hpp).
#include <cstdint>

#include "common/Extent.hpp"

namespace octoflow::parallel {

struct LayerCopy {
  float* field = nullptr;   // the grid's array, `extent` nodes
  float* buffer = nullptr;  // box.cellCount() values
  Extent extent;
  NodeBox box;
  bool pack = true;  // field -> buffer; else buffer -> field
  OCTO_HD void operator()(Index i, Index j, Index k) const {
    const Index packed = (i - box.lo[0]) + box.size.nx * ((j - box.lo[1]) + box.size.ny * (k - box.lo[2]));
    const Index node = extent.linear(i, j, k);
    if (pack)
      buffer[packed] = field[node];
    else
      field[node] = buffer[packed];
  }
};

// Copies between listed values of an array and a packed buffer, where the array lives: the points
// of blocks the octree LBM's ranks exchange (parallel/DistributedAmrLbm.hpp).
struct IndexedCopy {
  float* array = nullptr;
  float* buffer = nullptr;             // count values
  const std::int64_t* index = nullptr; // count positions in `array`
  bool pack = true;                    // array -> buffer; else buffer -> array
  OCTO_HD void operator()(Index n) const {
    if (pack)
      buffer[n] = array[index[n]];
    else
      array[index[n]] = buffer[n];
  }
};

void copyLayerCpu(const LayerCopy& copy);
void copyLayerCuda(const LayerCopy& copy, void* stream);  // queued on a cudaStream_t (null: the default stream)
void copyIndexedCpu(const IndexedCopy& copy, Index count);
void copyIndexedCuda(const IndexedCopy& copy, Index count);  // queued on the default stream

}  // namespace octoflow::parallel
