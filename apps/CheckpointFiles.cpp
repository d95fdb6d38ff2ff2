#include "CheckpointFiles.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <regex>

#include "common/Error.hpp"
#include "io/Checkpoint.hpp"

#if OCTOFLOW_HAVE_MPI
#include <mpi.h>
#endif

namespace octoflow::app {

namespace {

void createDirectory(const std::string& directory) {
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error) throw OutputError(directory, error.message());
}

// The steps of the checkpoints of `name` in `directory` (their main files), in order.
std::vector<Index> checkpointSteps(const std::string& directory, const std::string& name) {
  const std::regex pattern(std::regex_replace(name, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") +
                           R"(_(\d{8,})\.ckpt)");
  std::vector<Index> steps;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
    std::smatch match;
    const std::string file = entry.path().filename().string();
    if (std::regex_match(file, match, pattern)) steps.push_back(std::stoll(match[1].str()));
  }
  std::sort(steps.begin(), steps.end());
  return steps;
}

// Deletes the checkpoints of `name` in `directory` but the newest `keep` (by step).
void deleteOlderCheckpoints(const std::string& directory, const std::string& name, Index keep) {
  const std::vector<Index> steps = checkpointSteps(directory, name);
  std::error_code error;
  for (std::size_t n = 0; n + static_cast<std::size_t>(keep) < steps.size(); ++n)
    for (const std::string& file : io::checkpointFilesOf(directory, name, steps[n])) std::filesystem::remove(file, error);
}

// <name>.ckpt.series beside the checkpoints: their main files and times in step order, the JSON
// file-series manifest ParaView opens as time steps (the plugin's "octoflow Checkpoint" reader).
void writeSeriesManifest(const std::string& directory, const std::string& name) {
  std::string json = "{\n  \"file-series-version\" : \"1.0\",\n  \"files\" : [\n";
  const std::vector<Index> steps = checkpointSteps(directory, name);
  std::vector<std::string> entries;
  for (const Index step : steps) {
    const std::string file = io::checkpointFileName(name, step);
    double time = 0.0;
    try {
      time = io::readCheckpointHeader((std::filesystem::path(directory) / file).string()).header.time;
    } catch (const InputError&) {
      continue;  // not a checkpoint of ours (damaged, another version): left out, the run goes on
    }
    char entry[600];
    std::snprintf(entry, sizeof entry, "    { \"name\" : \"%s\", \"time\" : %.17g }", file.c_str(), time);
    entries.push_back(entry);
  }
  for (std::size_t n = 0; n < entries.size(); ++n) json += entries[n] + (n + 1 < entries.size() ? ",\n" : "\n");
  json += "  ]\n}\n";
  io::writeFileAtomically((std::filesystem::path(directory) / (name + ".ckpt.series")).string(),
                          std::vector<unsigned char>(json.begin(), json.end()));
}

// The case that wrote a checkpoint, for readers that rebuild its fields without the case file at
// hand (the ParaView plugin): its text, and its path (relative geometry files are found from it).
std::vector<sim::StateRecord> caseRecords(const io::CaseDescription& description) {
  std::error_code error;
  const std::filesystem::path absolute = std::filesystem::absolute(description.sourcePath, error);
  const std::string path = error ? description.sourcePath : absolute.lexically_normal().string();
  return {sim::makeRecord(io::kCaseTextRecord, description.sourceText.data(), description.sourceText.size()),
          sim::makeRecord(io::kCasePathRecord, path.data(), path.size())};
}

}  // namespace

std::string checkpointDirectory(const io::CaseDescription& description) {
  if (!description.checkpoint.directory.empty()) return description.checkpoint.directory;
  return (std::filesystem::path(description.output.directory) / "checkpoints").string();
}

std::string writeCheckpoint(const io::CaseDescription& description, sim::Simulation& simulation,
                            const insitu::FlowExtracts& extracts, const std::string& directory,
                            const std::string& name, Index keep) {
  const int rank = simulation.rank(), ranks = simulation.ranks();
  simulation.settleTracers();  // a move the solver keeps for its next step is made before the tracers are saved
  sim::SolverState state = simulation.saveState();
  if (rank == 0) createDirectory(directory);
#if OCTOFLOW_HAVE_MPI
  if (ranks > 1) MPI_Barrier(MPI_COMM_WORLD);  // the folder is there for every rank
#endif
  io::CheckpointFile file;
  io::CheckpointHeader& header = file.header;
  header.solver = description.solver;
  header.caseName = description.name;
  header.caseHash = description.stateHash;
  header.extent = description.extent;
  header.step = simulation.step();
  header.time = simulation.timeOf(header.step);
  header.rank = rank;
  header.ranks = ranks;
  const std::filesystem::path folder = directory;
  const std::string mainPath = (folder / io::checkpointFileName(name, header.step)).string();
  // The main file's records: the state's, the tracers', and the case for readers (the plugin).
  // The case's first: readers of the header find it in the file's first kilobytes
  // (io::readCheckpointHeader), whatever the size of the state's records.
  const auto mainRecords = [&] {
    file.records = caseRecords(description);
    for (sim::StateRecord& record : state.records) file.records.push_back(std::move(record));
    for (sim::StateRecord& record : extracts.saveState()) file.records.push_back(std::move(record));
  };
  if (ranks == 1) {
    mainRecords();
    file.arrays = std::move(state.arrays);
    io::writeCheckpoint(mainPath, file);
  } else {
#if OCTOFLOW_HAVE_MPI
    // Every rank its piece (arrays only), then rank 0 the main file listing them.
    NodeBox box = state.arrays.empty() ? NodeBox{} : state.arrays.front().box;
    file.arrays = std::move(state.arrays);
    const std::string pieceName = io::checkpointPieceName(name, header.step, rank, ranks);
    const std::uint64_t bytes = io::writeCheckpoint((folder / pieceName).string(), file);
    file.arrays.clear();
    std::int64_t entry[7] = {box.lo[0], box.lo[1], box.lo[2], box.size.nx, box.size.ny, box.size.nz,
                             static_cast<std::int64_t>(bytes)};
    std::vector<std::int64_t> entries(rank == 0 ? 7 * static_cast<std::size_t>(ranks) : 0);
    MPI_Gather(entry, 7, MPI_INT64_T, entries.data(), 7, MPI_INT64_T, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      mainRecords();
      for (int r = 0; r < ranks; ++r) {
        const std::int64_t* e = entries.data() + 7 * r;
        file.pieces.push_back({io::checkpointPieceName(name, header.step, r, ranks),
                               NodeBox{{e[0], e[1], e[2]}, Extent{e[3], e[4], e[5]}}, static_cast<std::uint64_t>(e[6])});
      }
      io::writeCheckpoint(mainPath, file);
    }
#endif
  }
  if (rank == 0) {
    if (keep > 0) deleteOlderCheckpoints(directory, name, keep);
    writeSeriesManifest(directory, name);
  }
  return mainPath;
}

Index restoreCheckpoint(const std::string& path, const io::CaseDescription& description, sim::Simulation& simulation,
                        insitu::FlowExtracts* extracts) {
  io::CheckpointReader reader(path);
  reader.checkMatches(description.solver, description.stateHash, description.name, description.extent);
  simulation.restoreState(reader);
  if (extracts) extracts->restoreState(reader);
  return reader.step();
}

}  // namespace octoflow::app
