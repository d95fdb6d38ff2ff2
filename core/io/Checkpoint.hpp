#pragma once
// Checkpoint files: a solver's full state (sim/SolverState.hpp) at one step, to go on from
// (`octoflow run CASE --restart FILE`) bit for bit. Layout in docs/FORMATS.md:
//
//   magic "OCTOCKPT", byte-order mark, version, file size, header (solver, case name, case hash,
//   whole grid, step, time, rank, ranks), records, arrays, piece list, CRC32C of all before it.
//
// One rank writes one file holding everything. N ranks write one piece file each (the arrays of
// their owned nodes) and rank 0 a main file (the records and the list of pieces with their boxes
// and sizes); the main file is the one to restart from. Every file appears complete or not at all:
// written under a temporary name, flushed, renamed.
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/Extent.hpp"
#include "sim/SolverState.hpp"

namespace octoflow::io {

inline constexpr char kCheckpointMagic[8] = {'O', 'C', 'T', 'O', 'C', 'K', 'P', 'T'};
inline constexpr std::uint32_t kCheckpointVersion = 1;
inline constexpr std::uint32_t kByteOrderMark = 0x01020304u;

// Records of a main file that no solver reads back: the case file that wrote it, as text, and its
// absolute path (for readers such as the ParaView plugin, which rebuild the fields from the state).
inline constexpr char kCaseTextRecord[] = "case_text";
inline constexpr char kCasePathRecord[] = "case_path";

// CRC32C (Castagnoli), as iSCSI and ext4 use it: crc32c("123456789") = 0xE3069283.
std::uint32_t crc32c(const void* data, std::size_t bytes, std::uint32_t crc = 0);

struct CheckpointHeader {
  std::uint32_t version = kCheckpointVersion;
  std::string solver;         // case.solver
  std::string caseName;       // case.name (for messages)
  std::uint64_t caseHash = 0; // of the case's state-defining tables (CaseDescription::stateHash)
  Extent extent;              // the whole grid
  Index step = 0;
  double time = 0.0;          // Simulation::timeOf(step)
  int rank = 0, ranks = 1;    // who wrote this file, of how many
};

// A piece file a main file lists: its name (beside the main file), the box of its arrays, its size.
struct CheckpointPieceEntry {
  std::string file;
  NodeBox box;
  std::uint64_t bytes = 0;
};

// One file's contents.
struct CheckpointFile {
  CheckpointHeader header;
  std::vector<sim::StateRecord> records;
  std::vector<sim::StateArray> arrays;
  std::vector<CheckpointPieceEntry> pieces;  // main file of several ranks: the piece files
};

// The bytes of a file, CRC included; and a file's contents from its bytes: any defect (magic,
// byte order, version, size, CRC, a length beyond the end) is an InputError naming `source`.
std::vector<unsigned char> encodeCheckpoint(const CheckpointFile& file);
CheckpointFile decodeCheckpoint(const unsigned char* data, std::size_t size, const std::string& source);

// The header of a checkpoint file and the records in its first 64 KiB (those a run writes first:
// the case, docs/FORMATS.md), without its arrays and pieces: the time steps and case of a series,
// for readers. Signature, byte order, version, size and lengths are checked, not the CRC (a full
// read checks it). Defects are InputErrors.
CheckpointFile readCheckpointHeader(const std::string& path);

// Writes `bytes` to `path` complete or not at all (temporary name in the same folder, flush, rename):
// a failure (disk full, permission denied) is an OutputError naming the path, and leaves nothing.
void writeFileAtomically(const std::string& path, const std::vector<unsigned char>& bytes);
void writeFileAtomically(const std::string& path, const std::function<void(std::FILE*, const std::string&)>& write);
// A checkpoint file, streamed (no copy of the arrays), atomically; returns its size in bytes.
std::uint64_t writeCheckpoint(const std::string& path, const CheckpointFile& contents);

// The file names of the checkpoint of `step`: the main file, and rank `rank`'s piece of `ranks`.
std::string checkpointFileName(const std::string& caseName, Index step);
std::string checkpointPieceName(const std::string& caseName, Index step, int rank, int ranks);

// Reading a checkpoint for a restart: the main file at once (and checked), the piece files as
// arrays are asked for (each read and checked once, only those overlapping the boxes asked).
class CheckpointReader final : public sim::StateSource {
public:
  explicit CheckpointReader(const std::string& path);
  ~CheckpointReader() override;

  const CheckpointHeader& header() const { return main_.header; }
  const std::string& path() const { return path_; }
  // Refuses (InputError naming the file) a checkpoint of another solver, case or grid.
  void checkMatches(const std::string& solver, std::uint64_t caseHash, const std::string& caseName,
                    const Extent& extent) const;

  Index step() const override { return main_.header.step; }
  const std::vector<unsigned char>& record(const std::string& name) const override;
  bool hasRecord(const std::string& name) const override;
  void readArray(const std::string& name, int components, int valueBytes, const NodeBox& box,
                 void* destination) const override;
  [[noreturn]] void fail(const std::string& name, const std::string& problem) const override;

private:
  const CheckpointFile& piece(std::size_t index) const;

  std::string path_;
  CheckpointFile main_;
  mutable std::map<std::size_t, std::unique_ptr<CheckpointFile>> pieces_;
};

// The checkpoint files of one step (one main file, and the pieces it lists) to delete when only
// the newest `keep` are kept; found by name in `directory`.
std::vector<std::string> checkpointFilesOf(const std::string& directory, const std::string& caseName, Index step);

}  // namespace octoflow::io
