#include "PvdSeries.hpp"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "common/Error.hpp"

namespace octoflow::adaptors {

std::filesystem::path temporaryPathFor(const std::filesystem::path& path) {
  return path.parent_path() / ("." + path.filename().string() + ".tmp" + std::to_string(getpid()));
}

void writeFileAtomically(const std::filesystem::path& path, const std::string& text) {
  const auto temporary = temporaryPathFor(path);
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    file << text;
    if (!file.flush()) throw Error("cannot write " + temporary.string());
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) throw Error("cannot rename " + temporary.string() + " to " + path.string() + ": " + error.message());
}

void PvdSeries::add(double time, const std::string& relativeFile) {
  entries_.push_back({time, relativeFile});
  std::ostringstream text;
  text.precision(17);
  text << "<?xml version=\"1.0\"?>\n"
       << "<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
       << "  <Collection>\n";
  for (const Entry& entry : entries_)
    text << "    <DataSet timestep=\"" << entry.time << "\" group=\"\" part=\"0\" file=\"" << entry.file << "\"/>\n";
  text << "  </Collection>\n</VTKFile>\n";
  writeFileAtomically(path_, text.str());
}

}  // namespace octoflow::adaptors
