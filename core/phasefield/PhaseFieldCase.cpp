#include "phasefield/PhaseFieldCase.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/Error.hpp"
#include "common/Format.hpp"
#include "io/CaseFile.hpp"
#include "io/CaseReader.hpp"
#include "phasefield/PhaseFieldSimulation.hpp"

namespace octoflow::phasefield {

namespace {

}  // namespace

const std::vector<sim::FieldInfo>& PhaseFieldCase::fields() const {
  static const std::vector<sim::FieldInfo> fields = {{"phi", 1}, {"temperature", 1}};
  return fields;
}

// phi and u at two steps, the mapped output fields where they differ from them; host copies of
// both fields.
sim::MemoryNeeds PhaseFieldCase::memoryNeeds(exec::Backend) const {
  sim::MemoryNeeds needs;
  needs.workingBytesPerNode = 16.0 + (phiOutput().identity() ? 0.0 : 4.0) + (temperatureOutput().identity() ? 0.0 : 4.0);
  needs.hostBytesPerNode = 8.0;
  needs.gatherBytesPerNode = 8.0;
  return needs;
}

std::string PhaseFieldCase::describe() const {
  if (isKarmaRappel())
    return model + " (dimensionless), dx " + shortNumber(dx) + " W0, dt " + shortNumber(dt) + " tau0, undercooling " +
           shortNumber(-config.initialU) + ", D " + shortNumber(karmaRappel.diffusivity) + ", lambda " +
           shortNumber(karmaRappel.coupling()) + ", anisotropy " + shortNumber(anisotropy) + ", noise " + shortNumber(noise) +
           ", nucleus radius " + shortNumber(config.nucleusRadius) + " nodes";
  return model + " (pure Ni), dx " + shortNumber(dx) + " m, dt " + shortNumber(dt) + " s, undercooling " +
         shortNumber(-config.initialU) + " (T " + shortNumber(material.meltingTemperature + config.initialU * latentOverCapacity()) +
         " K), anisotropy " + shortNumber(anisotropy) + ", noise " + shortNumber(noise) + ", nucleus radius " +
         shortNumber(config.nucleusRadius) + " nodes";
}

PhaseFieldCase::OutputMap PhaseFieldCase::phiOutput() const {
  const double range = config.solidPhi - config.liquidPhi;
  return {1.0 / range, -config.liquidPhi / range};
}

PhaseFieldCase::OutputMap PhaseFieldCase::temperatureOutput() const {
  if (isKarmaRappel()) return {1.0, 0.0};
  return {latentOverCapacity(), material.meltingTemperature};
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
                    "nucleus_radius", "nucleus_centre", "diffusivity"});
  c.model = reader.choice(table, "phasefield", "model", {"kobayashi", "karma-rappel"});
  const bool karmaRappel = c.model == "karma-rappel";
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
                  "expected a number from 0 to " + shortNumber(upper) + ", got " + shortNumber(value));
    return value;
  };
  const auto onlyFor = [&](const char* key, const char* model) {
    if (keys.get(key) && c.model != model)
      reader.fail(std::string("phasefield.") + key, std::string("applies to model \"") + model + "\" only");
  };
  onlyFor("initial_temperature", "kobayashi");
  onlyFor("diffusivity", "karma-rappel");
  c.dx = optionalPositive("dx", karmaRappel ? 0.4 : 2e-8);
  c.anisotropy = fraction("anisotropy", 0.05, 1.0 / 15.0);
  c.noise = fraction("noise", karmaRappel ? 0.0 : 0.025, 1.0);
  c.karmaRappel.diffusivity = optionalPositive("diffusivity", c.karmaRappel.diffusivity);
  if (keys.get("undercooling") && keys.get("initial_temperature"))
    reader.fail("phasefield.initial_temperature", "give either undercooling or initial_temperature, not both");
  double undercooling = fraction("undercooling", karmaRappel ? 0.3 : 0.5, 1.0);
  if (const toml::node* node = keys.get("initial_temperature")) {
    const double t = reader.positive(*node, "phasefield.initial_temperature");
    if (!(t < c.material.meltingTemperature))
      reader.fail("phasefield.initial_temperature", "expected a temperature below the melting point " +
                                                        shortNumber(c.material.meltingTemperature) + " K (an undercooled melt)");
    undercooling = (c.material.meltingTemperature - t) / c.latentOverCapacity();
    if (undercooling > 1.0)
      reader.fail("phasefield.initial_temperature", "expected at least " +
                                                        shortNumber(c.material.meltingTemperature - c.latentOverCapacity()) +
                                                        " K (undercooling (Tm - T) C / L at most 1)");
  }
  // The explicit limit of both equations; the default dt is 0.8 of it (Kobayashi in 3D: the heat
  // equation's dx^2 / (7.5 kappa), as the seed's figures imply).
  const StabilityLimits limits =
      karmaRappel ? karmaRappelStability(c.karmaRappel, c.dx, description.dimensions, c.anisotropy, undercooling)
                  : kobayashiStability(c.material, c.dx, description.dimensions, c.anisotropy);
  const double limit = limits.limit();
  const char* timeUnit = karmaRappel ? " tau0" : " s";
  const char* lengthUnit = karmaRappel ? " W0" : " m";
  c.dt = optionalPositive("dt", 0.8 * limit);
  if (c.dt > limit)
    reader.fail("phasefield.dt", "dt = " + shortNumber(c.dt) + timeUnit + " exceeds the explicit stability limit " +
                                     shortNumber(limit) + timeUnit + " at dx = " + shortNumber(c.dx) + lengthUnit +
                                     " (heat equation: " + shortNumber(limits.heat) + timeUnit +
                                     ", phase field: " + shortNumber(limits.phase) + timeUnit + ")");
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
  config.initialU = static_cast<float>(-undercooling);
  if (karmaRappel) {
    config.model = PhaseFieldModel::KarmaRappel;
    config.karmaRappel = karmaRappelStep(c.karmaRappel, c.dx, c.dt, c.anisotropy, c.noise, seed);
    config.liquidPhi = -1.0f;
    config.solidPhi = 1.0f;
    config.interfaceSharpness = c.dx / std::sqrt(2.0);  // psi = -tanh(r / (sqrt 2 W0))
  } else {
    config.model = PhaseFieldModel::Kobayashi;
    config.kobayashi = kobayashiStep(c.material, c.dx, c.dt, c.anisotropy, c.noise, seed);
    config.interfaceSharpness =
        std::sqrt(2.0 * c.material.barrierHeight()) * c.dx / (2.0 * std::sqrt(c.material.epsilonBarSquared()));
  }
  config.nucleusRadius = optionalPositive("nucleus_radius", 4.0);
  for (int axis = 0; axis < 3; ++axis)
    config.nucleusCentre[static_cast<std::size_t>(axis)] =
        axis < description.dimensions ? 0.5 * static_cast<double>(description.extent.size(axis) - 1) : 0.0;
  if (keys.get("nucleus_centre")) {
    config.nucleusCentre = io::point(reader, keys, "phasefield", "nucleus_centre", description.dimensions);
    for (int axis = 0; axis < description.dimensions; ++axis) {
      const double x = config.nucleusCentre[static_cast<std::size_t>(axis)];
      if (!(x >= -0.5 && x <= static_cast<double>(description.extent.size(axis)) - 0.5))
        reader.fail("phasefield.nucleus_centre",
                    "lies outside the domain (nodes -0.5 to size - 0.5 on each axis: the faces lie half a spacing "
                    "beyond the outermost nodes)");
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
