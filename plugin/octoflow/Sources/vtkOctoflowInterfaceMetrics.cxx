#include "vtkOctoflowInterfaceMetrics.h"

#include <vtkCellData.h>
#include <vtkCellSizeFilter.h>
#include <vtkClipDataSet.h>
#include <vtkContourFilter.h>
#include <vtkDataArray.h>
#include <vtkDataSetAttributes.h>
#include <vtkAlgorithmOutput.h>
#include <vtkDoubleArray.h>
#include <vtkFloatArray.h>
#include <vtkImageData.h>
#include <vtkInformation.h>
#include <vtkInformationVector.h>
#include <vtkNew.h>
#include <vtkNonOverlappingAMR.h>
#include <vtkObjectFactory.h>
#include <vtkPointData.h>
#include <vtkPlane.h>
#include <vtkPolyData.h>
#include <vtkSmartPointer.h>
#include <vtkStreamingDemandDrivenPipeline.h>
#include <vtkTable.h>
#include <vtkUniformGrid.h>
#include <vtkUnsignedCharArray.h>
#include <vtkUnstructuredGrid.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace {

// The sum of one cell-size measure (Length, Area, Volume) of a dataset's cells; 0 when absent.
// Magnitudes: clipped cells can come out inverted, with a negative signed volume.
double sizeSum(vtkDataSet* data, const char* measure) {
  vtkNew<vtkCellSizeFilter> sizes;
  sizes->SetInputData(data);
  sizes->Update();
  vtkDataArray* values = vtkDataSet::SafeDownCast(sizes->GetOutput())->GetCellData()->GetArray(measure);
  double sum = 0.0;
  for (vtkIdType cell = 0; values && cell < values->GetNumberOfTuples(); ++cell) sum += std::abs(values->GetTuple1(cell));
  return sum;
}

// Keeps the part of `data` inside `box` (null: all of it): clipped by its six planes in turn (each
// a linear function, cut exactly along the cells' edges).
vtkSmartPointer<vtkDataSet> insideBox(vtkDataSet* data, const double* box) {
  vtkSmartPointer<vtkDataSet> part = data;
  for (int face = 0; box && face < 6; ++face) {
    const int axis = face / 2;
    double normal[3] = {0.0, 0.0, 0.0}, origin[3] = {0.0, 0.0, 0.0};
    normal[axis] = face % 2 ? 1.0 : -1.0;  // outwards: the inside is where the plane's function < 0
    origin[axis] = box[face];
    vtkNew<vtkPlane> plane;
    plane->SetNormal(normal);
    plane->SetOrigin(origin);
    vtkNew<vtkClipDataSet> clip;
    clip->SetInputData(part);
    clip->SetClipFunction(plane);
    clip->InsideOutOn();
    clip->Update();
    part = clip->GetOutput();
  }
  return part;
}

// The measures of the interface of `image` (the scalar as point data) inside `box` (null: all).
vtkOctoflowInterfaceMetrics::Measures measure(vtkImageData* image, const char* scalar, double iso, const double* box) {
  vtkOctoflowInterfaceMetrics::Measures m;
  const int dimensions = image->GetDataDimension();
  vtkNew<vtkContourFilter> contour;
  contour->SetInputData(image);
  contour->SetInputArrayToProcess(0, 0, 0, vtkDataObject::FIELD_ASSOCIATION_POINTS, scalar);
  contour->SetValue(0, iso);
  contour->Update();
  const vtkSmartPointer<vtkDataSet> surface = insideBox(contour->GetOutput(), box);
  m.area = sizeSum(surface, dimensions == 3 ? "Area" : "Length");
  double bounds[6];
  surface->GetBounds(bounds);
  for (int axis = 0; axis < 3; ++axis)
    m.tip[axis] = surface->GetNumberOfPoints() > 0 ? bounds[2 * axis + 1] : -std::numeric_limits<double>::infinity();
  // The cells where the scalar is at or above the iso-value (a piecewise-linear cut).
  vtkNew<vtkClipDataSet> clip;
  clip->SetInputData(image);
  clip->SetInputArrayToProcess(0, 0, 0, vtkDataObject::FIELD_ASSOCIATION_POINTS, scalar);
  clip->SetValue(iso);
  clip->Update();
  m.volume = sizeSum(insideBox(clip->GetOutput(), box), dimensions == 3 ? "Volume" : "Area");
  return m;
}

