#include "vtkOctoflowCheckpointSeriesReader.h"

#include <vtkInformation.h>
#include <vtkInformationDoubleVectorKey.h>
#include <vtkInformationVector.h>
#include <vtkObjectFactory.h>
#include <vtkStreamingDemandDrivenPipeline.h>

vtkStandardNewMacro(vtkOctoflowCheckpointSeriesReader);

vtkOctoflowCheckpointSeriesReader::vtkOctoflowCheckpointSeriesReader() { this->SetNumberOfOutputPorts(2); }

int vtkOctoflowCheckpointSeriesReader::RequestInformation(vtkInformation* request, vtkInformationVector** inputVector,
                                                          vtkInformationVector* outputVector) {
  if (!this->Superclass::RequestInformation(request, inputVector, outputVector)) return 0;
  vtkInformation* grid = outputVector->GetInformationObject(0);
  vtkInformation* tracers = outputVector->GetInformationObject(1);
  for (vtkInformationDoubleVectorKey* key :
       {vtkStreamingDemandDrivenPipeline::TIME_STEPS(), vtkStreamingDemandDrivenPipeline::TIME_RANGE()}) {
    if (grid->Has(key))
      tracers->CopyEntry(grid, key);
    else
      tracers->Remove(key);
  }
  return 1;
}
