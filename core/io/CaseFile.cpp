#include "io/CaseFile.hpp"


#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string_view>
#include <utility>

#include "common/Error.hpp"
#include "io/CaseReader.hpp"
#include "sim/SolverRegistry.hpp"

namespace octoflow::io {

namespace {

void readCaseTable(const CaseReader& reader, CaseDescription& result) {
  const toml::table* table = reader.table("case", true);
  reader.checkKeys(*table, "case", {"name", "solver", "steps"});
  result.name = reader.string(table, "case", "name", nullptr);
  if (result.name.empty() || !std::all_of(result.name.begin(), result.name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
      }))
    reader.fail("case.name", "expected a non-empty name of letters, digits, '_' or '-' (it names output files), got '" +
                                 result.name + "'");
  const std::string defaultSolver = "lbm";
  result.solver = reader.string(table, "case", "solver", &defaultSolver);
  if (!sim::findSolver(result.solver)) {
    std::string names;
    for (const auto& entry : sim::solvers()) names += std::string(names.empty() ? "\"" : ", \"") + entry.name + "\"";
    reader.fail("case.solver", "expected one of " + names + ", got \"" + result.solver + "\"");
  }
  const toml::node* steps = table->get("steps");
  if (!steps) reader.fail("case.steps", "missing (expected a positive integer)");
  result.steps = reader.integer(*steps, "case.steps");
  if (result.steps <= 0) reader.fail("case.steps", "expected a positive integer, got " + std::to_string(result.steps));
}

void readDomainTable(const CaseReader& reader, CaseDescription& result) {
  const toml::table* table = reader.table("domain", true);
  reader.checkKeys(*table, "domain", {"size", "periodic"});
  const toml::node* size = table->get("size");
  if (!size) reader.fail("domain.size", "missing (expected an array of 2 or 3 sizes)");
  const auto& sizes = reader.array(*size, "domain.size", 2, 3, "positive integers");
  result.dimensions = static_cast<int>(sizes.size());
  Index extent[3] = {1, 1, 1};
  for (int axis = 0; axis < result.dimensions; ++axis) {
    extent[axis] = reader.integer(sizes[axis], "domain.size");
    if (extent[axis] <= 0)
      reader.fail("domain.size", "expected positive integers, got " + std::to_string(extent[axis]));
  }
  // The node count sizes every array: a product beyond Index would wrap round to a wrong count.
  if (extent[0] > std::numeric_limits<Index>::max() / extent[1] / extent[2])
    reader.fail("domain.size", "too many nodes: their number exceeds 2^63 - 1");
  result.extent = Extent{extent[0], extent[1], extent[2]};
  result.periodic = {false, false, result.dimensions == 2};
  if (const toml::node* flags = table->get("periodic")) {
    const auto& values = reader.array(*flags, "domain.periodic", 2, 3, "booleans");
    if (static_cast<int>(values.size()) != result.dimensions)
      reader.fail("domain.size", "has " + std::to_string(result.dimensions) + " entries but domain.periodic has " +
                                     std::to_string(values.size()) + ": give both one entry per axis");
    for (int axis = 0; axis < result.dimensions; ++axis) {
      if (!values[axis].is_boolean())
        reader.fail("domain.periodic", "expected an array of booleans, found " + typeName(values[axis]));
      result.periodic[static_cast<std::size_t>(axis)] = values[axis].as_boolean()->get();
    }
  }
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
  const std::vector<std::string> known = sim::fieldNames(result.solverCase->fields());
  result.output.fields = fields ? reader.strings(*fields, "output.fields") : known;
  std::set<std::string> seen;
  for (const auto& field : result.output.fields) {
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
  const sim::FieldInfo* velocity = sim::findField(result.solverCase->fields(), "velocity");
  if (!velocity || velocity->components != 3)
    reader.fail("tracers", "solver \"" + result.solver + "\" has no velocity field to carry tracers");
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
  const Extent& extent = result.extent;
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
  result.surface.field = reader.choice(table, "surface", "field", surfaceFieldNames(result.solverCase->fields()), true);
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

std::vector<std::string> surfaceFieldNames(const std::vector<sim::FieldInfo>& fields) {
  std::vector<std::string> names = sim::fieldNames(fields, 1);
  const sim::FieldInfo* velocity = sim::findField(fields, "velocity");
  if (velocity && velocity->components == 3) names.push_back("speed");
  return names;
}

const std::vector<std::string>& sharedTableNames() {
  static const std::vector<std::string> names = {"case",    "domain",  "output",     "insitu",
                                                 "tracers", "surface", "checkpoint", "watchdog"};
  return names;
}

namespace {

void readCheckpointTable(const CaseReader& reader, CaseDescription& result) {
  const toml::table* table = reader.table("checkpoint", false);
  if (!table) return;
  reader.checkKeys(*table, "checkpoint", {"every", "keep", "directory"});
  if (const toml::node* every = table->get("every")) {
    result.checkpoint.every = reader.integer(*every, "checkpoint.every");
    if (result.checkpoint.every < 0)
      reader.fail("checkpoint.every", "expected an integer >= 0 (0: no checkpoints), got " +
                                          std::to_string(result.checkpoint.every));
  }
  result.checkpoint.keep = positiveInteger(reader, *table, "checkpoint", "keep", result.checkpoint.keep);
  if (table->get("directory")) {
    result.checkpoint.directory = reader.string(table, "checkpoint", "directory", nullptr);
    if (result.checkpoint.directory.empty()) reader.fail("checkpoint.directory", "expected a non-empty path");
  }
}

void readWatchdogTable(const CaseReader& reader, CaseDescription& result) {
  const toml::table* table = reader.table("watchdog", false);
  if (!table) return;
  reader.checkKeys(*table, "watchdog", {"check_every"});
  if (const toml::node* every = table->get("check_every")) {
    result.watchdog.checkEvery = reader.integer(*every, "watchdog.check_every");
    if (result.watchdog.checkEvery < 0)
      reader.fail("watchdog.check_every", "expected an integer >= 0 (0: no checks), got " +
                                              std::to_string(result.watchdog.checkEvery));
  }
}

// FNV-1a over the parsed values of the tables that define the state, walked in key order (toml++
// keeps a table's keys sorted), so the hash does not depend on the file's layout, comments or the
// order of keys. Each value goes in with its type and exact bits; strings and containers with their
// length. (Not through toml++'s TOML writer: its layout code converts log10 of a float below 1 to
// size_t, undefined behaviour for every case with such a number in an array.)
class StateHash {
public:
  void node(const toml::node& value) {
    switch (value.type()) {
      case toml::node_type::table: {
        const toml::table& table = *value.as_table();
        tag('{', table.size());
        for (const auto& [key, entry] : table) {
          text(key.str());
          node(entry);
        }
        break;
      }
      case toml::node_type::array: {
        const toml::array& array = *value.as_array();
        tag('[', array.size());
        for (const toml::node& entry : array) node(entry);
        break;
      }
      case toml::node_type::string: tag('s', 0); text(value.as_string()->get()); break;
      case toml::node_type::integer: tag('i', 0); bytes(value.as_integer()->get()); break;
      case toml::node_type::floating_point: tag('f', 0); bytes(value.as_floating_point()->get()); break;
      case toml::node_type::boolean: tag('b', value.as_boolean()->get() ? 1 : 0); break;
      case toml::node_type::date: tag('d', 0); date(value.as_date()->get()); break;
      case toml::node_type::time: tag('t', 0); time(value.as_time()->get()); break;
      case toml::node_type::date_time: {
        const toml::date_time& when = value.as_date_time()->get();
        tag('T', when.offset ? 1 : 0);
        date(when.date);
        time(when.time);
        if (when.offset) bytes(when.offset->minutes);
        break;
      }
      case toml::node_type::none: tag('0', 0); break;
    }
  }
  std::uint64_t value() const { return hash_; }

private:
  void tag(char kind, std::size_t count) {
    bytes(kind);
    bytes(static_cast<std::uint64_t>(count));
  }
  void text(std::string_view characters) {
    bytes(static_cast<std::uint64_t>(characters.size()));
    for (const char c : characters) bytes(c);
  }
  void date(const toml::date& day) {
    bytes(day.year);
    bytes(day.month);
    bytes(day.day);
  }
  void time(const toml::time& moment) {
    bytes(moment.hour);
    bytes(moment.minute);
    bytes(moment.second);
    bytes(moment.nanosecond);
  }
  template <class T>
  void bytes(const T& value) {
    unsigned char raw[sizeof(T)];
    std::memcpy(raw, &value, sizeof(T));
    for (const unsigned char byte : raw) {
      hash_ ^= byte;
      hash_ *= 0x100000001b3ull;
    }
  }
  std::uint64_t hash_ = 0xcbf29ce484222325ull;
};

std::uint64_t stateHashOf(const toml::table& root) {
  toml::table state = root;
  for (const char* table : {"output", "insitu", "surface", "checkpoint", "watchdog"}) state.erase(table);
  if (toml::table* caseTable = state["case"].as_table()) {
    caseTable->erase("name");
    caseTable->erase("steps");
  }
  StateHash hash;
  hash.node(state);
  return hash.value();
}

}  // namespace

CaseDescription parseCase(const std::string& text, const std::string& sourceName) {
  toml::table root;
  try {
    root = toml::parse(text, sourceName);
  } catch (const toml::parse_error& error) {
    const auto& where = error.source().begin;
    throw InputError(sourceName + ":" + std::to_string(where.line) + ":" + std::to_string(where.column), "",
                     "TOML syntax error: " + std::string(error.description()));
  } catch (const detail::TomlAssertionFailure&) {
    throw InputError(sourceName, "", "TOML syntax error: a malformed table header or key");
  }
  CaseDescription result;
  result.sourcePath = sourceName;
  result.sourceText = text;
  const CaseReader reader(root, sourceName);
  readCaseTable(reader, result);
  const sim::SolverEntry& solver = *sim::findSolver(result.solver);
  std::vector<std::string> tables = sharedTableNames();
  tables.insert(tables.end(), solver.tables.begin(), solver.tables.end());
  reader.checkKeys(root, "", tables);
  readDomainTable(reader, result);
  result.solverCase = solver.parse(reader, result);
  readOutputTable(reader, result);
  readInSituTable(reader, result);
  readTracersTable(reader, result);
  readSurfaceTable(reader, result);
  readCheckpointTable(reader, result);
  readWatchdogTable(reader, result);
  checkSeriesNames(reader, result);
  result.stateHash = stateHashOf(root);
  return result;
}

CaseDescription loadCase(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) throw InputError(path, "", "a folder, not a case file");
  if (!std::filesystem::is_regular_file(path, error)) throw InputError(path, "", "case file not found");
  std::ifstream file(path, std::ios::binary);
  if (!file) throw InputError(path, "", "cannot read the case file");
  std::ostringstream text;
  text << file.rdbuf();
  return parseCase(text.str(), path);
}

}  // namespace octoflow::io
