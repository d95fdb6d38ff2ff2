#pragma once
// MPI pieces every distributed solver uses: error checks, where a rank sits on its host (GPUs and
// cores are shared among a host's ranks), gathering to rank 0, agreement over ranks.
#include <mpi.h>

#include <string>
#include <vector>

#include "common/Error.hpp"
#include "exec/Backend.hpp"
#include "parallel/Decomposition.hpp"

namespace octoflow::parallel::detail {

void check(int status, const char* call);

// This rank's place among the ranks of its host, and how many they are: ranks of a host share its
// GPUs round-robin, and its cores. `hostOfRank`: for every rank, the lowest rank on its host.
struct HostPlace {
  int rank = 0;
  int ranks = 1;
  std::vector<int> hostOfRank;
};
HostPlace placeOnHost(MPI_Comm communicator);

// CPU ranks of one host split its cores, unless OMP_NUM_THREADS says otherwise.
void shareCores(const HostPlace& place);

// Collective. Where this rank runs: its host's GPU of its place (round-robin) on CUDA, its share of
// the host's cores on the CPU. Every rank must run on the same backend (a rank without a usable GPU
// would otherwise fall back to the CPU alone, and its collective calls would no longer match the
// others'): Error otherwise, on every rank.
HostPlace takeDeviceOrCores(MPI_Comm communicator, exec::Backend backend);

// Whether every rank says yes (collective).
bool everyRank(MPI_Comm communicator, bool yes);

// Gathers `units` units (each `unitSize` values of T, MPI type `unitType`) from every rank to
// rank 0: there the units in rank order and each rank's offset in units; elsewhere empty.
template <class T>
std::vector<T> gatherUnits(MPI_Comm communicator, bool root, int ranks, const T* values, int units, int unitSize,
                           MPI_Datatype unitType, std::vector<int>& offsets) {
  std::vector<int> counts(root ? ranks : 0);
  offsets.assign(root ? ranks : 0, 0);
  check(MPI_Gather(&units, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, communicator), "MPI_Gather");
  std::vector<T> gathered;
  if (root) {
    int total = 0;
    for (int r = 0; r < ranks; ++r) {
      offsets[r] = total;
      total += counts[r];
    }
    gathered.resize(static_cast<std::size_t>(total) * unitSize);
  }
  check(MPI_Gatherv(values, units, unitType, gathered.data(), counts.data(), offsets.data(), unitType, 0, communicator),
        "MPI_Gatherv");
  return gathered;
}

// A contiguous MPI type of `count` values of `type`, freed with the object.
struct ContiguousType {
  MPI_Datatype type;
  ContiguousType(int count, MPI_Datatype of) {
    check(MPI_Type_contiguous(count, of, &type), "MPI_Type_contiguous");
    MPI_Type_commit(&type);
  }
  ~ContiguousType() { MPI_Type_free(&type); }
  ContiguousType(const ContiguousType&) = delete;
  ContiguousType& operator=(const ContiguousType&) = delete;
};

// Collective. Every rank's owned values (node order within its piece, `perNode` floats a node) to
// rank 0, placed in whole-grid order into `whole` (resized there; untouched elsewhere). `pieces`:
// every rank's piece, in rank order. Counted in nodes: the whole grid holds under 2^31 nodes.
void gatherOwnedNodes(MPI_Comm communicator, bool root, const std::vector<Piece>& pieces, const Extent& wholeExtent,
                      const std::vector<float>& owned, int perNode, std::vector<float>& whole);

}  // namespace octoflow::parallel::detail
