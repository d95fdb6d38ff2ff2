#include "ns/NsConfig.hpp"

#include <algorithm>
#include <cmath>

#include "common/Error.hpp"

namespace octoflow::ns {

std::unique_ptr<NsEngine> makeNsEngineCpu(const NsConfig& config);
#if OCTOFLOW_HAVE_CUDA
std::unique_ptr<NsEngine> makeNsEngineCuda(const NsConfig& config);
#endif

std::unique_ptr<NsEngine> makeNsEngine(const NsConfig& config, exec::Backend backend) {
#if OCTOFLOW_HAVE_CUDA
  if (backend == exec::Backend::Cuda) return makeNsEngineCuda(config);
#endif
  (void)backend;
  return makeNsEngineCpu(config);
}

std::vector<std::array<int, 2>> multigridLevels(const NsConfig& config) {
  std::vector<std::array<int, 2>> levels = {{config.geometry.nx, config.geometry.ny}};
  const int most = config.multigrid.levels > 0 ? std::min(config.multigrid.levels, kMaxLevels) : kMaxLevels;
  while (static_cast<int>(levels.size()) < most) {
    const auto [nx, ny] = levels.back();
    if (nx % 2 != 0 || ny % 2 != 0 || nx < 4 || ny < 4) break;
    // A periodic axis of an odd number of cells has no red-black colouring (the cells either side
    // of the seam would share a colour): such axes stay even.
    if ((config.geometry.periodic(0) && (nx / 2) % 2 != 0) || (config.geometry.periodic(1) && (ny / 2) % 2 != 0)) break;
    levels.push_back({nx / 2, ny / 2});
  }
  return levels;
}

double solidFraction(const NsConfig& config, double x, double y) {
  if (!config.cylinder) return 0.0;
  const double dx = x - config.cylinderCentre[0], dy = y - config.cylinderCentre[1];
  const double distance = std::sqrt(dx * dx + dy * dy) - 0.5 * config.cylinderDiameter;
  return std::clamp(0.5 - distance / config.h, 0.0, 1.0);
}

double PoissonReport::convergenceFactor() const {
  if (cycles == 0 || !(initialResidual > 0.0)) return 0.0;
  return std::pow(finalResidual / initialResidual, 1.0 / cycles);
}

}  // namespace octoflow::ns
