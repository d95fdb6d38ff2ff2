#include "PvdSeries.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "common/Error.hpp"
#include "io/Checkpoint.hpp"

namespace octoflow::adaptors {

std::filesystem::path temporaryPathFor(const std::filesystem::path& path) {
  return path.parent_path() / ("." + path.filename().string() + ".tmp" + std::to_string(getpid()));
}

void writeFileAtomically(const std::filesystem::path& path, const std::string& text) {
  io::writeFileAtomically(path.string(), std::vector<unsigned char>(text.begin(), text.end()));
}

void PvdSeries::resume(double upToTime) {
  entries_.clear();
  std::ifstream in(path_);
  std::string line;
  const std::string timeKey = "timestep=\"", fileKey = "file=\"";
  while (std::getline(in, line)) {
    const auto time = line.find(timeKey), file = line.find(fileKey);
    if (time == std::string::npos || file == std::string::npos) continue;
    const double t = std::strtod(line.c_str() + time + timeKey.size(), nullptr);
    const auto fileStart = file + fileKey.size();
    const std::string name = line.substr(fileStart, line.find('"', fileStart) - fileStart);
    if (t <= upToTime && std::filesystem::exists(path_.parent_path() / name)) entries_.push_back({t, name});
  }
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
