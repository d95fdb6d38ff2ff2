#ifndef vtkOctoflowCaseSource_h
#define vtkOctoflowCaseSource_h
// "octoflow Case" in ParaView: a simulation that runs as time goes on. The case file's solver
// (any of the registry: LBM, phase-field, octree LBM) runs in this process, on the GPU when there
// is one; the time steps offered are every StepsPerUpdate steps up to the case's last, and each
// time asked for advances the solver to its step (an earlier one starts the run again) and outputs
// the fields of that step as `octoflow run` writes them: image data, or a non-overlapping AMR
// dataset for the octree solver. Press Play and watch the run.
#include <memory>

#include "octoflowSourcesModule.h"
#include "vtkDataObjectAlgorithm.h"
#include "vtkNew.h"

class vtkDataArraySelection;

class OCTOFLOWSOURCES_EXPORT vtkOctoflowCaseSource : public vtkDataObjectAlgorithm {
public:
  static vtkOctoflowCaseSource* New();
  vtkTypeMacro(vtkOctoflowCaseSource, vtkDataObjectAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  // The case file (.toml).
  vtkSetStringMacro(CaseFile);
  vtkGetStringMacro(CaseFile);
  // "auto" (CUDA when a GPU is present), "cpu" or "cuda".
  vtkSetStringMacro(Backend);
  vtkGetStringMacro(Backend);
  // Solver steps between two time steps of the source; 0: the case's output.every (or a
  // hundredth of its steps when it writes no fields).
  vtkSetClampMacro(StepsPerUpdate, int, 0, 1000000000);
  vtkGetMacro(StepsPerUpdate, int);
  // Drops the running simulation and reads the case file again: the next update starts from step 0.
  void Reset();

  // The solver's fields: which are output.
  vtkDataArraySelection* GetPointArraySelection() { return this->PointArraySelection; }
  int GetNumberOfPointArrays();
  const char* GetPointArrayName(int index);
  int GetPointArrayStatus(const char* name);
  void SetPointArrayStatus(const char* name, int status);

  // The solver's step of the last update (-1 before the first, and after Reset).
  vtkIdType GetCurrentStep();

protected:
  vtkOctoflowCaseSource();
  ~vtkOctoflowCaseSource() override;
  int FillOutputPortInformation(int port, vtkInformation* info) override;
  int RequestDataObject(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestInformation(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

private:
  vtkOctoflowCaseSource(const vtkOctoflowCaseSource&) = delete;
  void operator=(const vtkOctoflowCaseSource&) = delete;

  char* CaseFile = nullptr;
  char* Backend = nullptr;
  int StepsPerUpdate = 0;
  vtkNew<vtkDataArraySelection> PointArraySelection;
  struct Internals;  // the case (read again when the file changes) and the running simulation
  std::unique_ptr<Internals> Internal;
};

#endif
