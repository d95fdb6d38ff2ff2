// Writes the checkpoint fuzzer's seed corpus: real files from io::encodeCheckpoint, small enough
// for the fuzzer to mutate quickly (tens to hundreds of bytes of arrays).
//   make_checkpoint_seeds <folder>     (the committed seeds are in fuzz/corpus/checkpoint/)
#include <cstdint>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <fstream>
#include <string>
#include <vector>

#include "io/Checkpoint.hpp"

using namespace octoflow;

namespace {

// `components` planes over `box` with `valueBytes` bytes a value, filled with a counting pattern.
sim::StateArray makeArray(const std::string& name, int components, int valueBytes, const NodeBox& box) {
  sim::StateArray array;
  array.name = name;
  array.components = components;
  array.valueBytes = valueBytes;
  array.box = box;
  array.bytes.resize(array.expectedBytes());
  for (std::size_t i = 0; i < array.bytes.size(); ++i) array.bytes[i] = static_cast<unsigned char>(i * 37 + 11);
  return array;
}

io::CheckpointHeader makeHeader(const std::string& solver, const std::string& caseName, const Extent& extent,
                                Index step, int rank, int ranks) {
  io::CheckpointHeader header;
  header.solver = solver;
  header.caseName = caseName;
  header.caseHash = 0x9e3779b97f4a7c15ull ^ static_cast<std::uint64_t>(step);
  header.extent = extent;
  header.step = step;
  header.time = 0.5 * static_cast<double>(step);
  header.rank = rank;
  header.ranks = ranks;
  return header;
}

NodeBox box(Index x, Index y, Index z, Index nx, Index ny, Index nz) {
  NodeBox result;
  result.lo[0] = x;
  result.lo[1] = y;
  result.lo[2] = z;
  result.size = Extent{nx, ny, nz};
  return result;
}

void write(const std::string& folder, const std::string& name, const io::CheckpointFile& file) {
  const std::vector<unsigned char> bytes = io::encodeCheckpoint(file);
  const std::string path = folder + "/" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
  std::printf("%s: %zu bytes\n", path.c_str(), bytes.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <folder>\n", argv[0]);
    return 2;
  }
  const std::string folder = argv[1];
  try {
    // One rank of a 2D LBM run: populations (9 planes, FP16 bits) and density, two records.
    {
      const Extent extent{4, 3, 1};
      io::CheckpointFile file;
      file.header = makeHeader("lbm", "channel", extent, 120, 0, 1);
      const std::vector<std::int64_t> counters = {120, 3};
      const std::vector<double> tip = {1.25, -0.5, 0.0};
      file.records.push_back(sim::makeRecord("counters", counters));
      file.records.push_back(sim::makeRecord("tip", tip));
      file.arrays.push_back(makeArray("populations", 9, 2, NodeBox::of(extent)));
      file.arrays.push_back(makeArray("density", 1, 4, NodeBox::of(extent)));
      write(folder, "lbm_one_rank.ckpt", file);
    }
    // One rank of a 3D phase-field run: phi and temperature in FP32, an empty record.
    {
      const Extent extent{3, 2, 2};
      io::CheckpointFile file;
      file.header = makeHeader("phasefield", "dendrite3d", extent, 4000, 0, 1);
      file.records.push_back(sim::StateRecord{"noise_key", {}});
      const std::vector<float> metrics = {0.125f, 3.5f};
      file.records.push_back(sim::makeRecord("metrics", metrics));
      file.arrays.push_back(makeArray("phi", 1, 4, NodeBox::of(extent)));
      file.arrays.push_back(makeArray("temperature", 1, 4, NodeBox::of(extent)));
      write(folder, "phasefield_one_rank.ckpt", file);
    }
    // Two ranks of a 4 x 4 grid cut along x: the main file (records and the piece list) and the pieces.
    {
      const Extent extent{4, 4, 1};
      const NodeBox halves[2] = {box(0, 0, 0, 2, 4, 1), box(2, 0, 0, 2, 4, 1)};
      io::CheckpointFile main;
      main.header = makeHeader("lbm", "cavity2d", extent, 500, 0, 2);
      const std::vector<std::int64_t> counters = {500};
      main.records.push_back(sim::makeRecord("counters", counters));
      for (int rank = 0; rank < 2; ++rank) {
        io::CheckpointFile piece;
        piece.header = makeHeader("lbm", "cavity2d", extent, 500, rank, 2);
        piece.arrays.push_back(makeArray("density", 1, 4, halves[rank]));
        const std::vector<unsigned char> bytes = io::encodeCheckpoint(piece);
        const std::string name = io::checkpointPieceName("cavity2d", 500, rank, 2);
        write(folder, "piece_" + std::to_string(rank) + "_of_2.ckpt", piece);
        main.pieces.push_back(io::CheckpointPieceEntry{name, halves[rank], bytes.size()});
      }
      write(folder, "main_two_ranks.ckpt", main);
    }
    // The smallest file: a header with nothing after it.
    {
      io::CheckpointFile file;
      file.header = makeHeader("lbm", "empty", Extent{1, 1, 1}, 0, 0, 1);
      write(folder, "header_only.ckpt", file);
    }
  } catch (const std::exception& error) {
    std::fprintf(stderr, "make_checkpoint_seeds: %s\n", error.what());
    return 1;
  }
  return 0;
}
