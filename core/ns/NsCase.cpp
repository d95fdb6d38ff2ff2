#include "ns/NsCase.hpp"

#include <cmath>
#include <cstdio>

#include "common/Error.hpp"
#include "common/Format.hpp"
#include "io/CaseFile.hpp"
#include "io/CaseReader.hpp"

namespace octoflow::ns {

namespace {

const char* kSideNames[4] = {"west", "east", "south", "north"};

SideKind parseSide(const io::CaseReader& reader, const toml::table* table, int side) {
  static const std::vector<std::string> kinds = {"inflow", "outflow", "slip", "wall", "lid"};
  const char* defaults[4] = {"inflow", "outflow", "slip", "slip"};
  const std::string fallback = defaults[side];
  const std::string name = reader.string(table, "ns.boundary", kSideNames[side], &fallback);
  const std::string key = std::string("ns.boundary.") + kSideNames[side];
  if (name == "inflow" && side != kWest) reader.fail(key, "\"inflow\" is a west side only (the flow enters along +x)");
  if (name == "outflow" && side != kEast) reader.fail(key, "\"outflow\" is an east side only (the flow leaves along +x)");
  if (name == "inflow") return SideKind::Inflow;
  if (name == "outflow") return SideKind::Outflow;
  if (name == "slip") return SideKind::Slip;
  if (name == "wall") return SideKind::Wall;
  if (name == "lid") return SideKind::Lid;
  reader.fail(key, "expected one of " + io::joinQuoted(kinds) + ", got \"" + name + "\"");
}

}  // namespace

const std::vector<sim::FieldInfo>& NsCase::fields() const {
  static const std::vector<sim::FieldInfo> fields = {{"velocity", 3}, {"pressure", 1}, {"vorticity", 1}};
  return fields;
}

// Six padded velocity arrays, p, the multigrid's phi and right-hand side (4/3 of a level each),
// the obstacle's fractions and forces; the cell-centre fields (5 floats) in working memory and on
// the host.
sim::MemoryNeeds NsCase::memoryNeeds(exec::Backend) const {
  const double real = config.precision == Precision::Fp64 ? 8.0 : 4.0;
  sim::MemoryNeeds needs;
  needs.workingBytesPerNode = real * (7.0 + 8.0 / 3.0 + (config.cylinder ? 4.0 : 0.0)) + 20.0;
  needs.hostBytesPerNode = 20.0;
  needs.maxNodesPerGrid = Index{1} << 30;
  return needs;
}

std::string NsCase::describe() const {
  const Geometry& g = config.geometry;
  std::string sides;
  for (int side = 0; side < 4; ++side) {
    static const char* names[] = {"periodic", "inflow", "outflow", "slip", "wall", "lid"};
    sides += std::string(side ? ", " : "") + kSideNames[side] + " " + names[static_cast<int>(g.side[side])];
  }
  std::string text = "2D incompressible Navier-Stokes (SMAC, cubic semi-Lagrangian, multigrid red-black SOR), Re " +
                     shortNumber(reynolds) + ", " + std::to_string(g.nx) + " x " + std::to_string(g.ny) + " cells of " +
                     shortNumber(config.h) + ", dt " + shortNumber(config.dt) +
                     (cfl > 0.0 ? " (cfl " + shortNumber(cfl) + ")" : std::string()) +
                     (config.precision == Precision::Fp64 ? ", fp64" : ", fp32") + "; " + sides;
  if (config.cylinder)
    text += "; cylinder of diameter " + shortNumber(config.cylinderDiameter) + " at (" + shortNumber(config.cylinderCentre[0]) +
            ", " + shortNumber(config.cylinderCentre[1]) + ")";
  const auto levels = multigridLevels(config);
  text += "; multigrid " + std::to_string(levels.size()) + " levels to " + std::to_string(levels.back()[0]) + " x " +
          std::to_string(levels.back()[1]) + ", tolerance " + shortNumber(config.multigrid.tolerance);
  return text;
}

std::unique_ptr<sim::Simulation> NsCase::create(const io::CaseDescription& description,
                                                const sim::CreateOptions& options) const {
  return makeNsSimulation(description, *this, options);
}

std::unique_ptr<sim::SolverCase> parseNsCase(const io::CaseReader& reader, io::CaseDescription& description) {
  auto result = std::make_unique<NsCase>();
  NsCase& c = *result;
  NsConfig& config = c.config;
  if (description.dimensions != 2)
    reader.fail("domain.size", "the \"ns2d\" solver is two-dimensional: expected 2 entries [nx, ny] (cells)");
  const toml::table* table = reader.table("ns", false);
  const toml::table empty;
  const toml::table& keys = table ? *table : empty;
  reader.checkKeys(keys, "ns",
                   {"reynolds", "size", "cfl", "dt", "initial", "perturbation", "precision", "boundary", "cylinder",
                    "multigrid"});
  const auto optionalPositive = [&](const toml::table& t, const std::string& prefix, const char* key, double fallback) {
    const toml::node* node = t.get(key);
    return node ? reader.positive(*node, prefix + "." + key) : fallback;
  };
  const auto subTable = [&](const char* name) -> const toml::table* {
    const toml::node* node = keys.get(name);
    if (!node) return nullptr;
    if (!node->is_table()) reader.fail(std::string("ns.") + name, "expected a table [ns." + std::string(name) + "]");
    return node->as_table();
  };

  Geometry& g = config.geometry;
  g.nx = static_cast<int>(description.extent.nx);
  g.ny = static_cast<int>(description.extent.ny);
  if (g.nx < 8 || g.ny < 8) reader.fail("domain.size", "expected at least 8 cells a side");
  c.reynolds = optionalPositive(keys, "ns", "reynolds", 100.0);
  config.viscosity = 1.0 / c.reynolds;

  // The sides: domain.periodic makes both sides of an axis periodic; [ns.boundary] names the others.
  const toml::table* boundary = subTable("boundary");
  if (boundary) reader.checkKeys(*boundary, "ns.boundary", {"west", "east", "south", "north"});
  for (int side = 0; side < 4; ++side) {
    const int axis = side / 2;
    if (description.periodic[static_cast<std::size_t>(axis)]) {
      if (boundary && boundary->get(kSideNames[side]))
        reader.fail(std::string("ns.boundary.") + kSideNames[side],
                    std::string("the ") + (axis == 0 ? "x" : "y") + " axis is periodic (domain.periodic): its sides take no boundary");
      g.side[side] = SideKind::Periodic;
    } else {
      g.side[side] = parseSide(reader, boundary, side);
    }
  }

  // The domain's size in case units: square cells.
  config.h = 1.0;
  if (const toml::node* node = keys.get("size")) {
    const std::vector<double> size = reader.numbers(*node, "ns.size", 2);
    for (double length : size)
      if (!(length > 0.0) || !std::isfinite(length)) reader.fail("ns.size", "expected two positive lengths");
    config.h = size[0] / g.nx;
    if (std::abs(size[1] / g.ny - config.h) > 1e-9 * config.h)
      reader.fail("ns.size", "the cells must be square: " + shortNumber(size[0]) + " / " + std::to_string(g.nx) +
                                 " differs from " + shortNumber(size[1]) + " / " + std::to_string(g.ny));
  }

  if (keys.get("cfl") && keys.get("dt")) reader.fail("ns.dt", "give either cfl or dt, not both");
  if (const toml::node* node = keys.get("dt")) {
    config.dt = reader.positive(*node, "ns.dt");
  } else {
    c.cfl = optionalPositive(keys, "ns", "cfl", 0.25);
    if (c.cfl > 1.0)
      reader.fail("ns.cfl", "expected at most 1 (a departure point further than a cell upstream leaves the "
                            "interpolation's reach), got " + shortNumber(c.cfl));
    config.dt = c.cfl * config.h;
  }
  const double diffusionNumber = config.viscosity * config.dt / (config.h * config.h);
  if (diffusionNumber > 0.25)
    reader.fail(keys.get("dt") ? "ns.dt" : "ns.cfl",
                "the explicit diffusion is unstable: nu dt / h^2 = " + shortNumber(diffusionNumber) +
                    " exceeds 0.25 (dt at most " + shortNumber(0.25 * config.h * config.h / config.viscosity) + ")");

  const bool inflow = g.side[kWest] == SideKind::Inflow;
  const std::string initial = reader.choice(table, "ns", "initial",
                                            inflow ? std::vector<std::string>{"uniform", "rest", "taylor-green"}
                                                   : std::vector<std::string>{"rest", "uniform", "taylor-green"});
  config.initial = initial == "uniform" ? InitialFlow::Uniform
                                        : (initial == "rest" ? InitialFlow::Rest : InitialFlow::TaylorGreen);
  const std::string precision = reader.choice(table, "ns", "precision", {"fp32", "fp64"});
  config.precision = precision == "fp64" ? Precision::Fp64 : Precision::Fp32;

  if (const toml::table* cylinder = subTable("cylinder")) {
    reader.checkKeys(*cylinder, "ns.cylinder", {"centre", "diameter"});
    config.cylinder = true;
    config.cylinderDiameter = optionalPositive(*cylinder, "ns.cylinder", "diameter", 1.0);
    const std::array<double, 3> centre = io::point(reader, *cylinder, "ns.cylinder", "centre", 2);
    config.cylinderCentre = {centre[0], centre[1]};
    const double radius = 0.5 * config.cylinderDiameter, width = g.nx * config.h, height = g.ny * config.h;
    if (centre[0] - radius < config.h || centre[0] + radius > width - config.h || centre[1] - radius < config.h ||
        centre[1] + radius > height - config.h)
      reader.fail("ns.cylinder", "the cylinder must lie inside the domain, a cell away from its sides (domain " +
                                     shortNumber(width) + " x " + shortNumber(height) + ")");
    if (config.cylinderDiameter < 4.0 * config.h)
      reader.fail("ns.cylinder.diameter", "expected at least 4 cells across (h = " + shortNumber(config.h) + ")");
    c.solid.assign(static_cast<std::size_t>(g.nx) * g.ny, 0);
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i)
        c.solid[static_cast<std::size_t>(j) * g.nx + i] = solidFraction(config, (i + 0.5) * config.h, (j + 0.5) * config.h) >= 0.5;
  }
  config.perturbation = config.cylinder ? 0.05 : 0.0;
  if (const toml::node* node = keys.get("perturbation")) {
    config.perturbation = reader.number(*node, "ns.perturbation");
    if (!(std::abs(config.perturbation) <= 1.0)) reader.fail("ns.perturbation", "expected a number from -1 to 1");
  }

