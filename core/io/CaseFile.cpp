#include "io/CaseFile.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include "common/Error.hpp"
#include "geometry/Obstacle.hpp"

namespace octoflow::io {

namespace {

std::string joinQuoted(const std::vector<std::string>& words) {
  std::string text;
  for (const auto& word : words) text += (text.empty() ? "" : ", ") + word;
  return text;
}

std::string typeName(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a number";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::array: return "an array";
    case toml::node_type::table: return "a table";
    default: return "a date/time";
  }
}

// Reads one case file, keeping the file name for every message it raises.
class CaseReader {
public:
  CaseReader(const toml::table& root, std::string source) : root_(root), source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& key, const std::string& problem) const {
    throw InputError(source_, key, problem);
  }

  // Rejects keys a table does not know: a typo must not pass silently.
  void checkKeys(const toml::table& table, const std::string& prefix, const std::vector<std::string>& known) const {
    for (const auto& [key, value] : table) {
      const std::string name(key.str());
      if (std::find(known.begin(), known.end(), name) == known.end())
        fail(prefix.empty() ? name : prefix + "." + name,
             "unknown key (expected one of: " + joinQuoted(known) + ")");
    }
  }

  const toml::table* table(const std::string& name, bool required) const {
    const toml::node* node = root_.get(name);
    if (!node) {
      if (required) fail(name, "missing table [" + name + "]");
      return nullptr;
    }
    if (!node->is_table()) fail(name, "expected a table [" + name + "], got " + typeName(*node));
    return node->as_table();
  }

  std::string string(const toml::table* table, const std::string& prefix, const std::string& key,
                     const std::string* fallback) const {
    const toml::node* node = table ? table->get(key) : nullptr;
    if (!node) {
      if (!fallback) fail(prefix + "." + key, "missing (expected a string)");
      return *fallback;
    }
    if (!node->is_string()) fail(prefix + "." + key, "expected a string, got " + typeName(*node));
    return node->as_string()->get();
  }

  double number(const toml::node& node, const std::string& key) const {
    if (node.is_integer()) return static_cast<double>(node.as_integer()->get());
    if (node.is_floating_point()) return node.as_floating_point()->get();
    fail(key, "expected a number, got " + typeName(node));
  }

  Index integer(const toml::node& node, const std::string& key) const {
    if (!node.is_integer()) fail(key, "expected an integer, got " + typeName(node));
    return node.as_integer()->get();
  }

  const toml::array& array(const toml::node& node, const std::string& key, std::size_t minSize,
                           std::size_t maxSize, const std::string& what) const {
    const toml::array* values = node.as_array();
    if (!values) fail(key, "expected an array of " + what + ", got " + typeName(node));
    if (values->size() < minSize || values->size() > maxSize)
      fail(key, "expected " + (minSize == maxSize ? std::to_string(minSize)
                                                  : std::to_string(minSize) + " or " + std::to_string(maxSize)) +
                    " " + what + ", got " + std::to_string(values->size()));
    return *values;
  }

  std::vector<double> numbers(const toml::node& node, const std::string& key, std::size_t size) const {
    std::vector<double> values;
    for (const auto& element : array(node, key, size, size, "numbers")) values.push_back(number(element, key));
    return values;
  }

  std::vector<std::string> strings(const toml::node& node, const std::string& key) const {
    std::vector<std::string> values;
    for (const auto& element : array(node, key, 0, 1u << 20, "strings")) {
      if (!element.is_string()) fail(key, "expected an array of strings, found " + typeName(element));
      values.push_back(element.as_string()->get());
    }
    return values;
  }

  // One of `options` (the first is the default when the key is absent and `required` is false).
  std::string choice(const toml::table* table, const std::string& prefix, const std::string& key,
                     const std::vector<std::string>& options, bool required = false) const {
    const std::string* fallback = required ? nullptr : &options.front();
    const std::string value = string(table, prefix, key, fallback);
    if (std::find(options.begin(), options.end(), value) == options.end()) {
      std::string quoted;
      for (const auto& option : options) quoted += (quoted.empty() ? "\"" : ", \"") + option + "\"";
      fail(prefix + "." + key, "expected one of " + quoted + ", got \"" + value + "\"");
    }
    return value;
  }

  double positive(const toml::node& node, const std::string& key) const {
    const double value = number(node, key);
    if (!(value > 0.0) || !std::isfinite(value)) fail(key, "expected a positive number, got " + std::to_string(value));
    return value;
  }

