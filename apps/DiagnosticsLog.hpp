#pragma once
// <output>/<file>.csv of a solver's diagnostics (sim::DiagnosticsLog: forces.csv, dendrite.csv):
// a header of the solver's columns, then a row every so many steps, the step as an integer and
// the rest as numbers. Each line is flushed as it is written, so a long run can be watched (and
// plotted) while it goes.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace octoflow::app {

class DiagnosticsCsv {
public:
  DiagnosticsCsv(const std::filesystem::path& path, const std::vector<std::string>& columns);
  ~DiagnosticsCsv();
  DiagnosticsCsv(const DiagnosticsCsv&) = delete;
  DiagnosticsCsv& operator=(const DiagnosticsCsv&) = delete;
  void write(const std::vector<double>& row);

private:
  std::FILE* file_ = nullptr;
  std::filesystem::path path_;
};

}  // namespace octoflow::app
