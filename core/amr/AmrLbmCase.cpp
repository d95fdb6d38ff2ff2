#include "amr/AmrLbmCase.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "amr/BlockLinks.hpp"
#include "common/Error.hpp"
#include "common/Format.hpp"
#include "geometry/Obstacle.hpp"
#include "io/CaseFile.hpp"
#include "io/CaseReader.hpp"

namespace octoflow::amr {

namespace {

using io::CaseReader;

constexpr int kDeepestLevel = kMaxLevels - 1;

// The solid nodes the obstacles mark on `extent` (node coordinates x' = scale x + shift of the
// case's), OR-ed into `mask`; an STL problem is reported with the obstacle's key (with a reader:
// while the case is read).
void markObstacles(const CaseReader* reader, const std::vector<geometry::ObstacleSpec>& obstacles, double scale,
                   const std::array<double, 3>& shift, const Extent& extent, std::uint8_t* mask) {
  for (std::size_t n = 0; n < obstacles.size(); ++n) {
    try {
      geometry::rasterize(geometry::transformed(obstacles[n], scale, shift), extent, mask);
    } catch (const InputError& error) {
      if (!reader || obstacles[n].file.empty() || error.source() != obstacles[n].file) throw;
      reader->fail("obstacle[" + std::to_string(n) + "].file", error.what());
    }
  }
}

// Whether an obstacle's surface passes within `distance` (level-0 spacings) of the leaf: the nodes
// at the leaf's spacing over its box widened by `distance` hold both solid and fluid.
bool nearSurface(const CaseReader& reader, const AmrLbmCase& amrCase, const BlockKey& leaf) {
  const double spacing = std::ldexp(1.0, -leaf.level);
  const int margin = static_cast<int>(std::ceil(amrCase.refineDistance / spacing));
  const Index side = amrCase.leafCells + 2 * margin + 1;
  const Extent extent{side, side, side};
  const std::int64_t key[3] = {leaf.i, leaf.j, leaf.k};
  std::array<double, 3> shift{};
  for (int axis = 0; axis < 3; ++axis) shift[static_cast<std::size_t>(axis)] = -static_cast<double>(key[axis] * amrCase.leafCells - margin);
  std::vector<std::uint8_t> mask(static_cast<std::size_t>(extent.cellCount()), 0);
  markObstacles(&reader, amrCase.flow.obstacles, std::ldexp(1.0, leaf.level), shift, extent, mask.data());
  const auto solid = std::count(mask.begin(), mask.end(), std::uint8_t{1});
  return solid > 0 && solid < static_cast<std::ptrdiff_t>(mask.size());
}

Octree buildOctree(const CaseReader& reader, const AmrLbmCase& amrCase, const std::array<int, 3>& rootBlocks,
                   const std::array<bool, 3>& periodic) {
  Octree octree(rootBlocks, periodic, amrCase.maxLevel);
  if (amrCase.refine != RefineCriterion::Obstacles) return octree;
  for (int level = 0; level < amrCase.maxLevel; ++level) {
    std::vector<int> flagged;
    for (std::size_t n = 0; n < octree.leafCount(); ++n)
      if (octree.leaves()[n].level == level && nearSurface(reader, amrCase, octree.leaves()[n]))
        flagged.push_back(static_cast<int>(n));
    if (flagged.empty()) break;
    octree.refine(flagged);
  }
  return octree;
}

// The obstacles on the points of every leaf block (block order, x fastest).
std::vector<std::uint8_t> solidPointsOf(const CaseReader* reader, const AmrLbmCase& amrCase, const BlockLayout& layout) {
  if (amrCase.flow.obstacles.empty()) return {};
  const Index B = layout.blockNodes;
  const std::size_t points = static_cast<std::size_t>(layout.pointsPerBlock());
  std::vector<std::uint8_t> mask(layout.blocks.size() * points, 0);
  for (std::size_t b = 0; b < layout.blocks.size(); ++b) {
    const BlockPlacement& block = layout.blocks[b];
    const std::array<double, 3> shift{-static_cast<double>(block.origin[0]), -static_cast<double>(block.origin[1]),
                                      -static_cast<double>(block.origin[2])};
    markObstacles(reader, amrCase.flow.obstacles, std::ldexp(1.0, block.level), shift, Extent{B, B, B},
                  mask.data() + b * points);
  }
  return mask;
}

// [amr] regrid = "none" | "vorticity" | a field's name, regrid_threshold, regrid_coarsen_below,
// regrid_every.
void readRegrid(const CaseReader& reader, const toml::table& table, AmrLbmCase& result) {
  std::vector<std::string> choices = {"none", "vorticity"};
  for (const sim::FieldInfo& field : result.flow.fields()) choices.push_back(field.name);
  const std::string regrid = reader.choice(&table, "amr", "regrid", choices);
  RegridSettings& settings = result.regrid;
  if (regrid == "none") {
    for (const char* key : {"regrid_threshold", "regrid_coarsen_below", "regrid_every"})
      if (table.get(key)) reader.fail(std::string("amr.") + key, "only a regrid criterion (amr.regrid) takes it");
    return;
  }
  settings.criterion = regrid == "vorticity" ? RegridCriterion::Vorticity : RegridCriterion::Field;
  settings.field = regrid == "vorticity" ? "velocity" : regrid;
  const toml::node* threshold = table.get("regrid_threshold");
  if (!threshold)
    reader.fail("amr.regrid_threshold", "regrid = \"" + regrid + "\" needs a threshold (" +
                                            (regrid == "vorticity" ? "|curl u| h, lattice units: try 0.01" : "the field's value") + ")");
  settings.threshold = settings.criterion == RegridCriterion::Vorticity ? reader.positive(*threshold, "amr.regrid_threshold")
                                                                        : reader.number(*threshold, "amr.regrid_threshold");
  if (const toml::node* below = table.get("regrid_coarsen_below")) {
    const double value = reader.number(*below, "amr.regrid_coarsen_below");
    if (!(value <= settings.threshold))
      reader.fail("amr.regrid_coarsen_below", "expected at most regrid_threshold (" + shortNumber(settings.threshold) +
                                                  "), got " + shortNumber(value) +
                                                  ": leaves between the two would be refined and merged at every regrid");
    settings.coarsenBelow = value;
  }
  if (const toml::node* every = table.get("regrid_every")) {
    settings.every = reader.integer(*every, "amr.regrid_every");
    if (settings.every < 1) reader.fail("amr.regrid_every", "expected a positive number of level-0 steps, got " + std::to_string(settings.every));
  }
  if (result.maxLevel == 0) reader.fail("amr.regrid", "max_level = 0 leaves nothing to refine: raise amr.max_level");
}

void readAmrTable(const CaseReader& reader, AmrLbmCase& result) {
  const toml::table* table = reader.table("amr", false);
  const toml::table empty;
  if (!table) table = &empty;
  reader.checkKeys(*table, "amr",
                   {"max_level", "leaf_cells", "refine", "refine_distance", "kernel", "regrid", "regrid_threshold", "regrid_coarsen_below",
                    "regrid_every"});
  if (const toml::node* level = table->get("max_level")) {
    const Index value = reader.integer(*level, "amr.max_level");
    if (value < 0 || value > kDeepestLevel)
      reader.fail("amr.max_level", "expected an integer from 0 to " + std::to_string(kDeepestLevel) + ", got " +
                                       std::to_string(value));
    result.maxLevel = static_cast<int>(value);
  }
  if (const toml::node* cells = table->get("leaf_cells")) {
    const Index value = reader.integer(*cells, "amr.leaf_cells");
    if (value != 16 && value != 32)
      reader.fail("amr.leaf_cells", "leaves hold 16 cells a side (17^3 node-centred points) or 32 (33^3, mother-leaf "
                                    "blocks), got " + std::to_string(value));
    result.leafCells = static_cast<int>(value);
  }
  const bool obstacles = !result.flow.obstacles.empty();
  const std::string refine = reader.choice(table, "amr", "refine",
                                           obstacles ? std::vector<std::string>{"obstacles", "none"}
                                                     : std::vector<std::string>{"none", "obstacles"});
  result.refine = refine == "obstacles" ? RefineCriterion::Obstacles : RefineCriterion::None;
  if (result.refine == RefineCriterion::Obstacles && !obstacles)
    reader.fail("amr.refine", "\"obstacles\" refines around the obstacles: add an [[obstacle]], or refine = \"none\"");
  if (const toml::node* distance = table->get("refine_distance")) {
    if (result.refine != RefineCriterion::Obstacles) reader.fail("amr.refine_distance", "only refine = \"obstacles\" takes it");
    result.refineDistance = reader.positive(*distance, "amr.refine_distance");
    if (result.refineDistance > 1e6) reader.fail("amr.refine_distance", "expected at most 1e6 level-0 spacings");
  }
  const std::string kernel = reader.choice(table, "amr", "kernel", {"whole", "sorted", "split", "streams", "classes", "naive"});
  amrKernelNamed(kernel, result.kernel);
  const lbm::CollisionKind collision = result.flow.config.collision;
  if (!amrKernelRuns(result.kernel, collision))
    reader.fail("amr.kernel", "\"" + kernel + "\" (one of the kernel comparison's forms) runs collision = \"bgk\" only; " +
                                  lbm::collisionName(collision) + " runs with \"whole\" or \"sorted\"");
  readRegrid(reader, *table, result);
}

}  // namespace

std::vector<std::uint8_t> AmrLbmCase::solidPointsOn(const BlockLayout& layout) const {
  return solidPointsOf(nullptr, *this, layout);
}

AmrLbmSettings AmrLbmCase::settings(exec::Backend backend) const {
  AmrLbmSettings settings;
  settings.lattice = flow.config.lattice;
  settings.tau = flow.config.tau;
  const lbm::Vector3& a = flow.config.acceleration;
  settings.acceleration = {a.x, a.y, a.z};
  const lbm::Vector3& start = flow.config.initialVelocity;
  settings.initialVelocity = {start.x, start.y, start.z};
  settings.collision = flow.config.collision;
  settings.trtMagic = flow.config.trtMagic;
  settings.les = flow.config.les;
  settings.backend = backend;
  settings.kernel = kernel;
  settings.leafCells = leafCells;
  settings.faces = flow.config.faces;
  return settings;
}

const std::vector<sim::FieldInfo>& AmrLbmCase::fields() const { return flow.fields(); }

std::string AmrLbmCase::describe() const {
  const BlockLayout layout = leafBlocks(*octree, leafCells);
  std::string levels;
  for (std::size_t level = 0; level < layout.byLevel.size(); ++level)
    levels += (level ? ", " : "") + std::to_string(layout.byLevel[level].size());
  const double points = static_cast<double>(layout.blocks.size()) * static_cast<double>(layout.pointsPerBlock());
  const long long solid = std::count(solidPoints.begin(), solidPoints.end(), std::uint8_t{1});
  char text[400];
  std::snprintf(text, sizeof text,
                "%s %s%s on an octree: %d level(s), %zu leaves of %d^3 points (%s a level), %.3g points, %lld in "
                "obstacles, tau %.4g at level 0, %s kernels",
                lbm::latticeName(flow.config.lattice), lbm::collisionName(flow.config.collision),
                flow.config.les.model == lbm::LesModel::Csm           ? " + CSM"
                : flow.config.les.model == lbm::LesModel::Smagorinsky ? " + Smagorinsky"
                                                                      : "",
                layout.levels, layout.blocks.size(), layout.blockNodes, levels.c_str(),
                points, solid,
                static_cast<double>(flow.config.tau),
                amrKernelName(kernel));
  std::string result = text;
  if (regrid.enabled()) {
    std::snprintf(text, sizeof text, "; regrid every %lld steps to level %d where %s > %g, merged below %g",
                  static_cast<long long>(regrid.every), maxLevel,
                  regrid.criterion == RegridCriterion::Vorticity ? "|curl u| h" : regrid.field.c_str(), regrid.threshold,
                  regrid.coarseningThreshold());
    result += text;
  }
  return result;
}

// Populations twice, the pre-collision copies of the blocks read across levels (at most twice
// more), moments and the level-0 view where the solver lives, the obstacle mask, CSM's eddy parts;
// a level-0 node's share of them (the run sizes memory by level-0 nodes).
sim::MemoryNeeds AmrLbmCase::memoryNeeds(exec::Backend backend) const {
  const BlockLayout layout = leafBlocks(*octree, leafCells);
  const double points = static_cast<double>(layout.blocks.size()) * static_cast<double>(layout.pointsPerBlock());
  const double sources = static_cast<double>(layout.crossLevelSources()) * static_cast<double>(layout.pointsPerBlock());
  const double q = lbm::latticeQ(flow.config.lattice);
  const double nodes = static_cast<double>(flow.config.extent.cellCount());
  const double eddy = flow.config.les.model == lbm::LesModel::Csm ? 4.0 : 0.0;
  const double working = points * (2.0 * q * 4.0 + 16.0 + 1.0 + eddy) + sources * 2.0 * q * 4.0 + nodes * (16.0 + 8.0);
  sim::MemoryNeeds needs;
  needs.workingBytesPerNode = working / nodes;
  // Host: the block fields and the level-0 view, and a checkpoint's copy of the populations.
  needs.hostBytesPerNode = (points * 16.0 + (points + sources) * 2.0 * q * 4.0) / nodes + 16.0;
  (void)backend;  // the same on either backend: on the CPU the working memory is counted apart
  needs.gatherBytesPerNode = 0.0;
  needs.maxNodesPerGrid = Index{1} << 31;
  return needs;
}

std::unique_ptr<sim::Simulation> AmrLbmCase::create(const io::CaseDescription& description,
                                                    const sim::CreateOptions& options) const {
  return makeAmrLbmSimulation(description, *this, options);
}

std::unique_ptr<sim::SolverCase> parseAmrLbmCase(const CaseReader& reader, io::CaseDescription& description) {
  auto result = std::make_unique<AmrLbmCase>();
  lbm::readFlowTables(reader, description, result->flow);
  const lbm::UniformSolverConfig& config = result->flow.config;
  if (reader.table("lbm", true)->get("blocking"))
    reader.fail("lbm.blocking", "temporal blocking runs the uniform LBM (case.solver = \"lbm\"), not the octree");
  if (lbm::latticeDimensions(config.lattice) != 3)
    reader.fail("lbm.lattice", "the octree LBM runs D3Q19 or D3Q27 (3D domains)");
  if (config.storage != lbm::StorageKind::Fp32) reader.fail("lbm.storage", "the octree LBM stores \"fp32\"");
  readAmrTable(reader, *result);
  const Index leaf = result->leafCells;
  std::array<int, 3> rootBlocks{};
  std::array<bool, 3> periodic{};
  const char* axes = "xyz";
  for (int axis = 0; axis < 3; ++axis) {
    const Index nodes = description.extent.size(axis);
    const bool wraps = description.periodic[static_cast<std::size_t>(axis)];
    const Index cells = wraps ? nodes : nodes - 1;
    if (cells < leaf || cells % leaf != 0 || cells / leaf > 4096) {
      const Index below = std::max<Index>(1, cells / leaf) * leaf + (wraps ? 0 : 1);
      const std::string c = std::to_string(leaf);
      reader.fail("domain.size", "on the octree, level 0 has " + c + " n + 1 nodes on an axis with walls and " + c +
                                     " n on a periodic one (root blocks of amr.leaf_cells = " + c + " cells, n <= 4096): " +
                                     axes[axis] + " has " + std::to_string(nodes) + " (try " + std::to_string(below) + ")");
    }
    rootBlocks[static_cast<std::size_t>(axis)] = static_cast<int>(cells / leaf);
    periodic[static_cast<std::size_t>(axis)] = wraps;
  }
  result->octree = std::make_shared<const Octree>(buildOctree(reader, *result, rootBlocks, periodic));
  result->solidPoints = solidPointsOf(&reader, *result, leafBlocks(*result->octree, result->leafCells));
  const auto solid = std::count(result->solidPoints.begin(), result->solidPoints.end(), std::uint8_t{1});
  if (!result->flow.obstacles.empty() && solid == 0)
    reader.fail("obstacle", "the obstacles cover no point of the octree (level-0 node (i,j,k) sits at (i,j,k))");
  if (solid > 0 && solid == static_cast<std::ptrdiff_t>(result->solidPoints.size()))
    reader.fail("obstacle", "the obstacles fill the whole domain");
  return result;
}

}  // namespace octoflow::amr