  // The entries of an array of tables ([[name]]), each with its key prefix "name[n]".
  std::vector<std::pair<std::string, const toml::table*>> entries(const std::string& name) const {
    std::vector<std::pair<std::string, const toml::table*>> result;
    const toml::node* node = root_.get(name);
    if (!node) return result;
    const toml::array* array = node->as_array();
    if (!array || !array->is_array_of_tables()) fail(name, "expected [[" + name + "]] entries (an array of tables)");
    for (std::size_t n = 0; n < array->size(); ++n)
      result.emplace_back(name + "[" + std::to_string(n) + "]", (*array)[n].as_table());
    return result;
  }

  const std::string& source() const { return source_; }
  const toml::table& root() const { return root_; }

private:
  const toml::table& root_;
  std::string source_;
};

lbm::Vector3 toVector(const std::vector<double>& values) {
  lbm::Vector3 v;
  v.x = values.size() > 0 ? static_cast<float>(values[0]) : 0.0f;
  v.y = values.size() > 1 ? static_cast<float>(values[1]) : 0.0f;
  v.z = values.size() > 2 ? static_cast<float>(values[2]) : 0.0f;
  return v;
}

void readCaseTable(const CaseReader& reader, CaseDescription& result) {
  const toml::table* table = reader.table("case", true);
  reader.checkKeys(*table, "case", {"name", "solver", "steps"});
  result.name = reader.string(table, "case", "name", nullptr);
  if (result.name.empty() || !std::all_of(result.name.begin(), result.name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
      }))
    reader.fail("case.name", "expected a non-empty name of letters, digits, '_' or '-' (it names output files), got '" +
                                 result.name + "'");
  const std::string lbmSolver = "lbm";
  result.solver = reader.string(table, "case", "solver", &lbmSolver);
  if (result.solver != "lbm") reader.fail("case.solver", "expected \"lbm\", got \"" + result.solver + "\"");
  const toml::node* steps = table->get("steps");
  if (!steps) reader.fail("case.steps", "missing (expected a positive integer)");
  result.steps = reader.integer(*steps, "case.steps");
  if (result.steps <= 0) reader.fail("case.steps", "expected a positive integer, got " + std::to_string(result.steps));
}

