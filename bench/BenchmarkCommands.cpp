#include "BenchmarkCommands.hpp"

#include "common/Error.hpp"

namespace octoflow::bench {

const std::vector<BenchmarkCommand>& benchmarkCommands() {
  static const std::vector<BenchmarkCommand> commands = {
      {"lbm", "Uniform LBM MLUPS vs the measured copy bandwidth", &defineLbmBenchmark},
      {"phasefield", "Phase-field dendrite GLUPS and TFLOPS vs the copy bandwidth and FP32 peak",
       &definePhaseFieldBenchmark},
      {"isosurface", "phi = 0.5 surface of a sphere extracted on the device vs copying the whole field to the host",
       &defineIsosurfaceBenchmark},
      {"insitu", "time a step of a GPU run with and without tracers and an isosurface handed to the host",
       &defineInSituBenchmark},
      {"reliability", "what the watchdog's check and a checkpoint (write, read back) cost a run",
       &defineReliabilityBenchmark},
      {"amr", "octree LBM ms a step, MLUPS and the fraction of the copy roofline (the seed's Table 4 case)",
       &defineAmrBenchmark},
      {"ns", "2D Navier-Stokes steps a second (cylinder, 1024 x 512), multigrid cycles a step, time shares of a step",
       &defineNsBenchmark},
  };
  return commands;
}

lbm::CollisionKind collisionOption(const std::string& value) {
  if (value == "bgk") return lbm::CollisionKind::Bgk;
  if (value == "trt") return lbm::CollisionKind::Trt;
  if (value == "mrt") return lbm::CollisionKind::Mrt;
  throw InputError("--collision", "", "expected bgk, trt or mrt, got '" + value + "'");
}

lbm::LesModel lesOption(const std::string& value) {
  if (value == "none") return lbm::LesModel::None;
  if (value == "smagorinsky") return lbm::LesModel::Smagorinsky;
  if (value == "csm") return lbm::LesModel::Csm;
  throw InputError("--les", "", "expected none, smagorinsky or csm, got '" + value + "'");
}

}  // namespace octoflow::bench
