#ifndef octoflowSimulationOutput_h
#define octoflowSimulationOutput_h
// What the plugin's sources and readers hand ParaView from a simulation's current state, written
// once: the grid output's type for a case (image data, or a non-overlapping AMR dataset for a solver
// with levels), the fields offered and selected, and the grid's contents as `octoflow run` writes
// them (lattice arrays, physical-unit arrays, metadata; the octree's blocks).
#include <string>
#include <vector>

#include <vtkDataArraySelection.h>
#include <vtkDataObject.h>
#include <vtkInformation.h>

#include "io/CaseFile.hpp"
#include "sim/Simulation.hpp"

namespace octoflow::plugin {

// Makes the data object of the grid port (`info`: its output information) the type the case's
// solver outputs, keeping one already of that type.
void makeGridOutput(vtkInformation* info, const io::CaseDescription& description);
// The grid's whole extent (image data: nodes, origin 0, spacing 1), for RequestInformation.
void describeGridOutput(vtkInformation* info, const io::CaseDescription& description);
// Adds the case's fields to `selection` (enabled), leaving the choices already made.
void offerFields(vtkDataArraySelection* selection, const io::CaseDescription& description);
// The simulation's fields enabled in `selection`.
std::vector<std::string> selectedFields(vtkDataArraySelection* selection, const sim::Simulation& simulation);
// The current state's fields `names` into `output` (from makeGridOutput), owned by it, at `time`.
void fillGridOutput(sim::Simulation& simulation, const std::vector<std::string>& names, vtkDataObject* output,
                    double time);

}  // namespace octoflow::plugin

#endif
