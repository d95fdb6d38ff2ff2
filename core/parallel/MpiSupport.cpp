#include "parallel/MpiSupport.hpp"

#include <algorithm>
#include <cstdlib>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace octoflow::parallel::detail {

void check(int status, const char* call) {
  if (status != MPI_SUCCESS) throw Error(std::string("MPI error in ") + call);
}

HostPlace placeOnHost(MPI_Comm communicator) {
  MPI_Comm host;
  check(MPI_Comm_split_type(communicator, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host), "MPI_Comm_split_type");
  HostPlace place;
  MPI_Comm_rank(host, &place.rank);
  MPI_Comm_size(host, &place.ranks);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(communicator, &rank);
  MPI_Comm_size(communicator, &ranks);
  int lowest = rank;
  check(MPI_Allreduce(&rank, &lowest, 1, MPI_INT, MPI_MIN, host), "MPI_Allreduce");
  MPI_Comm_free(&host);
  place.hostOfRank.resize(ranks);
  check(MPI_Allgather(&lowest, 1, MPI_INT, place.hostOfRank.data(), 1, MPI_INT, communicator), "MPI_Allgather");
  return place;
}

// CPU ranks of one host split its cores, unless OMP_NUM_THREADS says otherwise.
void shareCores(const HostPlace& place) {
#ifdef _OPENMP
  if (std::getenv("OMP_NUM_THREADS") || place.ranks <= 1) return;
  omp_set_num_threads(std::max(1, omp_get_num_procs() / place.ranks));
#else
  (void)place;
#endif
}

HostPlace takeDeviceOrCores(MPI_Comm communicator, exec::Backend backend) {
  const bool cuda = backend == exec::Backend::Cuda;
  const bool everyRankCuda = everyRank(communicator, cuda);
  const HostPlace host = placeOnHost(communicator);  // collective: every rank calls it
  if (cuda && !everyRankCuda)
    throw Error("MPI ranks disagree on the backend: some have no usable CUDA device (run with --backend cpu, or "
                "give every rank a GPU)");
  if (cuda)
    exec::useCudaDevice(host.rank);
  else
    shareCores(host);
  return host;
}

// Whether every rank says yes (collective).
bool everyRank(MPI_Comm communicator, bool yes) {
  int mine = yes ? 1 : 0, all = 0;
  check(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, communicator), "MPI_Allreduce");
  return all == 1;
}

void gatherOwnedNodes(MPI_Comm communicator, bool root, const std::vector<Piece>& pieces, const Extent& wholeExtent,
                      const std::vector<float>& owned, int perNode, std::vector<float>& whole) {
  const ContiguousType node(perNode, MPI_FLOAT);
  std::vector<int> offsets;
  const int ranks = static_cast<int>(pieces.size());
  const std::vector<float> gathered = gatherUnits(communicator, root, ranks, owned.data(),
                                                  static_cast<int>(owned.size() / perNode), perNode, node.type, offsets);
  if (!root) return;
  whole.resize(static_cast<std::size_t>(wholeExtent.cellCount()) * perNode);
  for (int r = 0; r < ranks; ++r) {
    const Piece& piece = pieces[static_cast<std::size_t>(r)];
    std::size_t at = static_cast<std::size_t>(offsets[r]) * perNode;
    for (Index k = piece.lo[2]; k < piece.hi[2]; ++k)
      for (Index j = piece.lo[1]; j < piece.hi[1]; ++j)
        for (Index i = piece.lo[0]; i < piece.hi[0]; ++i) {
          const std::size_t index = static_cast<std::size_t>(wholeExtent.linear(i, j, k));
          std::copy_n(gathered.begin() + at, perNode, whole.begin() + index * perNode);
          at += perNode;
        }
  }
}

}  // namespace octoflow::parallel::detail
