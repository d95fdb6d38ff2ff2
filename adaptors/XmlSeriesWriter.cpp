#include "XmlSeriesWriter.hpp"

#include <vtkImageData.h>
#include <vtkPolyData.h>
#include <vtkSmartPointer.h>
#include <vtkXMLImageDataWriter.h>
#include <vtkXMLPolyDataWriter.h>

#include <cstdio>

#include "common/Error.hpp"

namespace octoflow::adaptors {

XmlSeriesWriter::XmlSeriesWriter(std::filesystem::path directory, std::string name)
    : directory_(std::move(directory)), name_(std::move(name)), series_(directory_ / (name_ + ".pvd")) {}

std::string XmlSeriesWriter::fileName(const std::string& name, Index step, const char* extension) {
  char number[32];
  std::snprintf(number, sizeof number, "%08lld", static_cast<long long>(step));
  return name + "_" + number + "." + extension;
}

std::filesystem::path XmlSeriesWriter::write(Index step, double time, vtkDataObject* data) {
  vtkSmartPointer<vtkXMLWriter> writer;
  const char* extension = nullptr;
  if (vtkImageData::SafeDownCast(data)) {
    writer = vtkSmartPointer<vtkXMLImageDataWriter>::New();
    extension = "vti";
  } else if (vtkPolyData::SafeDownCast(data)) {
    writer = vtkSmartPointer<vtkXMLPolyDataWriter>::New();
    extension = "vtp";
  } else {
    throw Error(std::string("the ") + name_ + " series takes image data or polydata, not " +
                (data ? data->GetClassName() : "nothing"));
  }
  const std::string file = fileName(name_, step, extension);
  const std::filesystem::path path = directory_ / file;
  const std::filesystem::path temporary = temporaryPathFor(path);
  writer->SetInputDataObject(data);
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