void readUnitsTable(const CaseReader& reader, CaseDescription& result) {
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

void readLbmTable(const CaseReader& reader, CaseDescription& result) {
  const toml::table* table = reader.table("lbm", true);
  reader.checkKeys(*table, "lbm",
                   {"lattice", "collision", "trt_magic", "les", "les_constant", "storage", "tau", "viscosity", "body_force"});
  const std::string lattice = reader.choice(table, "lbm", "lattice", {"D2Q9", "D3Q19", "D3Q27"}, true);
  result.lbm.lattice = lattice == "D2Q9"    ? lbm::LatticeKind::D2Q9
                       : lattice == "D3Q19" ? lbm::LatticeKind::D3Q19
                                            : lbm::LatticeKind::D3Q27;
  result.dimensions = lbm::latticeDimensions(result.lbm.lattice);
  const std::string collision = reader.choice(table, "lbm", "collision", {"bgk", "trt", "mrt"});
  result.lbm.collision = collision == "trt"   ? lbm::CollisionKind::Trt
                         : collision == "mrt" ? lbm::CollisionKind::Mrt
                                              : lbm::CollisionKind::Bgk;
  if (const toml::node* magic = table->get("trt_magic")) {
    if (result.lbm.collision != lbm::CollisionKind::Trt) reader.fail("lbm.trt_magic", "only collision = \"trt\" takes it");
    result.lbm.trtMagic = static_cast<float>(reader.positive(*magic, "lbm.trt_magic"));
  }
  const std::string les = reader.choice(table, "lbm", "les", {"none", "smagorinsky", "csm"});
  result.lbm.les.model = les == "smagorinsky" ? lbm::LesModel::Smagorinsky
                         : les == "csm"       ? lbm::LesModel::Csm
                                              : lbm::LesModel::None;
  if (result.lbm.les.model == lbm::LesModel::Csm) result.lbm.les.constant = lbm::Les::kCsmConstant;
  if (const toml::node* constant = table->get("les_constant")) {
    if (result.lbm.les.model == lbm::LesModel::None) reader.fail("lbm.les_constant", "set lbm.les first");
    result.lbm.les.constant = static_cast<float>(reader.positive(*constant, "lbm.les_constant"));
  }
  const std::string storage = reader.choice(table, "lbm", "storage", {"fp32", "fp16"});
  result.lbm.storage = storage == "fp16" ? lbm::StorageKind::Fp16 : lbm::StorageKind::Fp32;

  const toml::node* tau = table->get("tau");
  const toml::node* viscosity = table->get("viscosity");
  if (tau && viscosity) reader.fail("lbm.viscosity", "give either tau or viscosity, not both");
  if ((tau || viscosity) && result.units.viscosity > 0.0)
    reader.fail(tau ? "lbm.tau" : "lbm.viscosity", "units.viscosity sets the relaxation time already: give one of them");
  if (!tau && !viscosity) {
    if (result.units.viscosity <= 0.0)
      reader.fail("lbm.tau", "missing (expected a number > 0.5, lbm.viscosity > 0, or units.viscosity in m^2/s)");
    const double latticeViscosity = result.units.latticeViscosity();
    result.lbm.tau = static_cast<float>(lbm::tauFromViscosity(latticeViscosity));
    if (!(result.lbm.tau > 0.5f + 1e-4f))
      reader.fail("units.viscosity", "gives a lattice viscosity of " + std::to_string(latticeViscosity) +
                                         " (tau - 1/2 = " + std::to_string(result.lbm.tau - 0.5f) +
                                         "): too small to be stable; use a larger length or velocity scale");
  } else if (tau) {
    const double value = reader.number(*tau, "lbm.tau");
    if (!(value > 0.5) || !std::isfinite(value))
      reader.fail("lbm.tau", "expected a number > 0.5 (viscosity (tau - 1/2)/3 must be positive), got " +
                                 std::to_string(value));
    result.lbm.tau = static_cast<float>(value);
  } else {
    const double value = reader.number(*viscosity, "lbm.viscosity");
    if (!(value > 0.0) || !std::isfinite(value))
      reader.fail("lbm.viscosity", "expected a positive number (lattice units), got " + std::to_string(value));
    result.lbm.tau = static_cast<float>(lbm::tauFromViscosity(value));
  }
  if (const toml::node* force = table->get("body_force"))
    result.lbm.acceleration = toVector(reader.numbers(*force, "lbm.body_force", result.dimensions));
}

void readDomainTable(const CaseReader& reader, CaseDescription& result) {
  const toml::table* table = reader.table("domain", true);
  reader.checkKeys(*table, "domain", {"size", "periodic"});
  const toml::node* size = table->get("size");
  if (!size) reader.fail("domain.size", "missing (expected an array of " + std::to_string(result.dimensions) + " sizes)");
  const auto& sizes = reader.array(*size, "domain.size", 2, 3, "positive integers");
  if (static_cast<int>(sizes.size()) != result.dimensions)
    reader.fail("domain.size", std::string("lattice ") + lbm::latticeName(result.lbm.lattice) + " needs " +
                                   std::to_string(result.dimensions) + " sizes, got " + std::to_string(sizes.size()));
  Index extent[3] = {1, 1, 1};
  for (int axis = 0; axis < result.dimensions; ++axis) {
    extent[axis] = reader.integer(sizes[axis], "domain.size");
    if (extent[axis] <= 0)
      reader.fail("domain.size", "expected positive integers, got " + std::to_string(extent[axis]));
  }
  result.lbm.extent = Extent{extent[0], extent[1], extent[2]};
  bool periodic[3] = {false, false, result.dimensions == 2};
  if (const toml::node* flags = table->get("periodic")) {
    const auto& values = reader.array(*flags, "domain.periodic", result.dimensions, result.dimensions, "booleans");
    for (int axis = 0; axis < result.dimensions; ++axis) {
      if (!values[axis].is_boolean())
        reader.fail("domain.periodic", "expected an array of booleans, found " + typeName(values[axis]));
      periodic[axis] = values[axis].as_boolean()->get();
    }
  }
  for (int axis = 0; axis < 3; ++axis)
    if (periodic[axis]) result.lbm.faces.setAxisPeriodic(axis);
}

void readBoundaries(const CaseReader& reader, CaseDescription& result) {
  for (const auto& [prefix, table] : reader.entries("boundary")) {
    const toml::table& entry = *table;
    reader.checkKeys(entry, prefix, {"faces", "type", "velocity", "profile", "density"});
    const toml::node* facesNode = entry.get("faces");
    if (!facesNode) reader.fail(prefix + ".faces", "missing (expected an array of face names x- x+ y- y+ z- z+)");
    const std::vector<std::string> faces = reader.strings(*facesNode, prefix + ".faces");
    if (faces.empty()) reader.fail(prefix + ".faces", "expected at least one face name");
    const std::string type =
        reader.choice(&entry, prefix, "type", {"wall", "moving_wall", "velocity", "pressure", "outflow"}, true);
    lbm::FaceCondition condition;
    condition.type = type == "moving_wall" ? lbm::FaceType::MovingWall
                     : type == "velocity"  ? lbm::FaceType::Velocity
                     : type == "pressure"  ? lbm::FaceType::Pressure
                     : type == "outflow"   ? lbm::FaceType::Outflow
                                           : lbm::FaceType::Wall;
    const bool takesVelocity = condition.type == lbm::FaceType::MovingWall || condition.type == lbm::FaceType::Velocity;
    const toml::node* velocityNode = entry.get("velocity");
    if (takesVelocity) {
      if (!velocityNode)
        reader.fail(prefix + ".velocity", "missing (a " + type + " boundary needs " + std::to_string(result.dimensions) +
                                              " velocity components)");
      condition.velocity = toVector(reader.numbers(*velocityNode, prefix + ".velocity", result.dimensions));
    } else if (velocityNode) {
      reader.fail(prefix + ".velocity", "only moving_wall and velocity boundaries take a velocity");
    }
    if (entry.get("profile")) {
      if (condition.type != lbm::FaceType::Velocity) reader.fail(prefix + ".profile", "only a velocity boundary takes a profile");
      condition.parabolic = reader.choice(&entry, prefix, "profile", {"uniform", "parabolic"}) == "parabolic";
    }
    if (const toml::node* density = entry.get("density")) {
      if (condition.type != lbm::FaceType::Pressure) reader.fail(prefix + ".density", "only a pressure boundary takes a density");
      condition.density = static_cast<float>(reader.positive(*density, prefix + ".density"));
    } else if (condition.type == lbm::FaceType::Pressure) {
      reader.fail(prefix + ".density", "missing (a pressure boundary needs the density it holds, e.g. 1.0)");
    }
    std::set<int> seen;
    for (const std::string& faceText : faces) {
      const int face = lbm::faceFromName(faceText);
      if (face < 0) reader.fail(prefix + ".faces", "unknown face \"" + faceText + "\" (expected x- x+ y- y+ z- z+)");
      if (!seen.insert(face).second)
        reader.fail(prefix + ".faces", "face \"" + faceText + "\" named twice in one entry");
      const int axis = lbm::faceAxis(face);
      if (axis >= result.dimensions)
        reader.fail(prefix + ".faces", "face \"" + faceText + "\" does not exist in a 2D domain");
      if (result.lbm.faces.face[face].type == lbm::FaceType::Periodic)
        reader.fail(prefix + ".faces", "face \"" + faceText + "\" lies on a periodic axis (domain.periodic)");
      if (condition.type == lbm::FaceType::MovingWall && condition.velocity[axis] != 0.0f)
        reader.fail(prefix + ".velocity", "a moving wall slides along its face: the component normal to \"" +
                                              faceText + "\" must be 0");
      // A later entry on the same face replaces an earlier one.
      result.lbm.faces.face[face] = condition;
    }
  }
  // Two open faces (pressure, outflow) that share an edge leave the edge's links without a
  // consistent rule (and went unstable in our tests): say so rather than run.
  auto open = [&](int face) {
    const lbm::FaceType type = result.lbm.faces.face[face].type;
    return type == lbm::FaceType::Pressure || type == lbm::FaceType::Outflow;
  };
  for (int a = 0; a < lbm::kFaceCount; ++a)
    for (int b = a + 1; b < lbm::kFaceCount; ++b)
      if (open(a) && open(b) && lbm::faceAxis(a) != lbm::faceAxis(b))
        reader.fail("boundary", std::string("faces ") + lbm::faceName(a) + " and " + lbm::faceName(b) +
                                    " are both open (pressure or outflow) and share an edge: make one of them a wall, "
                                    "a velocity inlet or periodic");
}

// A path from the case: as given (relative to the working directory), else next to the case file.
std::string resolvePath(const std::string& path, const std::string& casePath) {
  std::filesystem::path found = path;
  const std::filesystem::path besideCase = std::filesystem::path(casePath).parent_path() / path;
  if (!std::filesystem::exists(found) && found.is_relative() && std::filesystem::exists(besideCase)) found = besideCase;
  return found.string();
}

std::array<double, 3> point(const CaseReader& reader, const toml::table& entry, const std::string& prefix,
                            const std::string& key, int dimensions) {
  const toml::node* node = entry.get(key);
  if (!node) reader.fail(prefix + "." + key, "missing (expected " + std::to_string(dimensions) + " coordinates)");
  const std::vector<double> values = reader.numbers(*node, prefix + "." + key, dimensions);
  return {values[0], values[1], dimensions == 3 ? values[2] : 0.0};
}

void readObstacles(const CaseReader& reader, CaseDescription& result) {
  const int dimensions = result.dimensions;
  for (const auto& [prefix, table] : reader.entries("obstacle")) {
    const toml::table& entry = *table;
    geometry::ObstacleSpec spec;
    spec.source = reader.source() + ": " + prefix;
    const std::string shape = reader.choice(&entry, prefix, "shape", {"sphere", "cylinder", "box", "stl"}, true);
    if (shape == "sphere" || shape == "cylinder") {
      reader.checkKeys(entry, prefix, shape == "sphere" ? std::vector<std::string>{"shape", "center", "radius"}
                                                        : std::vector<std::string>{"shape", "center", "radius", "axis"});
      spec.kind = shape == "sphere" ? geometry::ShapeKind::Sphere : geometry::ShapeKind::Cylinder;
      spec.center = point(reader, entry, prefix, "center", dimensions);
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
      spec.min = point(reader, entry, prefix, "min", dimensions);
      spec.max = point(reader, entry, prefix, "max", dimensions);
      for (int axis = 0; axis < dimensions; ++axis)
        if (spec.min[axis] > spec.max[axis]) reader.fail(prefix + ".max", "expected max >= min on every axis");
    } else {
      reader.checkKeys(entry, prefix, {"shape", "file", "scale", "translate"});
      if (dimensions != 3) reader.fail(prefix + ".shape", "stl obstacles need a 3D domain");
      spec.kind = geometry::ShapeKind::Stl;
      spec.file = resolvePath(reader.string(&entry, prefix, "file", nullptr), reader.source());
      if (const toml::node* scale = entry.get("scale")) spec.scale = reader.positive(*scale, prefix + ".scale");
      if (entry.get("translate")) spec.translate = point(reader, entry, prefix, "translate", dimensions);
    }
    result.obstacles.push_back(spec);
  }
}

void readForcesTable(const CaseReader& reader, CaseDescription& result) {
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
    if (result.dimensions == 2) reader.fail("forces.reference_area", "2D forces are per unit depth: the area is the length");
    result.forces.referenceArea = reader.positive(*a, "forces.reference_area");
  }
  if ((result.forces.referenceVelocity > 0.0) != (result.forces.referenceLength > 0.0))
    reader.fail(result.forces.referenceVelocity > 0.0 ? "forces.reference_length" : "forces.reference_velocity",
                "cd and cl need both reference_velocity and reference_length");
}

