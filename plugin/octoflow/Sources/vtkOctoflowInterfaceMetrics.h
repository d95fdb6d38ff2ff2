#ifndef vtkOctoflowInterfaceMetrics_h
#define vtkOctoflowInterfaceMetrics_h
// "Interface Metrics" in ParaView: the interface where a scalar (default: the active scalars, phi
// for octoflow's phase-field output) crosses an iso-value (default 0.5) on image data (a point
// array) or a non-overlapping AMR dataset (a cell array, as octoflow's octree output), measured
// at every time step of the input: a table with a row a time step of the time, the interface's
// area (its length in 2D), the volume (2D: area) where the scalar is at or above the iso-value and
// its fraction of the domain, the tip position along x, y and z (the furthest interface point
// along each axis, in the data's coordinates) and the tip velocities (their change since the
// previous row over the time between them; NaN in the first row). A time step where the input
// fails is left out; one with nothing to measure gives NaN. Show it in a line chart view.
// The measures come from the piecewise-linear field: the contour (area) and the clipped cells
// (volume); on AMR, of each block's cell centres inside the block's own cells (the blocks tile the
// domain, so their measures add up).
#include "octoflowSourcesModule.h"
#include "vtkTableAlgorithm.h"

#include <string>
#include <vector>

class vtkDataObject;
class vtkImageData;
class vtkNonOverlappingAMR;

class OCTOFLOWSOURCES_EXPORT vtkOctoflowInterfaceMetrics : public vtkTableAlgorithm {
public:
  static vtkOctoflowInterfaceMetrics* New();
  vtkTypeMacro(vtkOctoflowInterfaceMetrics, vtkTableAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  vtkSetMacro(IsoValue, double);
  vtkGetMacro(IsoValue, double);

  // The measures of one dataset (image data with the scalar as point data).
  struct Measures {
    double area = 0.0, volume = 0.0, fraction = 0.0;
    double tip[3] = {0.0, 0.0, 0.0};
  };

protected:
  vtkOctoflowInterfaceMetrics();
  ~vtkOctoflowInterfaceMetrics() override = default;
  int FillInputPortInformation(int port, vtkInformation* info) override;
  int RequestInformation(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

private:
  vtkOctoflowInterfaceMetrics(const vtkOctoflowInterfaceMetrics&) = delete;
  Measures MeasureImage(vtkImageData* image, const char* scalar);
  Measures MeasureAmr(vtkNonOverlappingAMR* amr, const char* scalar);
  Measures Measure(vtkDataObject* data);  // NaN where there is nothing to measure
  std::string ScalarName(vtkDataObject* data);
  void operator=(const vtkOctoflowInterfaceMetrics&) = delete;

  double IsoValue = 0.5;
  std::vector<double> InputTimes;  // the input's time steps (RequestInformation)
};

#endif
