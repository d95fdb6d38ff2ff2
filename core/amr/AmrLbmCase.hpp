#pragma once
// The octree LBM's case section ([lbm], [units], [[obstacle]] as the uniform LBM reads them, and
// [amr]; schema in docs/CASES.md) and the Simulation that runs it. Registered as
// case.solver = "lbm-amr".
//
// domain.size counts the nodes of level 0: c n + 1 on an axis with walls, c n on a periodic one
// (root blocks of c = amr.leaf_cells cells, 16 or 32). Leaves are refined where an obstacle's surface passes within
// amr.refine_distance of them, down to amr.max_level, and 2:1 balanced.
#include <memory>
#include <vector>

#include "amr/AmrLbm.hpp"
#include "amr/Octree.hpp"
#include "amr/Regrid.hpp"
#include "lbm/LbmCase.hpp"
#include "sim/SolverCase.hpp"

namespace octoflow::amr {

enum class RefineCriterion { None, Obstacles };

class AmrLbmCase : public sim::SolverCase {
public:

  lbm::LbmCase flow;  // [units] [lbm] [[obstacle]]: lattice, tau, force, LES, obstacles
  int maxLevel = 1;
  int leafCells = 16;  // cells a side of a leaf: 16 (17^3 node-centred points) or 32 (33^3, mother-leaf blocks)
  RefineCriterion refine = RefineCriterion::Obstacles;
  double refineDistance = 4.0;  // level-0 spacings
  AmrKernel kernel = AmrKernel::Whole;
  // Dynamic refinement ([amr] regrid keys): every `regrid.every` level-0 steps the leaves are
  // refined or coarsened by the criterion, never below the static refinement (`octree`).
  RegridSettings regrid;
  // Made from the keys above while the case is read (static refinement).
  std::shared_ptr<const Octree> octree;
  std::vector<std::uint8_t> solidPoints;  // a byte a point of every leaf block (empty: no obstacle)

  AmrLbmSettings settings(exec::Backend backend) const;
  // The obstacles on the points of the blocks of an octree (as solidPoints for `octree`).
  std::vector<std::uint8_t> solidPointsOn(const BlockLayout& layout) const;
  const std::vector<sim::FieldInfo>& fields() const override;
  bool hasLevels() const override { return true; }
  std::string describe() const override;
  sim::MemoryNeeds memoryNeeds(exec::Backend backend) const override;
  std::unique_ptr<sim::Simulation> create(const io::CaseDescription& description,
                                          const sim::CreateOptions& options) const override;
};

// Parses the octree LBM's tables of a case (the registry's entry).
std::unique_ptr<sim::SolverCase> parseAmrLbmCase(const io::CaseReader& reader, io::CaseDescription& description);

std::unique_ptr<sim::Simulation> makeAmrLbmSimulation(const io::CaseDescription& description, const AmrLbmCase& amrCase,
                                                      const sim::CreateOptions& options);

}  // namespace octoflow::amr
