#include "VtiSeriesWriter.hpp"

#include <vtkNew.h>
#include <vtkXMLImageDataWriter.h>

#include <cstdio>

#include "common/Error.hpp"

namespace octoflow::adaptors {

VtiSeriesWriter::VtiSeriesWriter(std::filesystem::path directory, std::string name)
    : directory_(std::move(directory)), name_(std::move(name)), series_(directory_ / (name_ + ".pvd")) {}

std::string VtiSeriesWriter::fileName(const std::string& name, Index step) {
  char number[32];
  std::snprintf(number, sizeof number, "%08lld", static_cast<long long>(step));
  return name + "_" + number + ".vti";
}

std::filesystem::path VtiSeriesWriter::write(Index step, double time, vtkImageData* image) {
  const std::string file = fileName(name_, step);
  const std::filesystem::path path = directory_ / file;
  const std::filesystem::path temporary = temporaryPathFor(path);
  vtkNew<vtkXMLImageDataWriter> writer;
  writer->SetInputData(image);
  writer->SetFileName(temporary.c_str());
  writer->SetDataModeToAppended();
  writer->EncodeAppendedDataOff();  // raw binary, not base64
  writer->SetCompressorTypeToZLib();
  writer->SetHeaderTypeToUInt64();  // blocks over 4 GiB stay addressable
  if (writer->Write() != 1) {
    std::filesystem::remove(temporary);
    throw Error("cannot write " + path.string());
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) throw Error("cannot rename " + temporary.string() + " to " + path.string() + ": " + error.message());
  series_.add(time, file);
  return path;
}

}  // namespace octoflow::adaptors