// The volume (2D: area) of `bounds`.
double boxVolume(const double* bounds) {
  double volume = 1.0;
  for (int axis = 0; axis < 3; ++axis)
    if (bounds[2 * axis + 1] > bounds[2 * axis]) volume *= bounds[2 * axis + 1] - bounds[2 * axis];
  return volume;
}

// A block of an AMR dataset (cell data, a layer of ghost cells around it, as octoflow writes them)
// as image data whose points are the cells' centres, and the box of its own cells.
vtkSmartPointer<vtkImageData> blockAsPoints(vtkUniformGrid* block, const char* scalar, double box[6]) {
  int cells[3];
  block->GetDimensions(cells);
  double origin[3], spacing[3];
  block->GetOrigin(origin);
  block->GetSpacing(spacing);
  auto points = vtkSmartPointer<vtkImageData>::New();
  for (int axis = 0; axis < 3; ++axis) cells[axis] = std::max(cells[axis] - 1, 1);
  points->SetDimensions(cells);
  points->SetSpacing(spacing);
  points->SetOrigin(origin[0] + 0.5 * spacing[0], origin[1] + 0.5 * spacing[1], origin[2] + 0.5 * spacing[2]);
  vtkDataArray* values = block->GetCellData()->GetArray(scalar);
  vtkUnsignedCharArray* ghosts = block->GetCellGhostArray();
  // The own cells: those not marked as ghosts.
  for (int axis = 0; axis < 3; ++axis) {
    box[2 * axis] = std::numeric_limits<double>::infinity();
    box[2 * axis + 1] = -std::numeric_limits<double>::infinity();
  }
  for (vtkIdType cell = 0; cell < block->GetNumberOfCells(); ++cell) {
    if (ghosts && ghosts->GetValue(cell) & vtkDataSetAttributes::DUPLICATECELL) continue;
    const vtkIdType index[3] = {cell % cells[0], (cell / cells[0]) % cells[1], cell / (cells[0] * cells[1])};
    for (int axis = 0; axis < 3; ++axis) {
      box[2 * axis] = std::min(box[2 * axis], origin[axis] + index[axis] * spacing[axis]);
      box[2 * axis + 1] = std::max(box[2 * axis + 1], origin[axis] + (index[axis] + 1) * spacing[axis]);
    }
  }
  vtkNew<vtkFloatArray> copy;
  copy->DeepCopy(values);
  copy->SetName(scalar);
  points->GetPointData()->SetScalars(copy);
  return points;
}

}  // namespace

vtkOctoflowInterfaceMetrics::Measures vtkOctoflowInterfaceMetrics::MeasureImage(vtkImageData* image, const char* scalar) {
  Measures m = measure(image, scalar, this->IsoValue, nullptr);
  double bounds[6];
  image->GetBounds(bounds);
  m.fraction = m.volume / boxVolume(bounds);
  for (double& tip : m.tip)
    if (std::isinf(tip)) tip = std::numeric_limits<double>::quiet_NaN();
  return m;
}

