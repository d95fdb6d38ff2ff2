#include "lbm/LbmCase.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "common/Error.hpp"
#include "exec/Memory.hpp"
#include "io/CaseFile.hpp"
#include "io/CaseReader.hpp"
#include "lbm/LbmSimulation.hpp"
#include "lbm/VelocityTap.hpp"

namespace octoflow::lbm {

namespace {

using io::CaseReader;
using io::point;
using io::resolvePath;
using io::typeName;

Vector3 toVector(const std::vector<double>& values) {
  Vector3 v;
  v.x = values.size() > 0 ? static_cast<float>(values[0]) : 0.0f;
  v.y = values.size() > 1 ? static_cast<float>(values[1]) : 0.0f;
  v.z = values.size() > 2 ? static_cast<float>(values[2]) : 0.0f;
  return v;
}

// A vector of the case (body force, boundary velocity) in single precision: NaN, infinity or a
// value beyond float's range would surface only as a diverged run, after output exists.
Vector3 finiteVector(const CaseReader& reader, const toml::node& node, const std::string& key, int dimensions) {
  const std::vector<double> values = reader.numbers(node, key, dimensions);
  for (const double value : values)
    if (!std::isfinite(static_cast<float>(value)))
      reader.fail(key, "expected finite numbers (single precision), got " + std::to_string(value));
  return toVector(values);
}

// An obstacle's point (center, min, max, translate), finite: the geometry would reject NaN only
// without the key's full name.
std::array<double, 3> finitePoint(const CaseReader& reader, const toml::table& entry, const std::string& prefix,
                                  const std::string& key, int dimensions) {
  const std::array<double, 3> values = point(reader, entry, prefix, key, dimensions);
  for (const double value : values)
    if (!std::isfinite(value)) reader.fail(prefix + "." + key, "expected finite numbers, got " + std::to_string(value));
  return values;
}

void readUnitsTable(const CaseReader& reader, const io::CaseDescription&, LbmCase& result) {
  const toml::table* table = reader.table("units", false);
  if (!table) return;
  reader.checkKeys(*table, "units", {"length", "velocity", "viscosity", "density"});
  result.units.given = true;
  auto required = [&](const char* key, const char* what) {
    const toml::node* node = table->get(key);
    if (!node) reader.fail(std::string("units.") + key, std::string("missing (expected ") + what + ")");
    return reader.positive(*node, std::string("units.") + key);
  };
  result.units.length = required("length", "metres per lattice spacing");
  result.units.velocity = required("velocity", "metres per second per lattice velocity unit");
  if (const toml::node* viscosity = table->get("viscosity"))
    result.units.viscosity = reader.positive(*viscosity, "units.viscosity");
  if (const toml::node* density = table->get("density")) result.units.density = reader.positive(*density, "units.density");
}

void readLbmTable(const CaseReader& reader, const io::CaseDescription& common, LbmCase& result) {
  const toml::table* table = reader.table("lbm", true);
  reader.checkKeys(*table, "lbm",
                   {"lattice", "collision", "trt_magic", "les", "les_constant", "storage", "tau", "viscosity", "body_force",
                    "initial_velocity", "blocking"});
  const std::string lattice = reader.choice(table, "lbm", "lattice", {"D2Q9", "D3Q19", "D3Q27"}, true);
  result.config.lattice = lattice == "D2Q9"    ? LatticeKind::D2Q9
                       : lattice == "D3Q19" ? LatticeKind::D3Q19
                                            : LatticeKind::D3Q27;
  if (latticeDimensions(result.config.lattice) != common.dimensions)
    reader.fail("domain.size", std::string("lattice ") + latticeName(result.config.lattice) + " needs " +
                                   std::to_string(latticeDimensions(result.config.lattice)) + " sizes, got " +
                                   std::to_string(common.dimensions));
  const std::string collision = reader.choice(table, "lbm", "collision", {"bgk", "trt", "mrt"});
  result.config.collision = collision == "trt"   ? CollisionKind::Trt
                         : collision == "mrt" ? CollisionKind::Mrt
                                              : CollisionKind::Bgk;
  if (const toml::node* magic = table->get("trt_magic")) {
    if (result.config.collision != CollisionKind::Trt) reader.fail("lbm.trt_magic", "only collision = \"trt\" takes it");
    result.config.trtMagic = static_cast<float>(reader.positive(*magic, "lbm.trt_magic"));
  }
  const std::string les = reader.choice(table, "lbm", "les", {"none", "smagorinsky", "csm"});
  result.config.les = Les::withDefaultConstant(les == "smagorinsky" ? LesModel::Smagorinsky
                                               : les == "csm"       ? LesModel::Csm
                                                                    : LesModel::None);
  if (const toml::node* constant = table->get("les_constant")) {
    if (result.config.les.model == LesModel::None) reader.fail("lbm.les_constant", "set lbm.les first");
    result.config.les.constant = static_cast<float>(reader.positive(*constant, "lbm.les_constant"));
  }
  const std::string storage = reader.choice(table, "lbm", "storage", {"fp32", "fp16"});
  result.config.storage = storage == "fp16" ? StorageKind::Fp16 : StorageKind::Fp32;

  const toml::node* tau = table->get("tau");
  const toml::node* viscosity = table->get("viscosity");
  if (tau && viscosity) reader.fail("lbm.viscosity", "give either tau or viscosity, not both");
  if ((tau || viscosity) && result.units.viscosity > 0.0)
    reader.fail(tau ? "lbm.tau" : "lbm.viscosity", "units.viscosity sets the relaxation time already: give one of them");
  if (!tau && !viscosity) {
    if (result.units.viscosity <= 0.0)
      reader.fail("lbm.tau", "missing (expected a number > 0.5, lbm.viscosity > 0, or units.viscosity in m^2/s)");
    const double latticeViscosity = result.units.latticeViscosity();
    result.config.tau = static_cast<float>(tauFromViscosity(latticeViscosity));
    if (!(result.config.tau > 0.5f + 1e-4f))
      reader.fail("units.viscosity", "gives a lattice viscosity of " + std::to_string(latticeViscosity) +
                                         " (tau - 1/2 = " + std::to_string(result.config.tau - 0.5f) +
                                         "): too small to be stable; use a larger length or velocity scale");
  } else if (tau) {
    const double value = reader.number(*tau, "lbm.tau");
    if (!(value > 0.5) || !std::isfinite(value))
      reader.fail("lbm.tau", "expected a number > 0.5 (viscosity (tau - 1/2)/3 must be positive), got " +
                                 std::to_string(value));
    result.config.tau = static_cast<float>(value);
  } else {
    const double value = reader.number(*viscosity, "lbm.viscosity");
    if (!(value > 0.0) || !std::isfinite(value))
      reader.fail("lbm.viscosity", "expected a positive number (lattice units), got " + std::to_string(value));
    result.config.tau = static_cast<float>(tauFromViscosity(value));
  }
  if (const toml::node* force = table->get("body_force"))
    result.config.acceleration = finiteVector(reader, *force, "lbm.body_force", common.dimensions);
  if (const toml::node* start = table->get("initial_velocity")) {
    result.config.initialVelocity = finiteVector(reader, *start, "lbm.initial_velocity", common.dimensions);
    const Vector3& u = result.config.initialVelocity;
    if (!(std::sqrt(dot(u, u)) < 0.3f))
      reader.fail("lbm.initial_velocity", "expected a speed below 0.3 (lattice units: the Mach number stays low)");
  }
}

void readBoundaries(const CaseReader& reader, const io::CaseDescription& common, LbmCase& result) {
  for (const auto& [prefix, table] : reader.entries("boundary")) {
    const toml::table& entry = *table;
    reader.checkKeys(entry, prefix, {"faces", "type", "velocity", "profile", "density"});
    const toml::node* facesNode = entry.get("faces");
    if (!facesNode) reader.fail(prefix + ".faces", "missing (expected an array of face names x- x+ y- y+ z- z+)");
    const std::vector<std::string> faces = reader.strings(*facesNode, prefix + ".faces");
    if (faces.empty()) reader.fail(prefix + ".faces", "expected at least one face name");
    const std::string type =
        reader.choice(&entry, prefix, "type", {"wall", "moving_wall", "velocity", "pressure", "outflow"}, true);
    FaceCondition condition;
    condition.type = type == "moving_wall" ? FaceType::MovingWall
                     : type == "velocity"  ? FaceType::Velocity
                     : type == "pressure"  ? FaceType::Pressure
                     : type == "outflow"   ? FaceType::Outflow
                                           : FaceType::Wall;
    const bool takesVelocity = condition.type == FaceType::MovingWall || condition.type == FaceType::Velocity;
    const toml::node* velocityNode = entry.get("velocity");
    if (takesVelocity) {
      if (!velocityNode)
        reader.fail(prefix + ".velocity", "missing (a " + type + " boundary needs " + std::to_string(common.dimensions) +
                                              " velocity components)");
      condition.velocity = finiteVector(reader, *velocityNode, prefix + ".velocity", common.dimensions);
    } else if (velocityNode) {
      reader.fail(prefix + ".velocity", "only moving_wall and velocity boundaries take a velocity");
    }
    if (entry.get("profile")) {
      if (condition.type != FaceType::Velocity) reader.fail(prefix + ".profile", "only a velocity boundary takes a profile");
      condition.parabolic = reader.choice(&entry, prefix, "profile", {"uniform", "parabolic"}) == "parabolic";
    }
    if (const toml::node* density = entry.get("density")) {
      if (condition.type != FaceType::Pressure) reader.fail(prefix + ".density", "only a pressure boundary takes a density");
      condition.density = static_cast<float>(reader.positive(*density, prefix + ".density"));
    } else if (condition.type == FaceType::Pressure) {
      reader.fail(prefix + ".density", "missing (a pressure boundary needs the density it holds, e.g. 1.0)");
    }
    std::set<int> seen;
    for (const std::string& faceText : faces) {
      const int face = faceFromName(faceText);
      if (face < 0) reader.fail(prefix + ".faces", "unknown face \"" + faceText + "\" (expected x- x+ y- y+ z- z+)");
      if (!seen.insert(face).second)
        reader.fail(prefix + ".faces", "face \"" + faceText + "\" named twice in one entry");
      const int axis = faceAxis(face);
      if (axis >= common.dimensions)
        reader.fail(prefix + ".faces", "face \"" + faceText + "\" does not exist in a 2D domain");
      if (result.config.faces.face[face].type == FaceType::Periodic)
        reader.fail(prefix + ".faces", "face \"" + faceText + "\" lies on a periodic axis (domain.periodic)");
      if (condition.type == FaceType::MovingWall && condition.velocity[axis] != 0.0f)
        reader.fail(prefix + ".velocity", "a moving wall slides along its face: the component normal to \"" +
                                              faceText + "\" must be 0");
      // A later entry on the same face replaces an earlier one.
      result.config.faces.face[face] = condition;
    }
  }
  // Two open faces (pressure, outflow) that share an edge leave the edge's links without a
  // consistent rule (and went unstable in our tests): say so rather than run.
  auto open = [&](int face) {
    const FaceType type = result.config.faces.face[face].type;
    return type == FaceType::Pressure || type == FaceType::Outflow;
  };
  for (int a = 0; a < kFaceCount; ++a)
    for (int b = a + 1; b < kFaceCount; ++b)
      if (open(a) && open(b) && faceAxis(a) != faceAxis(b))
        reader.fail("boundary", std::string("faces ") + faceName(a) + " and " + faceName(b) +
                                    " are both open (pressure or outflow) and share an edge: make one of them a wall, "
                                    "a velocity inlet or periodic");
}

void readObstacles(const CaseReader& reader, const io::CaseDescription& common, LbmCase& result) {
  const int dimensions = common.dimensions;
  for (const auto& [prefix, table] : reader.entries("obstacle")) {
    const toml::table& entry = *table;
    geometry::ObstacleSpec spec;
    spec.source = reader.source() + ": " + prefix;
    const std::string shape = reader.choice(&entry, prefix, "shape", {"sphere", "cylinder", "box", "stl"}, true);
    if (shape == "sphere" || shape == "cylinder") {
      reader.checkKeys(entry, prefix, shape == "sphere" ? std::vector<std::string>{"shape", "center", "radius"}
                                                        : std::vector<std::string>{"shape", "center", "radius", "axis"});
      spec.kind = shape == "sphere" ? geometry::ShapeKind::Sphere : geometry::ShapeKind::Cylinder;
      spec.center = finitePoint(reader, entry, prefix, "center", dimensions);
      const toml::node* radius = entry.get("radius");
      if (!radius) reader.fail(prefix + ".radius", "missing (expected a positive number)");
      spec.radius = reader.positive(*radius, prefix + ".radius");
      if (shape == "cylinder") {
        const std::string axis = reader.choice(&entry, prefix, "axis", {"z", "x", "y"});
        spec.axis = axis == "x" ? 0 : axis == "y" ? 1 : 2;
        if (dimensions == 2 && spec.axis != 2) reader.fail(prefix + ".axis", "a 2D cylinder's axis is z");
      }
    } else if (shape == "box") {
      reader.checkKeys(entry, prefix, {"shape", "min", "max"});
      spec.kind = geometry::ShapeKind::Box;
      spec.min = finitePoint(reader, entry, prefix, "min", dimensions);
      spec.max = finitePoint(reader, entry, prefix, "max", dimensions);
      for (int axis = 0; axis < dimensions; ++axis)
        if (spec.min[axis] > spec.max[axis]) reader.fail(prefix + ".max", "expected max >= min on every axis");
    } else {
      reader.checkKeys(entry, prefix, {"shape", "file", "scale", "translate"});
      if (dimensions != 3) reader.fail(prefix + ".shape", "stl obstacles need a 3D domain");
      spec.kind = geometry::ShapeKind::Stl;
      spec.file = resolvePath(reader.string(&entry, prefix, "file", nullptr), reader.source());
      if (const toml::node* scale = entry.get("scale")) spec.scale = reader.positive(*scale, prefix + ".scale");
      if (entry.get("translate")) spec.translate = finitePoint(reader, entry, prefix, "translate", dimensions);
    }
    result.obstacles.push_back(spec);
  }
}

void readForcesTable(const CaseReader& reader, const io::CaseDescription& common, LbmCase& result) {
  const toml::table* table = reader.table("forces", false);
  if (!table) return;
  reader.checkKeys(*table, "forces", {"every", "reference_velocity", "reference_length", "reference_area"});
  if (result.obstacles.empty()) reader.fail("forces", "forces act on obstacles: add an [[obstacle]]");
  const toml::node* every = table->get("every");
  if (!every) reader.fail("forces.every", "missing (expected a positive integer)");
  result.forces.every = reader.integer(*every, "forces.every");
  if (result.forces.every <= 0)
    reader.fail("forces.every", "expected a positive integer, got " + std::to_string(result.forces.every));
  if (const toml::node* u = table->get("reference_velocity"))
    result.forces.referenceVelocity = reader.positive(*u, "forces.reference_velocity");
  if (const toml::node* d = table->get("reference_length"))
    result.forces.referenceLength = reader.positive(*d, "forces.reference_length");
  if (const toml::node* a = table->get("reference_area")) {
    if (common.dimensions == 2) reader.fail("forces.reference_area", "2D forces are per unit depth: the area is the length");
    result.forces.referenceArea = reader.positive(*a, "forces.reference_area");
  }
  if ((result.forces.referenceVelocity > 0.0) != (result.forces.referenceLength > 0.0))
    reader.fail(result.forces.referenceVelocity > 0.0 ? "forces.reference_length" : "forces.reference_velocity",
                "cd and cl need both reference_velocity and reference_length");
}

// The obstacles as a per-node mask; an STL problem is reported with the obstacle's key.
void rasterizeObstacles(const CaseReader& reader, const io::CaseDescription& common, LbmCase& result) {
  if (result.obstacles.empty()) return;
  const Extent& extent = common.extent;
  // The mask of the whole grid (a byte a node, on every rank) is made here: refuse a grid it
  // cannot fit in before allocating it.
  const double maskBytes = static_cast<double>(extent.cellCount()), available = exec::availableHostBytes();
  if (available > 0.0 && maskBytes > 0.9 * available)
    reader.fail("domain.size", std::to_string(extent.cellCount()) + " nodes: the obstacle mask alone needs " +
                                   OutOfMemoryError::formatBytes(static_cast<std::size_t>(maskBytes)) + ", " +
                                   OutOfMemoryError::formatBytes(static_cast<std::size_t>(available)) +
                                   " of host memory available: a smaller grid");
  result.config.solid.assign(static_cast<std::size_t>(extent.cellCount()), 0);
  for (std::size_t n = 0; n < result.obstacles.size(); ++n) {
    try {
      geometry::rasterize(result.obstacles[n], extent, result.config.solid.data());
    } catch (const InputError& error) {
      // The STL reader names only the STL file: add the case file and the obstacle's key.
      if (result.obstacles[n].file.empty() || error.source() != result.obstacles[n].file) throw;
      reader.fail("obstacle[" + std::to_string(n) + "].file", error.what());
    }
  }
  const auto solidNodes = std::count(result.config.solid.begin(), result.config.solid.end(), std::uint8_t{1});
  if (solidNodes == 0)
    reader.fail("obstacle", "the obstacles cover no node of the domain (node (i,j,k) sits at (i,j,k))");
  if (solidNodes == extent.cellCount()) reader.fail("obstacle", "the obstacles fill the whole domain");
}

}  // namespace

double ForcesSettings::coefficient(double force, int dimensions) const {
  if (!coefficients()) return NAN;
  const double length = referenceLength;
  const double area = dimensions == 2 ? length : (referenceArea > 0.0 ? referenceArea : length * length);
  constexpr double referenceDensity = 1.0;  // lattice units
  return 2.0 * force / (referenceDensity * referenceVelocity * referenceVelocity * area);
}

const std::vector<sim::FieldInfo>& LbmCase::fields() const {
  static const std::vector<sim::FieldInfo> fields = {{"density", 1}, {"velocity", 3}};
  return fields;
}

// Populations in their storage, the node kinds, the CSM velocity fields (two, FP16) and, on CUDA,
// the density and velocity computed on the device; the host keeps density and velocity.
sim::MemoryNeeds LbmCase::memoryNeeds(exec::Backend backend) const {
  sim::MemoryNeeds needs;
  needs.workingBytesPerNode = latticeQ(config.lattice) * storageBytes(config.storage) + 1.0 +
                              (config.les.model == LesModel::Csm ? 12.0 : 0.0) +
                              (backend == exec::Backend::Cuda ? 16.0 : 0.0);
  needs.hostBytesPerNode = 16.0 + (config.solid.empty() ? 0.0 : 1.0);
  needs.gatherBytesPerNode = 16.0;
  needs.tracerBytesPerNode = sizeof(TappedVelocity) + 2.0 / 8.0;  // the recorded velocities, two bit masks
  needs.maxNodesPerGrid = Index{0xFFFFFFFF};  // 32-bit node indices in a grid (StreamCollide.hpp)
  return needs;
}

std::string LbmCase::describe() const {
  const long long solidNodes = std::count(config.solid.begin(), config.solid.end(), std::uint8_t{1});
  char text[256];
  std::snprintf(text, sizeof text, "%s %s %s, %lld obstacle nodes, tau %.4g (nu %.4g)", latticeName(config.lattice),
                collisionName(config.collision), storageName(config.storage), solidNodes, config.tau,
                viscosityFromTau(config.tau));
  std::string result = text;
  if (config.blocking.enabled()) {
    const TemporalBlocking& b = config.blocking;
    result += ", temporal blocking " + b.name() + " on tiles of " + std::to_string(b.block[0]) + "x" +
              std::to_string(b.block[1]) + (latticeDimensions(config.lattice) == 3 ? "x" + std::to_string(b.block[2]) : "");
  }
  return result;
}

std::unique_ptr<sim::Simulation> LbmCase::create(const io::CaseDescription& description,
                                                 const sim::CreateOptions& options) const {
  return makeLbmSimulation(description, *this, options);
}

void readFlowTables(const CaseReader& reader, const io::CaseDescription& description, LbmCase& result) {
  readUnitsTable(reader, description, result);
  readLbmTable(reader, description, result);
  result.config.extent = description.extent;
  for (int axis = 0; axis < 3; ++axis)
    if (description.periodic[static_cast<std::size_t>(axis)]) result.config.faces.setAxisPeriodic(axis);
  readObstacles(reader, description, result);
  readBoundaries(reader, description, result);
  readForcesTable(reader, description, result);
}

// [lbm.blocking] (lbm/blocking/TemporalBlocking.hpp), checked against the rest of the case.
void readBlockingTable(const CaseReader& reader, const io::CaseDescription& common, LbmCase& result) {
  const toml::table* lbmTable = reader.table("lbm", true);
  const toml::node* node = lbmTable->get("blocking");
  if (!node) return;
  const std::string prefix = "lbm.blocking";
  if (!node->is_table()) reader.fail(prefix, "expected a table [lbm.blocking]");
  const toml::table& table = *node->as_table();
  reader.checkKeys(table, prefix, {"shared_steps", "register_steps", "warp_shuffle", "block"});
  TemporalBlocking& blocking = result.config.blocking;
  const auto count = [&](const char* key, int fallback) {
    const toml::node* value = table.get(key);
    if (!value) return fallback;
    const Index n = reader.integer(*value, prefix + "." + key);
    if (n < 0 || n > kMaxSharedSteps) reader.fail(prefix + "." + key, "expected 0 to " + std::to_string(kMaxSharedSteps) + ", got " + std::to_string(n));
    return static_cast<int>(n);
  };
  blocking.sharedSteps = count("shared_steps", 0);
  blocking.registerSteps = count("register_steps", 0);
  if (const toml::node* shuffle = table.get("warp_shuffle")) {
    if (!shuffle->is_boolean()) reader.fail(prefix + ".warp_shuffle", "expected true or false");
    blocking.warpShuffle = shuffle->as_boolean()->get();
  }
  if (const toml::node* block = table.get("block")) {
    const std::vector<double> sizes = reader.numbers(*block, prefix + ".block", static_cast<std::size_t>(common.dimensions));
    for (int axis = 0; axis < common.dimensions; ++axis) {
      const double size = sizes[static_cast<std::size_t>(axis)];
      if (!(size >= 1.0 && size <= 1024.0) || size != static_cast<int>(size))
        reader.fail(prefix + ".block", "expected whole numbers of nodes, 1 to 1024, got " + std::to_string(size));
      blocking.block[axis] = static_cast<int>(size);
    }
  }
  if (const BlockingProblem problem = blockingProblem(result.config)) reader.fail(problem.key, problem.reason);
}

std::unique_ptr<sim::SolverCase> parseLbmCase(const CaseReader& reader, io::CaseDescription& description) {
  auto result = std::make_unique<LbmCase>();
  readFlowTables(reader, description, *result);
  readBlockingTable(reader, description, *result);
  rasterizeObstacles(reader, description, *result);
  return result;
}

const LbmCase& lbmCaseOf(const io::CaseDescription& description) {
  const auto* lbm = dynamic_cast<const LbmCase*>(description.solverCase.get());
  if (!lbm) throw InputError(description.sourcePath, "case.solver", "expected an \"lbm\" case, got \"" + description.solver + "\"");
  return *lbm;
}

}  // namespace octoflow::lbm
