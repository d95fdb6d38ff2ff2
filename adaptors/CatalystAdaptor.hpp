#pragma once
// ParaView Catalyst (legacy vtkCPProcessor API of ParaView 5.11): channel "grid" (a uniform grid,
// host arrays wrapped without copying, only the fields the loaded scripts ask for), channel
// "surface" (an extracted isosurface), channel "tracers" (particles), their host arrays wrapped
// too, and channel "amr" (the blocks of a solver with levels); names in Channels.hpp.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/Extent.hpp"
#include "ImageDataBuilder.hpp"
#include "insitu/Isosurface.hpp"
#include "particles/TracerSet.hpp"
#include "sim/Simulation.hpp"

namespace octoflow::adaptors {

class CatalystAdaptor {
public:
  // Loads every script (v2 scripts, first line "# script-version: 2"); extracts (PNG, data)
  // go under `extractsDirectory`. A script that cannot be loaded raises InputError naming it.
  // `channels`: what the run hands over (kGridChannel, kSurfaceChannel, kTracersChannel); scripts
  // see only these.
  // A script that fails when it runs (a Python error) is named with InputError, or with
  // `continueOnError` named in a warning and dropped while the others go on.
  // `allRanks` (MPI): every rank of MPI_COMM_WORLD makes an adaptor and hands its piece; the
  // pipelines run over all pieces (images composited and written once, data extracts in pieces).
  // Otherwise Catalyst runs on the calling rank alone.
  CatalystAdaptor(const std::vector<std::string>& scripts, const std::string& extractsDirectory,
                  const std::vector<std::string>& channels, bool continueOnError = false, bool allRanks = false);
  ~CatalystAdaptor();
  CatalystAdaptor(const CatalystAdaptor&) = delete;
  CatalystAdaptor& operator=(const CatalystAdaptor&) = delete;

  // Plain data (ranks broadcast it): the grid fields asked for are bits of the list offered.
  struct FieldRequest {
    bool any = false;             // some pipeline runs on this step
    std::uint64_t gridFields = 0;  // bit n: the n-th offered grid field is asked for
    bool surface = false;         // channel "surface" asked for
    bool tracers = false;         // channel "tracers" asked for
    bool amr = false;             // channel "amr" asked for (every block field is handed)
    bool wants(std::size_t field) const { return field < 64 && ((gridFields >> field) & 1u) != 0; }
  };
  // Asks the pipelines whether they run on this step and which of the grid fields offered (at most
  // 64) and other channels they need.
  FieldRequest request(Index step, double time, const std::vector<std::string>& offeredGridFields);
  // After request(): whether a pipeline asked for the grid's point array `name` on this step.
  bool gridFieldNeeded(const char* name) const;

  using GridArray = PointArray;
  // Hands the channels to the pipelines (after request() said some run): the grid of `extent`
  // with the arrays given, `surface` and `tracers` when the run has them (they must outlive the
  // call only). With `piece`, the grid handed is that box of `extent` (this rank's piece, the
  // arrays holding its nodes).
  // With `blocks` (a solver with levels), channel "amr" is its blocks with `blockArrays` (values of
  // every point of every block) as a vtkNonOverlappingAMR (AmrBuilder.hpp); with `piece` too, the
  // blocks of this rank's run only (BlockGrid::ownFirst, ownEnd) hold data.
  void execute(Index step, double time, const Extent& extent, const std::vector<GridArray>& arrays,
               const insitu::Surface* surface = nullptr, const particles::TracerView* tracers = nullptr,
               const NodeBox* piece = nullptr, const sim::BlockGrid* blocks = nullptr,
               const std::vector<GridArray>* blockArrays = nullptr);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace octoflow::adaptors
