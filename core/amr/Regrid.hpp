#pragma once
// Dynamic refinement of a block-structured solver on the octree: what a regrid decides from the
// fields on the blocks (plain data: any solver with block fields can use it; AmrLbm::adopt moves
// the LBM's state to the new octree).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "amr/BlockLinks.hpp"
#include "amr/Octree.hpp"

namespace octoflow::amr {

// What the leaves are refined by between regrids:
//   Vorticity: the largest |curl u| h of a leaf (h its spacing: the velocity difference across one
//     spacing of its level, lattice units; central differences inside the block, one-sided on its
//     faces) above the threshold refines it, below a quarter of it (by default) coarsens its family
//     (a leaf's value about doubles a level up: the quarter keeps a merged family from splitting
//     again);
//   Field: the largest value (magnitude for a vector) of a field on a leaf above the threshold
//     refines it, below the threshold (by default) coarsens its family.
enum class RegridCriterion { None, Vorticity, Field };

struct RegridSettings {
  RegridCriterion criterion = RegridCriterion::None;
  std::string field;        // Field: the solver's field; Vorticity: its velocity
  double threshold = 0.0;
  // Leaves below it coarsen (their whole family, one level); none: the criterion's default above.
  // Between it and the threshold a leaf keeps its level: leaves near the threshold do not flip.
  std::optional<double> coarsenBelow;
  std::int64_t every = 100; // level-0 steps between regrids
  bool enabled() const { return criterion != RegridCriterion::None; }
  double coarseningThreshold() const {
    if (coarsenBelow) return *coarsenBelow;
    return criterion == RegridCriterion::Vorticity ? 0.25 * threshold : threshold;
  }
};

// The criterion's value on each of `blocks` blocks of `blockNodes`^3 points: the largest over its
// points that `solid` (a byte a point, or null) leaves fluid. `values`: `components` floats a
// point, block after block, x fastest. A block's value needs its own points only, so a run of
// blocks (an MPI rank's) gives its blocks' values.
// Runs on the host's OpenMP threads, a block at a time.
std::vector<double> blockIndicator(int blockNodes, std::size_t blocks, RegridCriterion criterion, const float* values,
                                   int components, const std::uint8_t* solid);

// Refine, keep or coarsen each leaf (layout order is leaf order) from its indicator.
std::vector<LeafChange> regridChanges(const std::vector<double>& indicator, const RegridSettings& settings);

}  // namespace octoflow::amr