  MultigridSettings& multigrid = config.multigrid;
  if (const toml::table* settings = subTable("multigrid")) {
    reader.checkKeys(*settings, "ns.multigrid", {"levels", "tolerance", "max_cycles", "pre_smoothing", "post_smoothing", "omega"});
    multigrid.levels = static_cast<int>(io::positiveInteger(reader, *settings, "ns.multigrid", "levels", 0));
    multigrid.tolerance = optionalPositive(*settings, "ns.multigrid", "tolerance", multigrid.tolerance);
    if (multigrid.tolerance >= 1.0) reader.fail("ns.multigrid.tolerance", "expected a fraction below 1");
    multigrid.maxCycles = static_cast<int>(io::positiveInteger(reader, *settings, "ns.multigrid", "max_cycles", multigrid.maxCycles));
    multigrid.shape.preSmoothing =
        static_cast<int>(io::positiveInteger(reader, *settings, "ns.multigrid", "pre_smoothing", multigrid.shape.preSmoothing));
    multigrid.shape.postSmoothing =
        static_cast<int>(io::positiveInteger(reader, *settings, "ns.multigrid", "post_smoothing", multigrid.shape.postSmoothing));
    multigrid.shape.omega = optionalPositive(*settings, "ns.multigrid", "omega", multigrid.shape.omega);
    if (multigrid.shape.omega >= 2.0) reader.fail("ns.multigrid.omega", "expected a relaxation factor below 2");
  }
  const auto levels = multigridLevels(config);
  const int coarsest = levels.back()[0] * levels.back()[1];
  if (coarsest > 1024)
    reader.fail(multigrid.levels > 0 ? "ns.multigrid.levels" : "domain.size",
                "the multigrid's coarsest grid would be " + std::to_string(levels.back()[0]) + " x " +
                    std::to_string(levels.back()[1]) + " cells (the grid halves while both sides are even): at most "
                    "1024 cells are solved directly; choose sides with more factors of 2 (such as 1024 x 512)");

  if (const toml::table* diagnostics = reader.table("diagnostics", false)) {
    reader.checkKeys(*diagnostics, "diagnostics", {"every"});
    c.diagnosticsEvery = io::positiveInteger(reader, *diagnostics, "diagnostics", "every", c.diagnosticsEvery);
  }
  return result;
}

}  // namespace octoflow::ns