// The obstacles as a per-node mask; an STL problem is reported with the obstacle's key.
void rasterizeObstacles(const CaseReader& reader, CaseDescription& result) {
  if (result.obstacles.empty()) return;
  const Extent& extent = result.lbm.extent;
  result.lbm.solid.assign(static_cast<std::size_t>(extent.cellCount()), 0);
  for (std::size_t n = 0; n < result.obstacles.size(); ++n)
    geometry::rasterize(result.obstacles[n], extent, result.lbm.solid.data());
  const auto solidNodes = std::count(result.lbm.solid.begin(), result.lbm.solid.end(), std::uint8_t{1});
  if (solidNodes == 0)
    reader.fail("obstacle", "the obstacles cover no node of the domain (node (i,j,k) sits at (i,j,k))");
  if (solidNodes == extent.cellCount()) reader.fail("obstacle", "the obstacles fill the whole domain");
}

void readOutputTable(const CaseReader& reader, CaseDescription& result) {
  const toml::table* table = reader.table("output", false);
  if (table) reader.checkKeys(*table, "output", {"directory", "every", "fields"});
  const std::string defaultDirectory = "out/" + result.name;
  result.output.directory = reader.string(table, "output", "directory", &defaultDirectory);
  if (result.output.directory.empty()) reader.fail("output.directory", "expected a non-empty path");
  const toml::node* every = table ? table->get("every") : nullptr;
  result.output.every = every ? reader.integer(*every, "output.every") : 0;
  if (result.output.every < 0)
    reader.fail("output.every", "expected an integer >= 0 (0: only the last step), got " +
                                    std::to_string(result.output.every));
  const toml::node* fields = table ? table->get("fields") : nullptr;
  result.output.fields = fields ? reader.strings(*fields, "output.fields") : uniformFieldNames();
  std::set<std::string> seen;
  for (const auto& field : result.output.fields) {
    const auto& known = uniformFieldNames();
    if (std::find(known.begin(), known.end(), field) == known.end())
      reader.fail("output.fields", "unknown field \"" + field + "\" (expected " + joinQuoted(known) + ")");
    if (!seen.insert(field).second) reader.fail("output.fields", "field \"" + field + "\" named twice");
  }
}

