#ifndef vtkOctoflowCaseSource_h
#define vtkOctoflowCaseSource_h
// "octoflow Case" in ParaView: runs an octoflow case file with the solver core and outputs the
// final state as vtkImageData (point arrays density and velocity, lattice units).
#include "octoflowSourcesModule.h"
#include "vtkImageAlgorithm.h"

class OCTOFLOWSOURCES_EXPORT vtkOctoflowCaseSource : public vtkImageAlgorithm {
public:
  static vtkOctoflowCaseSource* New();
  vtkTypeMacro(vtkOctoflowCaseSource, vtkImageAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  // The case file (.toml); the run takes the [case] steps of it.
  vtkSetStringMacro(CaseFile);
  vtkGetStringMacro(CaseFile);
  // "auto" (CUDA when a GPU is present), "cpu" or "cuda".
  vtkSetStringMacro(Backend);
  vtkGetStringMacro(Backend);

protected:
  vtkOctoflowCaseSource();
  ~vtkOctoflowCaseSource() override;
  int RequestInformation(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

private:
  vtkOctoflowCaseSource(const vtkOctoflowCaseSource&) = delete;
  void operator=(const vtkOctoflowCaseSource&) = delete;

  char* CaseFile = nullptr;
  char* Backend = nullptr;
};

#endif
