#ifndef vtkOctoflowCheckpointReader_h
#define vtkOctoflowCheckpointReader_h
// "octoflow Checkpoint" in ParaView: one octoflow checkpoint (.ckpt, docs/FORMATS.md) as the fields
// `octoflow run` writes at that step. The solver is rebuilt from the case the checkpoint carries (or
// CaseFile), its state restored (pieces of any number of MPI ranks make one grid), and its fields
// computed: port 0 the grid (vtkImageData, or vtkNonOverlappingAMR for the octree solver) with the
// selected point arrays, their physical-unit arrays and the metadata; port 1 the tracers
// (vtkPolyData, empty without tracers). Its time is the checkpoint's (TIMESTEP_VALUES). In ParaView
// vtkOctoflowCheckpointSeriesReader wraps it, so that a series of files, or their
// <case>.ckpt.series manifest, are time steps.
#include <memory>
#include <string>

#include "octoflowSourcesModule.h"
#include "vtkDataObjectAlgorithm.h"
#include "vtkNew.h"

class vtkDataArraySelection;

class OCTOFLOWSOURCES_EXPORT vtkOctoflowCheckpointReader : public vtkDataObjectAlgorithm {
public:
  static vtkOctoflowCheckpointReader* New();
  vtkTypeMacro(vtkOctoflowCheckpointReader, vtkDataObjectAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  // The checkpoint's main file (<case>_<step>.ckpt).
  vtkSetStringMacro(FileName);
  vtkGetStringMacro(FileName);
  // Optional: the case file to rebuild the solver from, instead of the case the checkpoint carries.
  vtkSetStringMacro(CaseFile);
  vtkGetStringMacro(CaseFile);
  // Where the fields are computed from the state: "cpu" (default), "cuda" or "auto".
  vtkSetStringMacro(Backend);
  vtkGetStringMacro(Backend);

  // 1 for a file that starts with the checkpoint signature.
  int CanReadFile(const char* fileName);

  // The solver's fields (density, velocity, phi, temperature...): which are read.
  vtkDataArraySelection* GetPointArraySelection() { return this->PointArraySelection; }
  int GetNumberOfPointArrays();
  const char* GetPointArrayName(int index);
  int GetPointArrayStatus(const char* name);
  void SetPointArrayStatus(const char* name, int status);

protected:
  vtkOctoflowCheckpointReader();
  ~vtkOctoflowCheckpointReader() override;
  int FillOutputPortInformation(int port, vtkInformation* info) override;
  int RequestDataObject(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestInformation(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

private:
  vtkOctoflowCheckpointReader(const vtkOctoflowCheckpointReader&) = delete;
  void operator=(const vtkOctoflowCheckpointReader&) = delete;

  char* FileName = nullptr;
  char* CaseFile = nullptr;
  char* Backend = nullptr;
  vtkNew<vtkDataArraySelection> PointArraySelection;
  struct Internals;  // the case and solver of the last file, kept for the next of the same case
  std::unique_ptr<Internals> Internal;
};

#endif