void readInSituTable(const CaseReader& reader, CaseDescription& result) {
  const toml::table* table = reader.table("insitu", false);
  if (!table) return;
  reader.checkKeys(*table, "insitu", {"scripts", "every", "on_error"});
  const std::string stop = "stop";
  const std::string onError = reader.string(table, "insitu", "on_error", &stop);
  if (onError != "stop" && onError != "continue")
    reader.fail("insitu.on_error", "expected \"stop\" or \"continue\", got \"" + onError + "\"");
  result.insitu.continueOnError = onError == "continue";
  if (const toml::node* every = table->get("every")) {
    result.insitu.every = reader.integer(*every, "insitu.every");
    if (result.insitu.every <= 0)
      reader.fail("insitu.every", "expected a positive integer, got " + std::to_string(result.insitu.every));
  }
  if (const toml::node* scripts = table->get("scripts")) {
    const std::filesystem::path caseFolder = std::filesystem::path(result.sourcePath).parent_path();
    for (const std::string& script : reader.strings(*scripts, "insitu.scripts")) {
      std::filesystem::path found = script;
      if (!std::filesystem::is_regular_file(found) && found.is_relative()) {
        // Then next to the case file, then among the scripts that ship with octoflow.
        const std::filesystem::path shipped = std::filesystem::path(OCTOFLOW_CATALYST_SCRIPTS_DIR) / found.filename();
        if (std::filesystem::is_regular_file(caseFolder / script))
          found = caseFolder / script;
        else if (std::filesystem::is_regular_file(shipped))
          found = shipped;
      }
      if (!std::filesystem::is_regular_file(found))
        reader.fail("insitu.scripts", "Catalyst script \"" + script + "\" not found");
      result.insitu.scripts.push_back(found.string());
    }
  }
}

