#pragma once
// <output>/forces.csv: the force on the obstacles every [forces] every steps, with the drag and
// lift coefficients when reference values are given. Each line is flushed as it is written,
// so a long run can be watched (and plotted) while it goes.
#include <array>
#include <cstdio>
#include <filesystem>

#include "io/CaseFile.hpp"

namespace octoflow::app {

class ForcesLog {
public:
  // With physical units, the columns time_s,fx_N,fy_N,fz_N follow (N/m per unit depth in 2D).
  ForcesLog(const std::filesystem::path& path, const io::ForcesSettings& settings, const io::PhysicalUnits& units,
            int dimensions);
  ~ForcesLog();
  ForcesLog(const ForcesLog&) = delete;
  ForcesLog& operator=(const ForcesLog&) = delete;
  void write(Index step, const std::array<double, 3>& force);

  // cd = 2 f / (rho0 U^2 A): A = D per unit depth in 2D, reference_area (default D^2) in 3D.
  static double coefficient(double force, const io::ForcesSettings& settings, int dimensions);

private:
  std::FILE* file_ = nullptr;
  io::ForcesSettings settings_;
  io::PhysicalUnits units_;
  int dimensions_;
};

}  // namespace octoflow::app
