#include "vtkOctoflowCheckpointSeriesReader.h"

#include <vtkObjectFactory.h>

vtkStandardNewMacro(vtkOctoflowCheckpointSeriesReader);

vtkOctoflowCheckpointSeriesReader::vtkOctoflowCheckpointSeriesReader() { this->SetNumberOfOutputPorts(2); }
