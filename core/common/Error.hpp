#pragma once
#include <cstddef>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace octoflow {

// A fault of the program or of the machine (out of memory, CUDA failure): not the user's input.
class Error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// A problem with what the user gave us (case file, flag, script). The CLI prints what() as one
// line and exits with code 2; nothing may be written before such an error is raised.
class InputError : public Error {
public:
  InputError(const std::string& source, const std::string& key, const std::string& problem)
      : Error(source + (key.empty() ? "" : ": " + key) + ": " + problem), source_(source), key_(key) {}
  const std::string& source() const { return source_; }
  const std::string& key() const { return key_; }

private:
  std::string source_;
  std::string key_;
};

// A file or folder that could not be written (disk full, permission denied, read-only file
// system): names the path and the system's reason. The CLI exits with code 4; the writer leaves no
// partial file under the final name.
class OutputError : public Error {
public:
  OutputError(const std::string& path, const std::string& problem)
      : Error("cannot write " + path + ": " + problem), path_(path) {}
  const std::string& path() const { return path_; }

private:
  std::string path_;
};

// An allocation that did not fit: says how much was asked for and how much was free.
class OutOfMemoryError : public Error {
public:
  OutOfMemoryError(const std::string& where, std::size_t requestedBytes, std::size_t freeBytes)
      : Error("out of " + where + " memory: requested " + formatBytes(requestedBytes) + ", " +
              formatBytes(freeBytes) + " free"),
        requestedBytes_(requestedBytes), freeBytes_(freeBytes) {}
  std::size_t requestedBytes() const { return requestedBytes_; }
  std::size_t freeBytes() const { return freeBytes_; }

  static std::string formatBytes(std::size_t bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double value = static_cast<double>(bytes);
    int unit = 0;
    while (value >= 1024.0 && unit < 4) {
      value /= 1024.0;
      ++unit;
    }
    char text[64];
    std::snprintf(text, sizeof text, "%.1f %s (%zu bytes)", value, units[unit], bytes);
    return text;
  }

private:
  std::size_t requestedBytes_;
  std::size_t freeBytes_;
};

}  // namespace octoflow
