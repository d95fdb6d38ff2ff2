#ifndef vtkOctoflowCheckpointSeriesReader_h
#define vtkOctoflowCheckpointSeriesReader_h
// ParaView's file-series reader with the two output ports of vtkOctoflowCheckpointReader (grid and
// tracers): a group of checkpoint files, or a <case>.ckpt.series manifest, as time steps.
#include "octoflowSourcesModule.h"
#include "vtkFileSeriesReader.h"

class OCTOFLOWSOURCES_EXPORT vtkOctoflowCheckpointSeriesReader : public vtkFileSeriesReader {
public:
  static vtkOctoflowCheckpointSeriesReader* New();
  vtkTypeMacro(vtkOctoflowCheckpointSeriesReader, vtkFileSeriesReader);

protected:
  vtkOctoflowCheckpointSeriesReader();
  ~vtkOctoflowCheckpointSeriesReader() override = default;
  // The series' time steps, gathered on the grid port, on the tracers port as well.
  int RequestInformation(vtkInformation* request, vtkInformationVector** inputVector,
                         vtkInformationVector* outputVector) override;

private:
  vtkOctoflowCheckpointSeriesReader(const vtkOctoflowCheckpointSeriesReader&) = delete;
  void operator=(const vtkOctoflowCheckpointSeriesReader&) = delete;
};

#endif
