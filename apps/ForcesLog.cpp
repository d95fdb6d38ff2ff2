#include "ForcesLog.hpp"

#include <cmath>

#include "common/Error.hpp"

namespace octoflow::app {

ForcesLog::ForcesLog(const std::filesystem::path& path, const io::ForcesSettings& settings, int dimensions)
    : settings_(settings), dimensions_(dimensions) {
  file_ = std::fopen(path.c_str(), "w");
  if (!file_) throw Error("cannot write " + path.string());
  std::fprintf(file_, "step,fx,fy,fz,cd,cl\n");
  std::fflush(file_);
}

ForcesLog::~ForcesLog() {
  if (file_) std::fclose(file_);
}

double ForcesLog::coefficient(double force, const io::ForcesSettings& settings, int dimensions) {
  if (!settings.coefficients()) return NAN;
  const double length = settings.referenceLength;
  const double area = dimensions == 2 ? length : (settings.referenceArea > 0.0 ? settings.referenceArea : length * length);
  constexpr double referenceDensity = 1.0;  // lattice units
  return 2.0 * force / (referenceDensity * settings.referenceVelocity * settings.referenceVelocity * area);
}

void ForcesLog::write(Index step, const std::array<double, 3>& force) {
  std::fprintf(file_, "%lld,%.9e,%.9e,%.9e,%.9e,%.9e\n", static_cast<long long>(step), force[0], force[1], force[2],
               coefficient(force[0], settings_, dimensions_), coefficient(force[1], settings_, dimensions_));
  std::fflush(file_);
}

}  // namespace octoflow::app
