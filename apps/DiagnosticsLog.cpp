#include "DiagnosticsLog.hpp"

#include "common/Error.hpp"

namespace octoflow::app {

DiagnosticsCsv::DiagnosticsCsv(const std::filesystem::path& path, const std::vector<std::string>& columns)
    : path_(path) {
  file_ = std::fopen(path.c_str(), "w");
  if (!file_) throw Error("cannot write " + path.string());
  for (std::size_t n = 0; n < columns.size(); ++n) std::fprintf(file_, n ? ",%s" : "%s", columns[n].c_str());
  std::fprintf(file_, "\n");
  std::fflush(file_);
}

DiagnosticsCsv::~DiagnosticsCsv() {
  if (file_) std::fclose(file_);
}

void DiagnosticsCsv::write(const std::vector<double>& row) {
  for (std::size_t n = 0; n < row.size(); ++n) {
    if (n == 0)
      std::fprintf(file_, "%lld", static_cast<long long>(row[0]));
    else
      std::fprintf(file_, ",%.9e", row[n]);
  }
  std::fprintf(file_, "\n");
  if (std::fflush(file_) != 0) throw Error("cannot write " + path_.string());
}

}  // namespace octoflow::app
