#pragma once
// The 2D Navier-Stokes solver's case section ([ns], [ns.boundary], [ns.cylinder], [ns.multigrid],
// [diagnostics]; docs/CASES.md) and the Simulation that runs it. Registered as case.solver = "ns2d".
#include <cstdint>
#include <memory>
#include <vector>

#include "ns/NsConfig.hpp"
#include "sim/SolverCase.hpp"

namespace octoflow::io {
class CaseReader;
struct CaseDescription;
}  // namespace octoflow::io

namespace octoflow::ns {

class NsCase : public sim::SolverCase {
public:
  double reynolds = 100.0;
  double cfl = 0.0;  // dt / h (the reference velocity is 1); 0 when dt was given
  NsConfig config;
  Index diagnosticsEvery = 10;

  std::vector<std::uint8_t> solid;  // cell centres at least half inside the cylinder (tracers stop there)

  const std::vector<sim::FieldInfo>& fields() const override;
  const std::vector<std::uint8_t>* solidMask() const override { return solid.empty() ? nullptr : &solid; }
  std::string describe() const override;
  sim::MemoryNeeds memoryNeeds(exec::Backend backend) const override;
  std::unique_ptr<sim::Simulation> create(const io::CaseDescription& description,
                                          const sim::CreateOptions& options) const override;
};

std::unique_ptr<sim::SolverCase> parseNsCase(const io::CaseReader& reader, io::CaseDescription& description);
std::unique_ptr<sim::Simulation> makeNsSimulation(const io::CaseDescription& description, const NsCase& nsCase,
                                                  const sim::CreateOptions& options);

}  // namespace octoflow::ns
