#include "phasefield/PhaseFieldCase.hpp"

#include <cmath>
#include <cstdio>

#include "common/Error.hpp"
#include "io/CaseFile.hpp"
#include "io/CaseReader.hpp"
#include "phasefield/PhaseFieldSimulation.hpp"

namespace octoflow::phasefield {

namespace {

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", value);
  return text;
}

}  // namespace

const std::vector<sim::FieldInfo>& PhaseFieldCase::fields() const {
  static const std::vector<sim::FieldInfo> fields = {{"phi", 1}, {"temperature", 1}};
  return fields;
}

std::string PhaseFieldCase::describe() const {
  return model + " (pure Ni), dx " + number(dx) + " m, dt " + number(dt) + " s, undercooling " +
         number(-config.initialU) + " (T " + number(material.meltingTemperature + config.initialU * latentOverCapacity()) +
         " K), anisotropy " + number(anisotropy) + ", noise " + number(noise) + ", nucleus radius " +
         number(config.nucleusRadius) + " nodes";
}

std::unique_ptr<sim::Simulation> PhaseFieldCase::create(const io::CaseDescription& description,
                                                        const sim::CreateOptions& options) const {
  return makePhaseFieldSimulation(description, *this, options);
}

std::unique_ptr<sim::SolverCase> parsePhaseFieldCase(const io::CaseReader& reader, io::CaseDescription& description) {
  auto result = std::make_unique<PhaseFieldCase>();
  PhaseFieldCase& c = *result;
  const toml::table* table = reader.table("phasefield", false);
  const toml::table empty;
  const toml::table& keys = table ? *table : empty;
  reader.checkKeys(keys, "phasefield",
                   {"model", "dx", "dt", "undercooling", "initial_temperature", "anisotropy", "noise", "noise_seed",
                    "nucleus_radius", "nucleus_centre"});
  c.model = reader.choice(table, "phasefield", "model", {"kobayashi"});
  const auto optionalPositive = [&](const char* key, double fallback) {
    const toml::node* node = keys.get(key);
    return node ? reader.positive(*node, std::string("phasefield.") + key) : fallback;
  };
  const auto fraction = [&](const char* key, double fallback, double upper) {
    const toml::node* node = keys.get(key);
    if (!node) return fallback;
    const double value = reader.number(*node, std::string("phasefield.") + key);
    if (!(value >= 0.0 && value <= upper))
      reader.fail(std::string("phasefield.") + key,
                  "expected a number from 0 to " + number(upper) + ", got " + number(value));
    return value;
  };
  c.dx = optionalPositive("dx", 2e-8);
  c.anisotropy = fraction("anisotropy", 0.05, 1.0 / 15.0);
  c.noise = fraction("noise", 0.025, 1.0);
  const StabilityLimits limits = kobayashiStability(c.material, c.dx, description.dimensions, c.anisotropy);
  // Default: 0.8 of the limit (in 3D the heat equation's dx^2 / (7.5 kappa), as the seed's figures imply).
  c.dt = optionalPositive("dt", 0.8 * limits.limit());
  if (c.dt > limits.limit())
    reader.fail("phasefield.dt", "dt = " + number(c.dt) + " s exceeds the explicit stability limit " +
                                     number(limits.limit()) + " s at dx = " + number(c.dx) + " m (heat equation: " +
                                     number(limits.heat) + " s, phase field: " + number(limits.phase) + " s)");
  if (keys.get("undercooling") && keys.get("initial_temperature"))
    reader.fail("phasefield.initial_temperature", "give either undercooling or initial_temperature, not both");
  double undercooling = fraction("undercooling", 0.5, 1.0);
  if (const toml::node* node = keys.get("initial_temperature")) {
    const double t = reader.positive(*node, "phasefield.initial_temperature");
    if (!(t < c.material.meltingTemperature))
      reader.fail("phasefield.initial_temperature", "expected a temperature below the melting point " +
                                                        number(c.material.meltingTemperature) + " K (an undercooled melt)");
    undercooling = (c.material.meltingTemperature - t) / c.latentOverCapacity();
    if (undercooling > 1.0)
      reader.fail("phasefield.initial_temperature", "expected at least " +
                                                        number(c.material.meltingTemperature - c.latentOverCapacity()) +
                                                        " K (undercooling (Tm - T) C / L at most 1)");
  }
  std::uint64_t seed = 1;
  if (const toml::node* node = keys.get("noise_seed")) {
    const Index value = reader.integer(*node, "phasefield.noise_seed");
    if (value < 0) reader.fail("phasefield.noise_seed", "expected an integer >= 0");
    seed = static_cast<std::uint64_t>(value);
  }
  PhaseFieldConfig& config = c.config;
  config.extent = description.extent;
  config.dimensions = description.dimensions;
  config.periodic = description.periodic;
  config.coefficients = kobayashiStep(c.material, c.dx, c.dt, c.anisotropy, c.noise, seed);
  config.initialU = static_cast<float>(-undercooling);
  config.interfaceSharpness =
      std::sqrt(2.0 * c.material.barrierHeight()) * c.dx / (2.0 * std::sqrt(c.material.epsilonBarSquared()));
  config.nucleusRadius = optionalPositive("nucleus_radius", 4.0);
  for (int axis = 0; axis < 3; ++axis)
    config.nucleusCentre[static_cast<std::size_t>(axis)] =
        axis < description.dimensions ? 0.5 * static_cast<double>(description.extent.size(axis) - 1) : 0.0;
  if (keys.get("nucleus_centre")) {
    config.nucleusCentre = io::point(reader, keys, "phasefield", "nucleus_centre", description.dimensions);
    for (int axis = 0; axis < description.dimensions; ++axis) {
      const double x = config.nucleusCentre[static_cast<std::size_t>(axis)];
      if (!(x >= 0.0 && x <= static_cast<double>(description.extent.size(axis) - 1)))
        reader.fail("phasefield.nucleus_centre", "lies outside the domain (nodes 0 to size - 1 on each axis)");
    }
  }
  if (const toml::table* diagnostics = reader.table("diagnostics", false)) {
    reader.checkKeys(*diagnostics, "diagnostics", {"every"});
    c.diagnosticsEvery = io::positiveInteger(reader, *diagnostics, "diagnostics", "every", c.diagnosticsEvery);
  }
  return result;
}

const PhaseFieldCase& phaseFieldCaseOf(const io::CaseDescription& description) {
  const auto* phaseField = dynamic_cast<const PhaseFieldCase*>(description.solverCase.get());
  if (!phaseField)
    throw InputError(description.sourcePath, "case.solver", "expected a \"phasefield\" case, got \"" + description.solver + "\"");
  return *phaseField;
}

}  // namespace octoflow::phasefield