vtkOctoflowInterfaceMetrics::Measures vtkOctoflowInterfaceMetrics::MeasureAmr(vtkNonOverlappingAMR* amr, const char* scalar) {
  // Each block's cell centres as points, measured inside the block's own cells: the blocks tile
  // the domain, so their measures add up (the tip is the furthest of theirs).
  Measures m;
  for (double& tip : m.tip) tip = -std::numeric_limits<double>::infinity();
  double domain = 0.0;
  for (unsigned level = 0; level < amr->GetNumberOfLevels(); ++level)
    for (unsigned index = 0; index < amr->GetNumberOfDataSets(level); ++index) {
      vtkUniformGrid* block = amr->GetDataSet(level, index);
      if (!block || !block->GetCellData()->GetArray(scalar)) continue;
      double box[6];
      const vtkSmartPointer<vtkImageData> points = blockAsPoints(block, scalar, box);
      const Measures part = measure(points, scalar, this->IsoValue, box);
      m.area += part.area;
      m.volume += part.volume;
      for (int axis = 0; axis < 3; ++axis) m.tip[axis] = std::max(m.tip[axis], part.tip[axis]);
      domain += boxVolume(box);
    }
  m.fraction = domain > 0.0 ? m.volume / domain : 0.0;
  for (double& tip : m.tip)
    if (std::isinf(tip)) tip = std::numeric_limits<double>::quiet_NaN();
  return m;
}

vtkStandardNewMacro(vtkOctoflowInterfaceMetrics);

vtkOctoflowInterfaceMetrics::vtkOctoflowInterfaceMetrics() {
  this->SetInputArrayToProcess(0, 0, 0, vtkDataObject::FIELD_ASSOCIATION_POINTS, vtkDataSetAttributes::SCALARS);
}

int vtkOctoflowInterfaceMetrics::FillInputPortInformation(int, vtkInformation* info) {
  info->Remove(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE());
  info->Append(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), "vtkImageData");
  info->Append(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), "vtkNonOverlappingAMR");
  return 1;
}

std::string vtkOctoflowInterfaceMetrics::ScalarName(vtkDataObject* data) {
  // The array the Scalar property names (its association checked), else the active scalars.
  vtkInformation* chosen = this->GetInputArrayInformation(0);
  const char* named = chosen && chosen->Has(vtkDataObject::FIELD_NAME()) ? chosen->Get(vtkDataObject::FIELD_NAME()) : nullptr;
  const int association = chosen && chosen->Has(vtkDataObject::FIELD_ASSOCIATION())
                              ? chosen->Get(vtkDataObject::FIELD_ASSOCIATION())
                              : vtkDataObject::FIELD_ASSOCIATION_POINTS;
  if (vtkImageData* image = vtkImageData::SafeDownCast(data)) {
    if (named && *named)
      return association == vtkDataObject::FIELD_ASSOCIATION_POINTS && image->GetPointData()->GetArray(named) ? named : "";
    vtkDataArray* scalars = image->GetPointData()->GetScalars();
    return scalars && scalars->GetName() ? scalars->GetName() : "";
  }
  vtkNonOverlappingAMR* amr = vtkNonOverlappingAMR::SafeDownCast(data);
  if (named && *named) return association == vtkDataObject::FIELD_ASSOCIATION_CELLS ? named : "";
  for (unsigned level = 0; amr && level < amr->GetNumberOfLevels(); ++level)
    for (unsigned index = 0; index < amr->GetNumberOfDataSets(level); ++index)
      if (vtkUniformGrid* block = amr->GetDataSet(level, index))
        if (vtkDataArray* scalars = block->GetCellData()->GetScalars())
          if (scalars->GetName()) return scalars->GetName();
  return "";
}

int vtkOctoflowInterfaceMetrics::RequestInformation(vtkInformation*, vtkInformationVector** inputVector,
                                                    vtkInformationVector* outputVector) {
  vtkInformation* in = inputVector[0]->GetInformationObject(0);
  this->InputTimes.clear();
  if (in->Has(vtkStreamingDemandDrivenPipeline::TIME_STEPS())) {
    const double* times = in->Get(vtkStreamingDemandDrivenPipeline::TIME_STEPS());
    this->InputTimes.assign(times, times + in->Length(vtkStreamingDemandDrivenPipeline::TIME_STEPS()));
  }
  // The table covers every time step: it has no time of its own.
  vtkInformation* out = outputVector->GetInformationObject(0);
  out->Remove(vtkStreamingDemandDrivenPipeline::TIME_STEPS());
  out->Remove(vtkStreamingDemandDrivenPipeline::TIME_RANGE());
  return 1;
}

