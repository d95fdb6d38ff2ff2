#include "vtkOctoflowInterfaceMetrics.h"

#include <vtkCellSizeFilter.h>
#include <vtkClipDataSet.h>
#include <vtkContourFilter.h>
#include <vtkDataArray.h>
#include <vtkDoubleArray.h>
#include <vtkFieldData.h>
#include <vtkImageData.h>
#include <vtkInformation.h>
#include <vtkInformationVector.h>
#include <vtkNew.h>
#include <vtkObjectFactory.h>
#include <vtkPointData.h>
#include <vtkPolyData.h>
#include <vtkStreamingDemandDrivenPipeline.h>
#include <vtkTable.h>
#include <vtkUnstructuredGrid.h>

#include <cmath>
#include <limits>
#include <string>

namespace {

// The sum of one cell-size measure (Length, Area, Volume) of a dataset; 0 when absent.
double sizeSum(vtkDataSet* data, const char* measure) {
  vtkNew<vtkCellSizeFilter> sizes;
  sizes->SetInputData(data);
  sizes->SetComputeSum(true);
  sizes->Update();
  vtkDataArray* sum = sizes->GetOutput()->GetFieldData()->GetArray(measure);
  return sum && sum->GetNumberOfTuples() > 0 ? sum->GetTuple1(0) : 0.0;
}

vtkOctoflowInterfaceMetrics::Measures measure(vtkImageData* image, const char* scalar, double iso) {
  vtkOctoflowInterfaceMetrics::Measures m;
  const int dimensions = image->GetDataDimension();
  vtkNew<vtkContourFilter> contour;
  contour->SetInputData(image);
  contour->SetInputArrayToProcess(0, 0, 0, vtkDataObject::FIELD_ASSOCIATION_POINTS, scalar);
  contour->SetValue(0, iso);
  contour->Update();
  vtkPolyData* surface = contour->GetOutput();
  m.area = sizeSum(surface, dimensions == 3 ? "Area" : "Length");
  double bounds[6];
  surface->GetBounds(bounds);
  for (int axis = 0; axis < 3; ++axis)
    m.tip[axis] = surface->GetNumberOfPoints() > 0 ? bounds[2 * axis + 1] : std::numeric_limits<double>::quiet_NaN();
  // The cells where the scalar is at or above the iso-value (a piecewise-linear cut).
  vtkNew<vtkClipDataSet> clip;
  clip->SetInputData(image);
  clip->SetInputArrayToProcess(0, 0, 0, vtkDataObject::FIELD_ASSOCIATION_POINTS, scalar);
  clip->SetValue(iso);
  clip->Update();
  m.volume = sizeSum(clip->GetOutput(), dimensions == 3 ? "Volume" : "Area");
  double domain = 1.0;
  image->GetBounds(bounds);
  for (int axis = 0; axis < 3; ++axis)
    if (bounds[2 * axis + 1] > bounds[2 * axis]) domain *= bounds[2 * axis + 1] - bounds[2 * axis];
  m.fraction = domain > 0.0 ? m.volume / domain : 0.0;
  return m;
}

}  // namespace

vtkStandardNewMacro(vtkOctoflowInterfaceMetrics);

vtkOctoflowInterfaceMetrics::vtkOctoflowInterfaceMetrics() {
  this->SetInputArrayToProcess(0, 0, 0, vtkDataObject::FIELD_ASSOCIATION_POINTS, vtkDataSetAttributes::SCALARS);
}

int vtkOctoflowInterfaceMetrics::FillInputPortInformation(int, vtkInformation* info) {
  info->Set(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), "vtkImageData");
  return 1;
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

int vtkOctoflowInterfaceMetrics::RequestUpdateExtent(vtkInformation*, vtkInformationVector** inputVector,
                                                     vtkInformationVector*) {
  vtkInformation* in = inputVector[0]->GetInformationObject(0);
  if (this->NextTime < this->InputTimes.size())
    in->Set(vtkStreamingDemandDrivenPipeline::UPDATE_TIME_STEP(), this->InputTimes[this->NextTime]);
  return 1;
}

int vtkOctoflowInterfaceMetrics::RequestData(vtkInformation* request, vtkInformationVector** inputVector,
                                             vtkInformationVector* outputVector) {
  vtkImageData* image = vtkImageData::GetData(inputVector[0], 0);
  if (!image) {
    vtkErrorMacro("Interface Metrics: the input is not image data");
    return 0;
  }
  // The scalar chosen, else (none chosen yet: no array name) the active scalars.
  vtkDataArray* scalar = this->GetInputArrayToProcess(0, inputVector);
  if (!scalar) scalar = image->GetPointData()->GetScalars();
  if (!scalar || !scalar->GetName()) {
    vtkErrorMacro("Interface Metrics: the input has no point scalar to measure");
    return 0;
  }
  if (this->NextTime == 0) {
    this->Times.clear();
    this->Rows.clear();
  }
  const double time = this->NextTime < this->InputTimes.size() ? this->InputTimes[this->NextTime] : 0.0;
  this->Times.push_back(time);
  this->Rows.push_back(measure(image, scalar->GetName(), this->IsoValue));
  // The next time step, if any: the pipeline runs this filter again before anything downstream.
  if (++this->NextTime < this->InputTimes.size()) {
    request->Set(vtkStreamingDemandDrivenPipeline::CONTINUE_EXECUTING(), 1);
    return 1;
  }
  request->Remove(vtkStreamingDemandDrivenPipeline::CONTINUE_EXECUTING());
  this->NextTime = 0;

  vtkTable* table = vtkTable::GetData(outputVector, 0);
  table->Initialize();
  const char* names[] = {"time", "area", "volume", "fraction", "tip_x", "tip_y", "tip_z",
                         "tip_velocity_x", "tip_velocity_y", "tip_velocity_z"};
  vtkNew<vtkDoubleArray> columns[10];
  for (int c = 0; c < 10; ++c) {
    columns[c]->SetName(names[c]);
    columns[c]->SetNumberOfTuples(static_cast<vtkIdType>(this->Rows.size()));
    table->AddColumn(columns[c]);
  }
  for (std::size_t r = 0; r < this->Rows.size(); ++r) {
    const Measures& m = this->Rows[r];
    const double values[7] = {this->Times[r], m.area, m.volume, m.fraction, m.tip[0], m.tip[1], m.tip[2]};
    for (int c = 0; c < 7; ++c) columns[c]->SetValue(static_cast<vtkIdType>(r), values[c]);
    for (int axis = 0; axis < 3; ++axis) {
      double velocity = std::numeric_limits<double>::quiet_NaN();
      if (r > 0 && this->Times[r] > this->Times[r - 1])
        velocity = (m.tip[axis] - this->Rows[r - 1].tip[axis]) / (this->Times[r] - this->Times[r - 1]);
      columns[7 + axis]->SetValue(static_cast<vtkIdType>(r), velocity);
    }
  }
  return 1;
}

void vtkOctoflowInterfaceMetrics::PrintSelf(ostream& os, vtkIndent indent) {
  this->Superclass::PrintSelf(os, indent);
  os << indent << "IsoValue: " << this->IsoValue << "\n";
}
