#pragma once
// Reading a TOML case file with the file named in every message: the shared parser
// (io/CaseFile.cpp) and each solver's own section (sim/SolverRegistry.hpp) read through this.
// Only core's parsing sources include it (toml++ is private to core).
#include <stdexcept>

namespace octoflow::io::detail {
// toml++ 3.3 (Debian 12) checks a few properties of malformed input only by assertion before it
// reports them: a table header whose key starts with another character ("[[=", "[[[1]]]", a NUL)
// fails `is_bare_key_character(*cp) || is_string_delimiter(*cp)` in parse_key (upstream fix:
// marzer/tomlplusplus#301). Where assertions are compiled in, a failed one throws this instead of
// aborting, and parseCase reports an InputError; with NDEBUG, g++ builds reach the parser's own
// error ("expected bare key starting character").
struct TomlAssertionFailure : std::logic_error {
  using std::logic_error::logic_error;
};
[[noreturn]] inline void tomlAssertionFailed(const char* condition) { throw TomlAssertionFailure(condition); }
}  // namespace octoflow::io::detail
#define TOML_ASSERT(expr) \
  ((expr) ? static_cast<void>(0) : ::octoflow::io::detail::tomlAssertionFailed(#expr))
#include <toml++/toml.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "common/Error.hpp"
#include "common/Extent.hpp"

namespace octoflow::io {

inline std::string joinQuoted(const std::vector<std::string>& words) {
  std::string text;
  for (const auto& word : words) text += (text.empty() ? "" : ", ") + word;
  return text;
}

inline std::string typeName(const toml::node& node) {
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


// A point of `dimensions` coordinates under `key` (z = 0 in 2D).
inline std::array<double, 3> point(const CaseReader& reader, const toml::table& entry, const std::string& prefix,
                                   const std::string& key, int dimensions) {
  const toml::node* node = entry.get(key);
  if (!node) reader.fail(prefix + "." + key, "missing (expected " + std::to_string(dimensions) + " coordinates)");
  const std::vector<double> values = reader.numbers(*node, prefix + "." + key, dimensions);
  return {values[0], values[1], dimensions == 3 ? values[2] : 0.0};
}

// A positive integer under `key` of `table`, or `fallback` when the key is absent.
inline Index positiveInteger(const CaseReader& reader, const toml::table& table, const std::string& prefix,
                             const std::string& key, Index fallback) {
  const toml::node* node = table.get(key);
  if (!node) return fallback;
  const Index value = reader.integer(*node, prefix + "." + key);
  if (value <= 0) reader.fail(prefix + "." + key, "expected a positive integer, got " + std::to_string(value));
  return value;
}

// A path from the case: as given (relative to the working directory), else next to the case file.
inline std::string resolvePath(const std::string& path, const std::string& casePath) {
  std::filesystem::path found = path;
  const std::filesystem::path besideCase = std::filesystem::path(casePath).parent_path() / path;
  if (!std::filesystem::exists(found) && found.is_relative() && std::filesystem::exists(besideCase)) found = besideCase;
  return found.string();
}

}  // namespace octoflow::io
