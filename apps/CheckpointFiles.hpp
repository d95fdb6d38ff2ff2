#pragma once
// The run's checkpoints (io/Checkpoint.hpp): the simulation's state and the tracers at a step,
// written by every rank (one file a rank, and rank 0's main file listing them), the newest `keep`
// kept; and a run's state read back from one (`--restart`).
#include <string>

#include "insitu/FlowExtracts.hpp"
#include "io/CaseFile.hpp"
#include "sim/Simulation.hpp"

namespace octoflow::app {

// The folder checkpoints go to: checkpoint.directory, or <output>/checkpoints.
std::string checkpointDirectory(const io::CaseDescription& description);

// Collective. Writes the checkpoint of the simulation's current step into `directory` (created
// when missing) as `<name>_<step>.ckpt` (and its pieces); returns the main file's path. With
// `keep` > 0, older checkpoints of `name` beyond the newest `keep` are deleted afterwards.
std::string writeCheckpoint(const io::CaseDescription& description, sim::Simulation& simulation,
                            const insitu::FlowExtracts& extracts, const std::string& directory,
                            const std::string& name, Index keep);

// Collective. Reads the checkpoint `path` into the simulation and the tracers; refuses (InputError
// naming the file) one of another solver, case or grid. Returns its step.
Index restoreCheckpoint(const std::string& path, const io::CaseDescription& description, sim::Simulation& simulation,
                        insitu::FlowExtracts* extracts);

}  // namespace octoflow::app
