#include "XmlSeriesWriter.hpp"

#include <cerrno>
#include <cstring>

#include <vtkImageData.h>
#include <vtkPolyData.h>
#include <vtkSmartPointer.h>
#include <vtkCallbackCommand.h>
#include <vtkCommand.h>
#include <vtkErrorCode.h>
#include <vtkNew.h>
#include <vtkXMLImageDataWriter.h>
#include <vtkXMLPolyDataWriter.h>
#include <vtkUniformGrid.h>

#include <vtkDataArray.h>
#include <vtkPointData.h>

#include <cstdio>
#include <sstream>

#include "common/Error.hpp"

namespace octoflow::adaptors {

XmlSeriesWriter::XmlSeriesWriter(std::filesystem::path directory, std::string name)
    : directory_(std::move(directory)), name_(std::move(name)), series_(directory_ / (name_ + ".pvd")) {}

std::string XmlSeriesWriter::fileName(const std::string& name, Index step, const char* extension) {
  char number[32];
  std::snprintf(number, sizeof number, "%08lld", static_cast<long long>(step));
  return name + "_" + number + "." + extension;
}

namespace {

// One VTK XML file of image data or polydata: appended raw binary, zlib, 64-bit headers; written
// under a temporary name and renamed when complete. (AMR data, a summary and a folder of blocks,
// is written block by block: XmlSeriesWriter::writeAmrBlocks.)
void writeXml(vtkDataObject* data, const std::filesystem::path& path, const std::string& series) {
  vtkSmartPointer<vtkXMLWriter> writer;
  if (vtkImageData::SafeDownCast(data)) {
    writer = vtkSmartPointer<vtkXMLImageDataWriter>::New();
  } else if (vtkPolyData::SafeDownCast(data)) {
    writer = vtkSmartPointer<vtkXMLPolyDataWriter>::New();
  } else {
    throw Error("the " + series + " series takes image data, polydata or non-overlapping AMR data, not " +
                (data ? data->GetClassName() : "nothing"));
  }
  const std::filesystem::path temporary = temporaryPathFor(path);
  writer->SetInputDataObject(data);
  writer->SetFileName(temporary.c_str());
  writer->SetDataModeToAppended();
  writer->EncodeAppendedDataOff();  // raw binary, not base64
  writer->SetCompressorTypeToZLib();
  writer->SetHeaderTypeToUInt64();  // blocks over 4 GiB stay addressable
  // The writer's errors come to us (one message of ours), not to VTK's output window.
  std::string vtkMessage;
  vtkNew<vtkCallbackCommand> onError;
  onError->SetClientData(&vtkMessage);
  onError->SetCallback([](vtkObject*, unsigned long, void* clientData, void* callData) {
    auto* text = static_cast<std::string*>(clientData);
    if (text->empty() && callData) *text = static_cast<const char*>(callData);
  });
  writer->AddObserver(vtkCommand::ErrorEvent, onError);
  errno = 0;
  if (writer->Write() != 1 || writer->GetErrorCode() != vtkErrorCode::NoError || !vtkMessage.empty()) {
    const unsigned long code = writer->GetErrorCode();
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    const int systemError = errno;
    throw OutputError(path.string(), code != vtkErrorCode::NoError ? vtkErrorCode::GetStringFromErrorCode(code)
                                     : systemError != 0            ? std::strerror(systemError)
                                                                   : "the VTK writer failed");
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::filesystem::remove(temporary, error);
    throw OutputError(path.string(), error.message());
  }
}

std::string extentText(const NodeBox& box) {
  std::ostringstream text;
  for (int axis = 0; axis < 3; ++axis)
    text << (axis ? " " : "") << box.lo[axis] << " " << box.lo[axis] + box.size.size(axis) - 1;
  return text.str();
}

void createFolder(const std::filesystem::path& folder) {
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  if (error) throw OutputError(folder.string(), error.message());
}

}  // namespace

void XmlSeriesWriter::writeAmrBlocks(Index step, double time, vtkNonOverlappingAMR* amr, bool everyPlaceWritten,
                                     bool summary) {
  const std::string stem = fileName(name_, step, "vthb");
  const std::string folder = stem.substr(0, stem.size() - 5);
  createFolder(directory_ / folder);
  // The summary as VTK's AMR writer makes it (vtkXMLUniformGridAMRReader reads it): a <Block> a
  // level, a <DataSet> a place, with the file of its block.
  std::ostringstream text;
  text << "<VTKFile type=\"vtkNonOverlappingAMR\" version=\"1.1\" byte_order=\"LittleEndian\" header_type=\"UInt64\""
       << " compressor=\"vtkZLibDataCompressor\">\n  <vtkNonOverlappingAMR>\n";
  unsigned place = 0;
  for (unsigned level = 0; level < amr->GetNumberOfLevels(); ++level) {
    const unsigned places = amr->GetNumberOfDataSets(level);
    text << "    <Block level=\"" << level << (places ? "\">\n" : "\"/>\n");
    if (!places) continue;
    for (unsigned index = 0; index < places; ++index, ++place) {
      const std::string file = folder + "/" + folder + "_" + std::to_string(place) + ".vti";
      vtkUniformGrid* block = amr->GetDataSet(level, index);
      if (block) writeXml(block, directory_ / file, name_);
      text << "      <DataSet index=\"" << index << "\"";
      if (block || everyPlaceWritten) text << " file=\"" << file << "\"";
      text << "/>\n";
    }
    text << "    </Block>\n";
  }
  text << "  </vtkNonOverlappingAMR>\n</VTKFile>\n";
  if (summary) pendingSummaries_.push_back({time, stem, text.str()});
}

std::filesystem::path XmlSeriesWriter::writeAmrPiece(Index step, double time, vtkNonOverlappingAMR* piece, bool summary) {
  writeAmrBlocks(step, time, piece, true, summary);
  return directory_ / fileName(name_, step, "vthb");
}

std::filesystem::path XmlSeriesWriter::write(Index step, double time, vtkDataObject* data) {
  if (auto* amr = vtkNonOverlappingAMR::SafeDownCast(data)) {
    writeAmrBlocks(step, time, amr, false, true);
    publishPieces();
    return directory_ / fileName(name_, step, "vthb");
  }
  const char* extension = vtkPolyData::SafeDownCast(data) ? "vtp" : "vti";
  const std::string file = fileName(name_, step, extension);
  const std::filesystem::path path = directory_ / file;
  writeXml(data, path, name_);
  series_.add(time, file);
  return path;
}

std::filesystem::path XmlSeriesWriter::writePiece(Index step, double time, vtkImageData* piece, int rank,
                                                  const std::vector<NodeBox>& boxes, const Extent& whole) {
  const std::string stem = fileName(name_, step, "pvti");
  const std::string folder = stem.substr(0, stem.size() - 5);
  createFolder(directory_ / folder);
  const auto pieceFile = [&](int r) { return folder + "/" + folder + "_" + std::to_string(r) + ".vti"; };
  writeXml(piece, directory_ / pieceFile(rank), name_);
  if (boxes.empty()) return directory_ / pieceFile(rank);
  // The summary: the whole extent, the arrays (as this piece has them) and every piece.
  std::ostringstream text;
  text << "<?xml version=\"1.0\"?>\n"
       << "<VTKFile type=\"PImageData\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n"
       << "  <PImageData WholeExtent=\"" << extentText(NodeBox::of(whole))
       << "\" GhostLevel=\"0\" Origin=\"0 0 0\" Spacing=\"1 1 1\" Direction=\"1 0 0 0 1 0 0 0 1\">\n";
  vtkPointData* arrays = piece->GetPointData();
  text << "    <PPointData";
  if (arrays->GetScalars()) text << " Scalars=\"" << arrays->GetScalars()->GetName() << "\"";
  if (arrays->GetVectors()) text << " Vectors=\"" << arrays->GetVectors()->GetName() << "\"";
  text << ">\n";
  for (int a = 0; a < arrays->GetNumberOfArrays(); ++a) {
    vtkDataArray* array = arrays->GetArray(a);
    if (!array) continue;
    text << "      <PDataArray type=\"" << (array->GetDataType() == VTK_FLOAT ? "Float32" : "Float64") << "\" Name=\""
         << array->GetName() << "\" NumberOfComponents=\"" << array->GetNumberOfComponents() << "\"/>\n";
  }
  text << "    </PPointData>\n";
  for (std::size_t r = 0; r < boxes.size(); ++r)
    text << "    <Piece Extent=\"" << extentText(boxes[r]) << "\" Source=\"" << pieceFile(static_cast<int>(r)) << "\"/>\n";
  text << "  </PImageData>\n</VTKFile>\n";
  pendingSummaries_.push_back({time, stem, text.str()});
  return directory_ / stem;
}

void XmlSeriesWriter::publishPieces() {
  for (const PendingSummary& summary : pendingSummaries_) {
    writeFileAtomically(directory_ / summary.file, summary.text);
    series_.add(summary.time, summary.file);
  }
  pendingSummaries_.clear();
}

}  // namespace octoflow::adaptors
