#include "DiagnosticsLog.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "common/Error.hpp"
#include "io/Checkpoint.hpp"

namespace octoflow::app {

namespace {

std::string headerLine(const std::vector<std::string>& columns) {
  std::string line;
  for (std::size_t n = 0; n < columns.size(); ++n) line += (n ? "," : "") + columns[n];
  return line + "\n";
}

// The lines of an earlier run's file to keep when a restart at `step` goes on with it: its header
// (when it is this one) and its rows up to that step; nothing when the file is not there.
std::string keptLines(const std::filesystem::path& path, const std::string& header, Index step) {
  std::ifstream in(path);
  std::string line, kept;
  if (!in || !std::getline(in, line) || line + "\n" != header) return header;
  kept = header;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    char* end = nullptr;
    const long long rowStep = std::strtoll(line.c_str(), &end, 10);
    if (end == line.c_str() || rowStep > step) break;
    kept += line + "\n";
  }
  return kept;
}

}  // namespace

DiagnosticsCsv::DiagnosticsCsv(const std::filesystem::path& path, const std::vector<std::string>& columns,
                               Index resumeAfter)
    : path_(path) {
  const std::string header = headerLine(columns);
  const std::string text = resumeAfter >= 0 ? keptLines(path, header, resumeAfter) : header;
  // The header (and the rows kept) appear at once, then rows are appended whole.
  io::writeFileAtomically(path.string(), std::vector<unsigned char>(text.begin(), text.end()));
  file_ = std::fopen(path.c_str(), "a");
  if (!file_) throw OutputError(path.string(), std::strerror(errno));
  size_ = static_cast<long>(text.size());
}

DiagnosticsCsv::~DiagnosticsCsv() {
  if (file_) std::fclose(file_);
}

void DiagnosticsCsv::write(const std::vector<double>& row) {
  std::string line;
  char value[40];
  for (std::size_t n = 0; n < row.size(); ++n) {
    if (n == 0)
      std::snprintf(value, sizeof value, "%lld", static_cast<long long>(row[0]));
    else
      std::snprintf(value, sizeof value, ",%.9e", row[n]);
    line += value;
  }
  line += "\n";
  // A row goes out whole or not at all: on a failure (disk full) the file is cut back to its
  // last whole row.
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0) {
    const int error = errno ? errno : EIO;
    std::fclose(file_);
    file_ = nullptr;
    if (::truncate(path_.c_str(), size_) != 0) {
      // Nothing more to do: the message below names the file.
    }
    throw OutputError(path_.string(), std::strerror(error));
  }
  size_ += static_cast<long>(line.size());
}

}  // namespace octoflow::app