// A positive integer under `key` of `table`, or `fallback` when the key is absent.
Index positiveInteger(const CaseReader& reader, const toml::table& table, const std::string& prefix,
                      const std::string& key, Index fallback) {
  const toml::node* node = table.get(key);
  if (!node) return fallback;
  const Index value = reader.integer(*node, prefix + "." + key);
  if (value <= 0) reader.fail(prefix + "." + key, "expected a positive integer, got " + std::to_string(value));
  return value;
}

// `output_every` of [tracers] and [surface]: as output.every, which is its default.
Index outputEvery(const CaseReader& reader, const toml::table& table, const std::string& prefix,
                  const CaseDescription& result) {
  const toml::node* node = table.get("output_every");
  if (!node) return result.output.every;
  const Index value = reader.integer(*node, prefix + ".output_every");
  if (value < 0)
    reader.fail(prefix + ".output_every", "expected an integer >= 0 (0: only the last step), got " + std::to_string(value));
  return value;
}

// Tracer counts: one positive integer up to 2^20, or `size` of them.
std::vector<int> tracerCounts(const CaseReader& reader, const toml::table& entry, const std::string& prefix,
                              std::size_t size) {
  const std::string key = prefix + ".count";
  const toml::node* node = entry.get("count");
  std::vector<Index> counts;
  if (!node) {
    if (size > 1) reader.fail(key, "missing (expected " + std::to_string(size) + " positive integers)");
    counts.push_back(1);
  } else if (size == 1) {
    counts.push_back(reader.integer(*node, key));
  } else {
    for (const auto& element : reader.array(*node, key, size, size, "positive integers"))
      counts.push_back(reader.integer(element, key));
  }
  for (Index count : counts)
    if (count <= 0 || count > (1 << 20)) reader.fail(key, "expected positive integers up to 2^20, got " + std::to_string(count));
  return std::vector<int>(counts.begin(), counts.end());
}

