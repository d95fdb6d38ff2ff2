#pragma once
// Offline output of one series: <directory>/<name>_<step:08d>.vti for a uniform grid, .vtp for
// polydata (surfaces, tracers) — VTK XML, appended raw binary, zlib-compressed — and
// <directory>/<name>.pvd listing them with their times.
#include <filesystem>
#include <string>

#include <vtkDataObject.h>

#include "PvdSeries.hpp"
#include "common/Extent.hpp"

namespace octoflow::adaptors {

class XmlSeriesWriter {
public:
  XmlSeriesWriter(std::filesystem::path directory, std::string name);
  // Writes one step (atomically: temporary name, then rename) and adds it to the .pvd. The data
  // is a vtkImageData or a vtkPolyData (anything else throws octoflow::Error).
  std::filesystem::path write(Index step, double time, vtkDataObject* data);
  // "<name>_<step:08d>.<extension>"
  static std::string fileName(const std::string& name, Index step, const char* extension);
  const std::filesystem::path& seriesPath() const { return series_.path(); }

private:
  std::filesystem::path directory_;
  std::string name_;
  PvdSeries series_;
};

}  // namespace octoflow::adaptors
