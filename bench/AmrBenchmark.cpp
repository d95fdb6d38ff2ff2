// `octoflow bench amr`: the octree LBM's step time, as the seed's Table 4 measures it (one level,
// periodic, FP32: 8 x 8 x 8 leaves of 17^3 points by default, or 4 x 4 x 4 mother-leaf blocks of
// 33^3 with --leaves 4 --leaf-cells 32), or with levels refined around the domain's centre. Prints ms a step, million point updates a second (every point of every block,
// shared face points counted in each block, as the kernels update them) and the fraction of the
// copy roofline: each update reads and writes Q populations of 4 bytes. Under mpirun the blocks are
// shared over the ranks (parallel/DistributedAmrLbm.hpp: runs in Morton order cut by work, a GPU a
// rank): it prints each rank's run, the load balance and the time in exchanges too. With --regrids
// it then times regrids as a run makes them (the state handed over, a solver of the new octree
// built and adopting it), between the octree and one with half of its finest families
// merged. --collision and --les pick the operator and the LES model (csm: its eddy pass, and over
// ranks the exchange of its values, is not counted in the bytes of an update, so its roofline
// fraction reads as the step's time against the plain step's bytes). Passes or fails nothing.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "BenchTiming.hpp"
#include "BenchmarkCommands.hpp"
#include "amr/AmrLbm.hpp"
#include "common/Error.hpp"
#include "exec/CopyBandwidth.hpp"

#if OCTOFLOW_HAVE_MPI
#include "parallel/DistributedAmrLbm.hpp"
#endif