void readTracersTable(const CaseReader& reader, CaseDescription& result) {
  const toml::table* table = reader.table("tracers", false);
  if (!table) return;
  reader.checkKeys(*table, "tracers", {"source", "max_particles", "integrator", "substeps", "every", "output_every"});
  TracerRunSettings& tracers = result.tracers;
  tracers.particles.maxParticles = positiveInteger(reader, *table, "tracers", "max_particles", 100000);
  // About 80 bytes of device memory a tracer are allocated up front.
  if (tracers.particles.maxParticles > 100000000)
    reader.fail("tracers.max_particles", "expected at most 100000000 (80 bytes of GPU memory each, allocated at the start)");
  tracers.particles.integrator =
      reader.choice(table, "tracers", "integrator", {"rk2", "rk4"}) == "rk4" ? particles::Integrator::Rk4 : particles::Integrator::Rk2;
  const Index substeps = positiveInteger(reader, *table, "tracers", "substeps", 1);
  if (substeps > 64) reader.fail("tracers.substeps", "expected at most 64");
  tracers.particles.substeps = static_cast<int>(substeps);
  tracers.every = positiveInteger(reader, *table, "tracers", "every", 1);
  if (tracers.every > 1000) reader.fail("tracers.every", "expected at most 1000 (the flow is held fixed over these steps)");
  tracers.outputEvery = outputEvery(reader, *table, "tracers", result);

  const toml::node* sources = table->get("source");
  const toml::array* list = sources ? sources->as_array() : nullptr;
  if (!list || !list->is_array_of_tables() || list->empty())
    reader.fail("tracers.source", "expected [[tracers.source]] entries (at least one)");
  const int dimensions = result.dimensions;
  const Extent& extent = result.lbm.extent;
  for (std::size_t n = 0; n < list->size(); ++n) {
    const std::string prefix = "tracers.source[" + std::to_string(n) + "]";
    const toml::table& entry = *(*list)[n].as_table();
    const std::string type = reader.choice(&entry, prefix, "type", {"point", "line", "plane", "box"}, true);
    std::vector<std::string> keys = {"type", "count", "release_every"};
    // Every point a source is given by must lie in the domain (node (i,j,k) sits at (i,j,k)).
    const auto inside = [&](const std::array<double, 3>& p, const std::string& key) {
      for (int axis = 0; axis < 3; ++axis)
        if (!(p[axis] >= 0.0 && p[axis] <= static_cast<double>(extent.size(axis) - 1)))
          reader.fail(prefix + "." + key, "lies outside the domain (nodes 0 to size - 1 on each axis)");
    };
    const auto at = [&](const std::string& key) { return point(reader, entry, prefix, key, dimensions); };
    const auto asFloats = [](const std::array<double, 3>& p, float (&to)[3]) {
      for (int axis = 0; axis < 3; ++axis) to[axis] = static_cast<float>(p[axis]);
    };
    particles::TracerSource source;
    if (type == "point") {
      keys.push_back("at");
      reader.checkKeys(entry, prefix, keys);
      const auto p = at("at");
      inside(p, "at");
      float position[3];
      asFloats(p, position);
      source = particles::TracerSource::point(position, tracerCounts(reader, entry, prefix, 1)[0]);
    } else if (type == "line") {
      keys.insert(keys.end(), {"from", "to"});
      reader.checkKeys(entry, prefix, keys);
      const auto from = at("from"), to = at("to");
      inside(from, "from");
      inside(to, "to");
      if (!entry.get("count")) reader.fail(prefix + ".count", "missing (expected a positive integer)");
      float a[3], b[3];
      asFloats(from, a);
      asFloats(to, b);
      source = particles::TracerSource::line(a, b, tracerCounts(reader, entry, prefix, 1)[0]);
    } else if (type == "plane") {
      keys.insert(keys.end(), {"corner", "edge1", "edge2"});
      reader.checkKeys(entry, prefix, keys);
      if (dimensions != 3) reader.fail(prefix + ".type", "a plane source needs a 3D domain (use a line in 2D)");
      const auto corner = at("corner"), edge1 = at("edge1"), edge2 = at("edge2");
      inside(corner, "corner");
      // The domain is convex: the plane lies in it when its four corners do.
      const auto shifted = [&](double first, double second) {
        std::array<double, 3> p = corner;
        for (int axis = 0; axis < 3; ++axis) p[axis] += first * edge1[axis] + second * edge2[axis];
        return p;
      };
      inside(shifted(1, 0), "edge1");
      inside(shifted(0, 1), "edge2");
      inside(shifted(1, 1), "edge2");
      const std::vector<int> counts = tracerCounts(reader, entry, prefix, 2);
      float c[3], e1[3], e2[3];
      asFloats(corner, c);
      asFloats(edge1, e1);
      asFloats(edge2, e2);
      source = particles::TracerSource::plane(c, e1, e2, counts[0], counts[1]);
    } else {
      keys.insert(keys.end(), {"min", "max"});
      reader.checkKeys(entry, prefix, keys);
      const auto low = at("min"), high = at("max");
      inside(low, "min");
      inside(high, "max");
      for (int axis = 0; axis < dimensions; ++axis)
        if (low[axis] > high[axis]) reader.fail(prefix + ".max", "expected max >= min on every axis");
      std::vector<int> counts = tracerCounts(reader, entry, prefix, static_cast<std::size_t>(dimensions));
      counts.resize(3, 1);
      float a[3], b[3];
      asFloats(low, a);
      asFloats(high, b);
      source = particles::TracerSource::box(a, b, counts[0], counts[1], counts[2]);
    }
    if (const toml::node* every = entry.get("release_every")) {
      source.releaseEvery = reader.integer(*every, prefix + ".release_every");
      if (source.releaseEvery < 0)
        reader.fail(prefix + ".release_every", "expected an integer >= 0 (0: released once, at step 0)");
      if (source.releaseEvery % tracers.every != 0)
        reader.fail(prefix + ".release_every", "expected a multiple of tracers.every (" + std::to_string(tracers.every) +
                                                   "): tracers are released on the steps they move");
    }
    if (source.perRelease() > tracers.particles.maxParticles)
      reader.fail(prefix + ".count", "one release exceeds tracers.max_particles (" +
                                         std::to_string(tracers.particles.maxParticles) + ")");
    tracers.particles.sources.push_back(source);
  }
}