int vtkOctoflowInterfaceMetrics::RequestData(vtkInformation*, vtkInformationVector** inputVector,
                                             vtkInformationVector* outputVector) {
  // A row a time step of the input: the input brought to each in turn. (Not the executive's
  // CONTINUE_EXECUTING loop: when the input fails at a time step, that loop never ends.) Input
  // without time steps: one row of the data at hand.
  std::vector<double> times;
  std::vector<Measures> rows;
  vtkAlgorithm* upstream = this->GetNumberOfInputConnections(0) > 0 ? this->GetInputAlgorithm(0, 0) : nullptr;
  if (this->InputTimes.empty() || !upstream) {
    times.push_back(0.0);
    rows.push_back(this->Measure(vtkDataObject::GetData(inputVector[0], 0)));
  } else {
    const int port = this->GetInputConnection(0, 0)->GetIndex();
    auto* executive = vtkStreamingDemandDrivenPipeline::SafeDownCast(upstream->GetExecutive());
    for (const double time : this->InputTimes) {
      executive->UpdateInformation();
      executive->GetOutputInformation(port)->Set(vtkStreamingDemandDrivenPipeline::UPDATE_TIME_STEP(), time);
      if (!executive->Update(port)) {
        vtkWarningMacro("Interface Metrics: the input failed at time " << time << ": its row is left out");
        continue;
      }
      times.push_back(time);
      rows.push_back(this->Measure(upstream->GetOutputDataObject(port)));
    }
  }
  vtkTable* table = vtkTable::GetData(outputVector, 0);
  table->Initialize();
  const char* names[] = {"time", "area", "volume", "fraction", "tip_x", "tip_y", "tip_z",
                         "tip_velocity_x", "tip_velocity_y", "tip_velocity_z"};
  vtkNew<vtkDoubleArray> columns[10];
  for (int c = 0; c < 10; ++c) {
    columns[c]->SetName(names[c]);
    columns[c]->SetNumberOfTuples(static_cast<vtkIdType>(rows.size()));
    table->AddColumn(columns[c]);
  }
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const Measures& m = rows[r];
    const double values[7] = {times[r], m.area, m.volume, m.fraction, m.tip[0], m.tip[1], m.tip[2]};
    for (int c = 0; c < 7; ++c) columns[c]->SetValue(static_cast<vtkIdType>(r), values[c]);
    for (int axis = 0; axis < 3; ++axis) {
      double velocity = std::numeric_limits<double>::quiet_NaN();
      if (r > 0 && times[r] > times[r - 1])
        velocity = (m.tip[axis] - rows[r - 1].tip[axis]) / (times[r] - times[r - 1]);
      columns[7 + axis]->SetValue(static_cast<vtkIdType>(r), velocity);
    }
  }
  return 1;
}

vtkOctoflowInterfaceMetrics::Measures vtkOctoflowInterfaceMetrics::Measure(vtkDataObject* data) {
  Measures nothing;
  nothing.area = nothing.volume = nothing.fraction = std::numeric_limits<double>::quiet_NaN();
  for (double& tip : nothing.tip) tip = std::numeric_limits<double>::quiet_NaN();
  vtkImageData* image = vtkImageData::SafeDownCast(data);
  vtkNonOverlappingAMR* amr = vtkNonOverlappingAMR::SafeDownCast(data);
  if (!image && !amr) {
    vtkWarningMacro("Interface Metrics: the input is neither image data nor a non-overlapping AMR dataset");
    return nothing;
  }
  const std::string name = this->ScalarName(data);
  if (name.empty()) {
    vtkWarningMacro("Interface Metrics: the input has no scalar to measure (image data: a point array; AMR: a cell array)");
    return nothing;
  }
  return image ? this->MeasureImage(image, name.c_str()) : this->MeasureAmr(amr, name.c_str());
}

void vtkOctoflowInterfaceMetrics::PrintSelf(ostream& os, vtkIndent indent) {
  this->Superclass::PrintSelf(os, indent);
  os << indent << "IsoValue: " << this->IsoValue << "\n";
}