namespace octoflow::bench {

namespace {

struct AmrFlags {
  std::string backend = "auto", lattice = "D3Q27", kernel = "whole", collision = "bgk", les = "none";
  int leaves = 8, levels = 1, leafCells = 16, regrids = 0;
  long long steps = 0;
  bool digest = false;
};

#if OCTOFLOW_HAVE_MPI
using BenchSolver = parallel::DistributedAmrLbm;
std::unique_ptr<BenchSolver> solverOf(const amr::Octree& tree, const amr::AmrLbmSettings& settings,
                                      const amr::AmrLbmHandOver* previous = nullptr) {
  return previous ? std::make_unique<BenchSolver>(MPI_COMM_WORLD, tree, settings, std::vector<std::uint8_t>{}, previous)
                  : std::make_unique<BenchSolver>(MPI_COMM_WORLD, tree, settings);
}
const amr::AmrLbm& localOf(const BenchSolver& solver) { return solver.local(); }
// Each rank's own blocks handed over, the other ranks' that its part of `next` reads exchanged.
amr::AmrLbmHandOver handedOver(BenchSolver& solver, const amr::Octree& next) { return solver.handOver(next); }

#else
using BenchSolver = amr::AmrLbm;
std::unique_ptr<BenchSolver> solverOf(const amr::Octree& tree, const amr::AmrLbmSettings& settings,
                                      const amr::AmrLbmHandOver* previous = nullptr) {
  return previous ? std::make_unique<BenchSolver>(tree, settings, std::vector<std::uint8_t>{}, *previous)
                  : std::make_unique<BenchSolver>(tree, settings);
}
const amr::AmrLbm& localOf(const BenchSolver& solver) { return solver; }
amr::AmrLbmHandOver handedOver(BenchSolver& solver, const amr::Octree&) { return solver.handOver(); }
#endif

// `tree` with the finest level's leaves in the half x < centre merged (the whole families there).
amr::Octree halfMerged(const amr::Octree& tree) {
  const int finest = tree.depth();
  const double centre = tree.rootBlocks()[0] / 2.0;
  std::vector<int> merged;
  for (std::size_t leaf = 0; leaf < tree.leafCount(); ++leaf) {
    const amr::BlockKey& key = tree.leaves()[leaf];
    if (key.level == finest && (key.i + 1) * std::ldexp(1.0, -key.level) <= centre) merged.push_back(static_cast<int>(leaf));
  }
  amr::Octree coarser = tree;
  coarser.coarsen(merged);
  if (coarser.leaves() == tree.leaves())
    throw InputError("--regrids", "", "no family of the finest level lies in the half x < centre: more --leaves");
  return coarser;
}

// `count` regrids from `solver`'s octree `tree` to `coarser` (halfMerged) and back, a level-0
// step before each: the state handed over (AmrLbm::handOver; over ranks
// DistributedAmrLbm::handOver, the blocks that change rank exchanged), then the new octree's
// solver built from it (its set-up and AmrLbm::adopt), as AmrLbmSimulation::regrid makes them.
// Prints rank 0's times.
void timeRegrids(std::unique_ptr<BenchSolver>& solver, const amr::Octree& tree, const amr::Octree& coarser,
                 const amr::AmrLbmSettings& settings, int count, bool root) {
  const amr::Octree* octrees[2] = {&coarser, &tree};
  const std::size_t blocks[2] = {amr::leafBlocks(coarser, settings.leafCells).blocks.size(),
                                 amr::leafBlocks(tree, settings.leafCells).blocks.size()};
  double handing = 0.0, rebuilding = 0.0;
  for (int r = 0; r < count; ++r) {
    const amr::Octree& next = *octrees[r % 2];
    solver->advance(1);
    barrierOfAllRanks();
    const auto start = std::chrono::steady_clock::now();
    const amr::AmrLbmHandOver previous = handedOver(*solver, next);
    barrierOfAllRanks();
    const double handed = secondsSince(start);
    solver.reset();  // as a run does: the old solver's other arrays freed first
    solver = solverOf(next, settings, &previous);
    barrierOfAllRanks();
    handing += handed;
    rebuilding += secondsSince(start) - handed;
  }
  if (!root) return;
  std::printf("  %d regrids between %zu and %zu blocks: %.1f ms each (the state handed over %.1f ms, the new "
              "octree's solver built and adopting it %.1f ms)\n",
              count, blocks[1], blocks[0], 1e3 * (handing + rebuilding) / count, 1e3 * handing / count, 1e3 * rebuilding / count);
}

int runAmrBenchmark(const AmrFlags& flags) {
  const exec::Backend backend = exec::resolveBackend(exec::parseBackendChoice(flags.backend, "--backend"));
  if (flags.leaves < 1 || flags.leaves > 64) throw InputError("--leaves", "", "expected 1 to 64 leaves a side");
  if (flags.levels < 1 || flags.levels > amr::kMaxLevels)
    throw InputError("--levels", "", "expected 1 to " + std::to_string(amr::kMaxLevels));
  if (flags.steps < 0) throw InputError("--steps", "", "expected a positive count");
  if (flags.regrids < 0) throw InputError("--regrids", "", "expected a positive count");
  if (flags.regrids > 0 && flags.levels < 2)
    throw InputError("--regrids", "", "a regrid merges leaves of the finest level: --levels 2 or more");
  if (flags.leafCells != 16 && flags.leafCells != 32)
    throw InputError("--leaf-cells", "", "expected 16 (17^3 points a leaf) or 32 (33^3: mother-leaf blocks)");
  lbm::LatticeKind lattice;
  if (flags.lattice == "D3Q19")
    lattice = lbm::LatticeKind::D3Q19;
  else if (flags.lattice == "D3Q27")
    lattice = lbm::LatticeKind::D3Q27;
  else
    throw InputError("--lattice", "", "expected D3Q19 or D3Q27, got '" + flags.lattice + "'");

  // Levels: the leaves within a quarter of the domain's width of its centre, refined level by level.
  amr::Octree tree({flags.leaves, flags.leaves, flags.leaves}, {true, true, true}, flags.levels - 1);
  for (int level = 1; level < flags.levels; ++level) {
    std::vector<int> inner;
    for (std::size_t leaf = 0; leaf < tree.leafCount(); ++leaf) {
      const amr::BlockKey& key = tree.leaves()[leaf];
      if (key.level != level - 1) continue;
      const double size = std::ldexp(1.0, -key.level), centre = flags.leaves / 2.0;
      const double position[3] = {(key.i + 0.5) * size, (key.j + 0.5) * size, (key.k + 0.5) * size};
      double distance = 0.0;
      for (double p : position) distance = std::max(distance, std::abs(p - centre));
      if (distance <= flags.leaves / 4.0 * std::ldexp(1.0, -(level - 1))) inner.push_back(static_cast<int>(leaf));
    }
    tree.refine(inner);
  }

  amr::AmrLbmSettings settings;
  if (!amr::amrKernelNamed(flags.kernel, settings.kernel))
    throw InputError("--kernel", "", "expected naive, split, streams, classes, sorted or whole, got '" + flags.kernel + "'");
  settings.lattice = lattice;
  settings.collision = collisionOption(flags.collision);
  settings.les = lbm::Les::withDefaultConstant(lesOption(flags.les));
  if (!amr::amrKernelRuns(settings.kernel, settings.collision))
    throw InputError("--kernel", "", "the " + flags.kernel + " kernel runs bgk only: use whole or sorted with " + flags.collision);
  settings.tau = 0.6;
  settings.backend = backend;
  settings.leafCells = flags.leafCells;
  const std::size_t blockCount = amr::leafBlocks(tree, flags.leafCells).blocks.size();
  if (blockCount < static_cast<std::size_t>(worldRanks()))
    throw InputError("--leaves", "", "the octree has " + std::to_string(blockCount) + " blocks, fewer than the " +
                                         std::to_string(worldRanks()) + " MPI ranks: more leaves or levels, or fewer ranks");
  const amr::Octree coarser = flags.regrids > 0 ? halfMerged(tree) : tree;
  std::unique_ptr<BenchSolver> owner = solverOf(tree, settings);
  BenchSolver& solver = *owner;
  const amr::AmrLbm& local = localOf(solver);
#if OCTOFLOW_HAVE_MPI
  const std::vector<std::int32_t> runStarts = solver.runStarts();
  const bool root = solver.rank() == 0;
#else
  const std::vector<std::int32_t> runStarts{0, static_cast<std::int32_t>(local.layout().blocks.size())};
  const bool root = true;
#endif
  solver.initialise([](const double (&x)[3], float& density, float (&velocity)[3]) {
    density = 1.0f;
    velocity[0] = static_cast<float>(0.02 * std::sin(0.1 * x[1]));
    velocity[1] = static_cast<float>(0.02 * std::sin(0.1 * x[2]));
    velocity[2] = static_cast<float>(0.02 * std::sin(0.1 * x[0]));
  });

  // Point updates a step of level 0: each level's points, times its sub-steps (all ranks together).
  const amr::BlockLayout& layout = local.layout();
  double updates = 0.0;
  for (int level = 0; level < local.levels(); ++level)
    updates += std::ldexp(static_cast<double>(layout.byLevel[static_cast<std::size_t>(level)].size()) *
                              static_cast<double>(layout.pointsPerBlock()),
                          level);
  const TimedSteps timed = timeSteps([&](long long steps) { solver.advance(steps); }, flags.steps, false, 100000);
  const double stepSeconds = timed.seconds / static_cast<double>(timed.steps);
  const int q = lbm::latticeQ(lattice);
  const double bytesPerUpdate = 2.0 * q * sizeof(float);
  const exec::CopyBandwidth copy =
      exec::measureCopyBandwidth(backend, backend == exec::Backend::Cuda ? std::size_t{1} << 30 : std::size_t{1} << 26);
  // `--digest`: density and velocity of every point after the run (gathered on every rank:
  // collective), the same on any number of ranks.
  std::string digest;
  if (flags.digest) {
    std::vector<float> density, velocity;
    solver.fetchMoments(density, velocity);
    Digest hash;
    hash.add(density.data(), density.size() * sizeof(float));
    hash.add(velocity.data(), velocity.size() * sizeof(float));
    digest = hash.hex();
  }
  const int ranks = static_cast<int>(runStarts.size()) - 1;
  // Against the copy roofline of all the ranks' devices (each measured alike: rank 0's times ranks).
  const double roofline = updates * bytesPerUpdate / stepSeconds / (copy.bytesPerSecond * ranks);
  if (!root) {
    if (flags.regrids > 0) timeRegrids(owner, tree, coarser, settings, flags.regrids, root);
    return 0;
  }
  std::printf("octree LBM %s %s%s%s %s, %d^3 leaves of %d^3, %d level(s), %zu blocks, periodic, FP32, %s kernel%s\n",
              flags.lattice.c_str(), flags.collision.c_str(), flags.les == "none" ? "" : " les=", flags.les == "none" ? "" : flags.les.c_str(),
              exec::backendName(backend), flags.leaves, flags.leafCells + 1, local.levels(),
              layout.blocks.size(), flags.kernel.c_str(), ranks > 1 ? (", " + std::to_string(ranks) + " ranks").c_str() : "");
  std::printf("  %lld steps in %.3f s: %.3f ms a step, %.1f MLUPS (%.0f point updates a step), %.1f %% of the copy "
              "roofline (%.0f GB/s%s, %.0f B an update)\n",
              timed.steps, timed.seconds, 1e3 * stepSeconds, updates / stepSeconds / 1e6, updates, 100.0 * roofline,
              copy.bytesPerSecond / 1e9, ranks > 1 ? " a rank" : "", bytesPerUpdate);
  if (ranks > 1) {
    // Load balance: each run's work (blockWork units a step) against the mean; the largest sets the pace.
    const std::vector<std::int64_t> work = amr::runWork(layout, runStarts);
    double total = 0.0, largest = 0.0;
    for (const std::int64_t part : work) {
      total += static_cast<double>(part);
      largest = std::max(largest, static_cast<double>(part));
    }
    std::printf("  runs in Morton order (rank: blocks, work):");
    for (int r = 0; r < ranks; ++r)
      std::printf(" %d: %d..%d %.1f %%", r, runStarts[static_cast<std::size_t>(r)], runStarts[static_cast<std::size_t>(r) + 1] - 1,
                  100.0 * static_cast<double>(work[static_cast<std::size_t>(r)]) / total);
    std::printf("\n  load balance %.3f (largest run's work / mean); rank 0 holds %zu of the %zu blocks (its %d and their "
                "neighbours)\n",
                largest / (total / ranks), local.heldBlocks().size(), layout.blocks.size(), local.ownedBlocks());
#if OCTOFLOW_HAVE_MPI
    // The run's own exchanges (the digest's gathering is not one).
    const parallel::DistributedAmrLbm::Traffic& traffic = solver.traffic();
    const double steps = static_cast<double>(solver.step());
    std::printf("  rank 0: %.2f MB sent a step in %.1f exchanges, %.3f ms a step in them (halos: %s)\n",
                traffic.bytesSent / steps / 1e6, static_cast<double>(traffic.exchanges) / steps, 1e3 * traffic.seconds / steps,
                solver.haloPath());
#endif
  }
  if (flags.digest)
    std::printf("  digest of the density and velocity after step %lld: %s\n", static_cast<long long>(local.step()),
                digest.c_str());
  std::fflush(stdout);
  if (flags.regrids > 0) timeRegrids(owner, tree, coarser, settings, flags.regrids, root);
  return 0;
}

}  // namespace

std::function<int()> defineAmrBenchmark(CLI::App& command) {
  auto flags = std::make_shared<AmrFlags>();
  command.add_option("--backend", flags->backend, "auto | cuda | cpu");
  command.add_option("--lattice", flags->lattice, "D3Q19 | D3Q27 (default D3Q27, as the seed)");
  command.add_option("--leaves", flags->leaves, "leaves a side of level 0 (default 8: 512 leaves)");
  command.add_option("--leaf-cells", flags->leafCells, "cells a side of a leaf block: 16 (default) or 32 (33^3 "
                     "mother-leaf blocks: --leaves 4 covers the domain of 8 leaves of 16)");
  command.add_option("--levels", flags->levels, "levels, refined around the centre (default 1)");
  command.add_option("--kernel", flags->kernel, "naive (one kernel, every point through the links) | split (inner "
                     "points and block shells apart) | streams (split, the two on CUDA streams at once) | classes (the shell as 26 "
                     "templated position classes, one launch) | sorted (the shell points sorted by kind: same level, linked, "
                     "interface; one launch a kind) | whole (blocks among blocks of their level stepped whole, "
                     "a thread a point; the others sorted; default)");
  command.add_option("--collision", flags->collision, "bgk (default) | trt | mrt");
  command.add_option("--les", flags->les, "none (default) | smagorinsky | csm");
  command.add_option("--steps", flags->steps, "timed steps of level 0 (default: about a second)");
  command.add_option("--regrids", flags->regrids,
                     "then time this many regrids (the state to the host, the new octree's solver adopting it) between "
                     "the octree and one with half of its finest families merged (--levels 2 or more)");
  command.add_flag("--digest", flags->digest,
                   "print a fingerprint of the final density and velocity (the same on any number of MPI ranks)");
  return [flags] { return runAmrBenchmark(*flags); };
}

}  // namespace octoflow::bench