// The tracer and surface series are named tracers_<step>.vtp and surface_<step>.vtp, beside the
// fields' <case name>_<step>.vti: a case of either name would share a .pvd with them.
void checkSeriesNames(const CaseReader& reader, const CaseDescription& result) {
  if ((result.tracers.enabled() && result.name == "tracers") || (result.surface.enabled() && result.name == "surface"))
    reader.fail("case.name", "\"" + result.name + "\" names octoflow's own " + result.name + " series: choose another name");
}

void readSurfaceTable(const CaseReader& reader, CaseDescription& result) {
  const toml::table* table = reader.table("surface", false);
  if (!table) return;
  reader.checkKeys(*table, "surface", {"field", "level", "output_every"});
  if (result.dimensions != 3) reader.fail("surface", "an isosurface needs a 3D domain");
  result.surface.field = reader.choice(table, "surface", "field", surfaceFieldNames(), true);
  const toml::node* level = table->get("level");
  if (!level) reader.fail("surface.level", "missing (expected a number: the value the surface is drawn at)");
  const double value = reader.number(*level, "surface.level");
  if (!std::isfinite(value)) reader.fail("surface.level", "expected a finite number");
  result.surface.level = static_cast<float>(value);
  result.surface.outputEvery = outputEvery(reader, *table, "surface", result);
}

}  // namespace

bool OutputSettings::wants(const std::string& field) const {
  return std::find(fields.begin(), fields.end(), field) != fields.end();
}

const std::vector<std::string>& uniformFieldNames() {
  static const std::vector<std::string> names = {"density", "velocity"};
  return names;
}

const std::vector<std::string>& surfaceFieldNames() {
  static const std::vector<std::string> names = {"density", "speed"};
  return names;
}

CaseDescription parseCase(const std::string& text, const std::string& sourceName) {
  toml::table root;
  try {
    root = toml::parse(text, sourceName);
  } catch (const toml::parse_error& error) {
    const auto& where = error.source().begin;
    throw InputError(sourceName + ":" + std::to_string(where.line) + ":" + std::to_string(where.column), "",
                     "TOML syntax error: " + std::string(error.description()));
  }
  CaseDescription result;
  result.sourcePath = sourceName;
  const CaseReader reader(root, sourceName);
  reader.checkKeys(root, "", {"case", "units", "lbm", "domain", "boundary", "obstacle", "forces", "output", "insitu",
                                "tracers", "surface"});
  readCaseTable(reader, result);
  readUnitsTable(reader, result);
  readLbmTable(reader, result);
  readDomainTable(reader, result);
  readBoundaries(reader, result);
  readObstacles(reader, result);
  readForcesTable(reader, result);
  readOutputTable(reader, result);
  readInSituTable(reader, result);
  readTracersTable(reader, result);
  readSurfaceTable(reader, result);
  checkSeriesNames(reader, result);
  rasterizeObstacles(reader, result);
  return result;
}

CaseDescription loadCase(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) throw InputError(path, "", "case file not found");
  std::ifstream file(path, std::ios::binary);
  if (!file) throw InputError(path, "", "cannot read the case file");
  std::ostringstream text;
  text << file.rdbuf();
  return parseCase(text.str(), path);
}

}  // namespace octoflow::io
