#pragma once
// A ParaView data-series file (.pvd) listing the files of one output series with their times.
#include <filesystem>
#include <string>
#include <vector>

namespace octoflow::adaptors {

class PvdSeries {
public:
  explicit PvdSeries(std::filesystem::path path) : path_(std::move(path)) {}
  // Adds a file (relative to the .pvd's folder) and rewrites the .pvd atomically.
  void add(double time, const std::string& relativeFile);
  // A restart: takes over the entries of the .pvd already there up to `upToTime` (whose files exist).
  void resume(double upToTime);
  const std::filesystem::path& path() const { return path_; }

private:
  struct Entry {
    double time;
    std::string file;
  };
  std::filesystem::path path_;
  std::vector<Entry> entries_;
};

// Writes `text` to `path` through a temporary name in the same folder and a rename, so a reader
// never sees a half-written file (io::writeFileAtomically; a failure is an OutputError).
void writeFileAtomically(const std::filesystem::path& path, const std::string& text);
// The temporary name used for `path` while it is written.
std::filesystem::path temporaryPathFor(const std::filesystem::path& path);

}  // namespace octoflow::adaptors
