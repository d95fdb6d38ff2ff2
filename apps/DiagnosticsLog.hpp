#pragma once
// <output>/<file>.csv of a solver's diagnostics (sim::DiagnosticsLog: forces.csv, dendrite.csv):
// a header of the solver's columns, then a row every so many steps, the step as an integer and
// the rest as numbers. Each line is flushed whole as it is written, so a long run can be watched
// (and plotted) while it goes; a write that fails leaves the file at its last whole row.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "common/Extent.hpp"

namespace octoflow::app {

class DiagnosticsCsv {
public:
  // With `resumeAfter` >= 0 (a restart at that step) the rows of an earlier run's file up to that
  // step are kept and the new ones follow them.
  DiagnosticsCsv(const std::filesystem::path& path, const std::vector<std::string>& columns, Index resumeAfter = -1);
  ~DiagnosticsCsv();
  DiagnosticsCsv(const DiagnosticsCsv&) = delete;
  DiagnosticsCsv& operator=(const DiagnosticsCsv&) = delete;
  void write(const std::vector<double>& row);

private:
  std::FILE* file_ = nullptr;
  std::filesystem::path path_;
  long size_ = 0;  // bytes of whole rows written
};

}  // namespace octoflow::app
