#pragma once
// Offline output of one series: <directory>/<name>_<step:08d>.vti for a uniform grid (under MPI
// .pvti and a folder of pieces), .vtp for polydata (surfaces, tracers), .vthb for AMR data (a
// summary and a folder of blocks of the same name; under MPI each rank writes its blocks) — VTK
// XML, appended raw binary, zlib-compressed — and <directory>/<name>.pvd listing them with their
// times.
#include <filesystem>
#include <string>
#include <vector>

#include <vtkDataObject.h>
#include <vtkImageData.h>
#include <vtkNonOverlappingAMR.h>

#include "PvdSeries.hpp"
#include "common/Extent.hpp"

namespace octoflow::adaptors {

class XmlSeriesWriter {
public:
  XmlSeriesWriter(std::filesystem::path directory, std::string name);
  // Writes one step (atomically: temporary name, then rename; AMR data block by block, its summary
  // last) and adds it to the .pvd. The data is a vtkImageData, a vtkPolyData or a
  // vtkNonOverlappingAMR (anything else throws octoflow::Error).
  std::filesystem::path write(Index step, double time, vtkDataObject* data);
  // A step cut into pieces, one a rank (MPI): each rank writes its piece (image data whose extent
  // says where it sits in `whole`) as <name>_<step>/<name>_<step>_<rank>.vti; the rank given
  // every rank's piece box in `boxes` (empty elsewhere) also prepares <name>_<step>.pvti listing
  // them, with the arrays of its own piece, which publishPieces() writes and adds to the .pvd
  // once every rank has written its piece (a reader never meets a .pvti whose pieces are missing).
  std::filesystem::path writePiece(Index step, double time, vtkImageData* piece, int rank,
                                   const std::vector<NodeBox>& boxes, const Extent& whole);
  // AMR data cut into pieces (MPI): each rank writes the blocks it has (the places of `piece` that
  // hold data) as <name>_<step>/<name>_<step>_<n>.vti, n the block's place counted over all levels
  // (level after level, as VTK's AMR writer numbers them); the rank with `summary` also prepares
  // <name>_<step>.vthb listing every place (the ranks' pieces together fill them all), which
  // publishPieces() writes and adds to the .pvd once every rank has written its blocks.
  std::filesystem::path writeAmrPiece(Index step, double time, vtkNonOverlappingAMR* piece, bool summary);
  void publishPieces();
  // A restart at time `time`: the series goes on from the entries of the .pvd already there.
  void resume(double time) { series_.resume(time); }
  // "<name>_<step:08d>.<extension>"
  static std::string fileName(const std::string& name, Index step, const char* extension);
  const std::filesystem::path& seriesPath() const { return series_.path(); }

private:
  // The blocks of `amr` that hold data, under <name>_<step>/, and the .vthb summary for pending
  // (every place listed with its file when `everyPlaceWritten`, else only those with data).
  void writeAmrBlocks(Index step, double time, vtkNonOverlappingAMR* amr, bool everyPlaceWritten, bool summary);
  std::filesystem::path directory_;
  std::string name_;
  PvdSeries series_;
  struct PendingSummary {
    double time;
    std::string file, text;
  };
  std::vector<PendingSummary> pendingSummaries_;
};

}  // namespace octoflow::adaptors
