#pragma once
// Offline output of a uniform grid: <directory>/<name>_<step:08d>.vti (VTK XML image data,
// appended raw binary, zlib-compressed) and <directory>/<name>.pvd listing them with their times.
#include <filesystem>
#include <string>

#include <vtkImageData.h>

#include "PvdSeries.hpp"
#include "common/Extent.hpp"

namespace octoflow::adaptors {

class VtiSeriesWriter {
public:
  VtiSeriesWriter(std::filesystem::path directory, std::string name);
  // Writes one step (atomically: temporary name, then rename) and adds it to the .pvd.
  std::filesystem::path write(Index step, double time, vtkImageData* image);
  static std::string fileName(const std::string& name, Index step);
  const std::filesystem::path& seriesPath() const { return series_.path(); }

private:
  std::filesystem::path directory_;
  std::string name_;
  PvdSeries series_;
};

}  // namespace octoflow::adaptors
