#include "ForcesLog.hpp"

#include <cmath>

#include "common/Error.hpp"

namespace octoflow::app {

ForcesLog::ForcesLog(const std::filesystem::path& path, const io::ForcesSettings& settings,
                     const io::PhysicalUnits& units, int dimensions)
    : settings_(settings), units_(units), dimensions_(dimensions) {
  file_ = std::fopen(path.c_str(), "w");
  if (!file_) throw Error("cannot write " + path.string());
  std::fprintf(file_, units_.given ? "step,fx,fy,fz,cd,cl,time_s,fx_N,fy_N,fz_N\n" : "step,fx,fy,fz,cd,cl\n");
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
  std::fprintf(file_, "%lld,%.9e,%.9e,%.9e,%.9e,%.9e", static_cast<long long>(step), force[0], force[1], force[2],
               coefficient(force[0], settings_, dimensions_), coefficient(force[1], settings_, dimensions_));
  if (units_.given)
    std::fprintf(file_, ",%.9e,%.9e,%.9e,%.9e", step * units_.timeStep(), units_.toSiForce(force[0], dimensions_),
                 units_.toSiForce(force[1], dimensions_), units_.toSiForce(force[2], dimensions_));
  std::fprintf(file_, "\n");
  std::fflush(file_);
}

}  // namespace octoflow::app
