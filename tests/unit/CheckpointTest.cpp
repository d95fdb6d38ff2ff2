// The checkpoint format (io/Checkpoint.hpp) and the watchdog's search (sim/FieldCheck.hpp) on
// the CPU: known answers, round trips, every kind of damage refused, pieces reassembled.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "TestSupport.hpp"
#include "common/Error.hpp"
#include "io/Checkpoint.hpp"
#include "sim/FieldCheck.hpp"
#include "sim/SolverState.hpp"

namespace fs = std::filesystem;
using namespace octoflow;

namespace {

// An array of `components` planes over `box` whose value at (c, i, j, k) encodes its place.
sim::StateArray numberedArray(const std::string& name, const NodeBox& box, int components) {
  sim::StateArray array{name, components, 4, box, {}};
  std::vector<float> values;
  for (int c = 0; c < components; ++c)
    for (Index k = 0; k < box.size.nz; ++k)
      for (Index j = 0; j < box.size.ny; ++j)
        for (Index i = 0; i < box.size.nx; ++i)
          values.push_back(static_cast<float>(c * 1000000 + (box.lo[2] + k) * 10000 + (box.lo[1] + j) * 100 +
                                              (box.lo[0] + i)));
  array.bytes.resize(values.size() * 4);
  std::memcpy(array.bytes.data(), values.data(), array.bytes.size());
  return array;
}

io::CheckpointFile smallFile() {
  io::CheckpointFile file;
  file.header.solver = "lbm";
  file.header.caseName = "small";
  file.header.caseHash = 0x1234567890abcdefull;
  file.header.extent = Extent{6, 5, 4};
  file.header.step = 42;
  file.header.time = 4.2;
  const double history[2] = {1.5, -2.25};
  file.records.push_back(sim::makeRecord("history", history, 2));
  file.arrays.push_back(numberedArray("phi", NodeBox::of(file.header.extent), 2));
  return file;
}

std::string inputErrorOf(const std::vector<unsigned char>& bytes) {
  try {
    io::decodeCheckpoint(bytes.data(), bytes.size(), "damaged.ckpt");
  } catch (const InputError& error) {
    return error.what();
  }
  return "";
}

}  // namespace

TEST(Checkpoint, Crc32cKnownAnswers) {
  EXPECT_EQ(io::crc32c("123456789", 9), 0xE3069283u);
  EXPECT_EQ(io::crc32c("", 0), 0u);
  // Incremental equals one pass, across the 8-byte blocks.
  const std::string text = "The quick brown fox jumps over the lazy dog";
  EXPECT_EQ(io::crc32c(text.data(), text.size()), 0x22620404u);
  EXPECT_EQ(io::crc32c(text.data() + 13, text.size() - 13, io::crc32c(text.data(), 13)), 0x22620404u);
}

TEST(Checkpoint, RoundTripKeepsEveryByte) {
  const io::CheckpointFile file = smallFile();
  const std::vector<unsigned char> bytes = io::encodeCheckpoint(file);
  const io::CheckpointFile back = io::decodeCheckpoint(bytes.data(), bytes.size(), "small.ckpt");
  EXPECT_EQ(back.header.solver, "lbm");
  EXPECT_EQ(back.header.caseName, "small");
  EXPECT_EQ(back.header.caseHash, file.header.caseHash);
  EXPECT_EQ(back.header.extent.nx, 6);
  EXPECT_EQ(back.header.step, 42);
  EXPECT_EQ(back.header.time, 4.2);
  ASSERT_EQ(back.records.size(), 1u);
  EXPECT_EQ(back.records[0].bytes, file.records[0].bytes);
  ASSERT_EQ(back.arrays.size(), 1u);
  EXPECT_EQ(back.arrays[0].bytes, file.arrays[0].bytes);
  EXPECT_EQ(back.arrays[0].components, 2);
  EXPECT_EQ(io::encodeCheckpoint(back), bytes);
  // The last four bytes are the CRC32C of the rest.
  std::uint32_t stored;
  std::memcpy(&stored, bytes.data() + bytes.size() - 4, 4);
  EXPECT_EQ(stored, io::crc32c(bytes.data(), bytes.size() - 4));
}

TEST(Checkpoint, EveryKindOfDamageIsRefusedNamingTheFile) {
  const std::vector<unsigned char> good = io::encodeCheckpoint(smallFile());
  // A byte flipped anywhere.
  for (std::size_t at : {std::size_t{30}, good.size() / 2, good.size() - 2}) {
    std::vector<unsigned char> bytes = good;
    bytes[at] ^= 0x10;
    const std::string message = inputErrorOf(bytes);
    EXPECT_NE(message.find("damaged.ckpt"), std::string::npos) << at;
    EXPECT_FALSE(message.empty()) << "a flipped byte at " << at << " passed";
  }
  {
    std::vector<unsigned char> bytes = good;
    bytes[good.size() / 2] ^= 1;
    EXPECT_NE(inputErrorOf(bytes).find("CRC32C"), std::string::npos);
  }
  // Truncated.
  for (std::size_t size : {std::size_t{0}, std::size_t{7}, std::size_t{20}, good.size() - 1}) {
    const std::vector<unsigned char> bytes(good.begin(), good.begin() + static_cast<long>(size));
    const std::string message = inputErrorOf(bytes);
    EXPECT_FALSE(message.empty()) << "truncated to " << size;
  }
  EXPECT_NE(inputErrorOf(std::vector<unsigned char>(good.begin(), good.end() - 1)).find("truncated"), std::string::npos);
  // Another version, another byte order, not a checkpoint at all.
  {
    std::vector<unsigned char> bytes = good;
    const std::uint32_t version = 7;
    std::memcpy(bytes.data() + 12, &version, 4);
    EXPECT_NE(inputErrorOf(bytes).find("version 7"), std::string::npos) << inputErrorOf(bytes);
  }
  {
    std::vector<unsigned char> bytes = good;
    std::swap(bytes[8], bytes[11]);
    std::swap(bytes[9], bytes[10]);
    EXPECT_NE(inputErrorOf(bytes).find("byte order"), std::string::npos) << inputErrorOf(bytes);
  }
  const std::string text = "[case]\nname = \"x\"\n";
  EXPECT_NE(inputErrorOf(std::vector<unsigned char>(text.begin(), text.end())).find("not an octoflow checkpoint"),
            std::string::npos);
}

TEST(Checkpoint, ArraysAreReassembledFromPiecesWrappedAcrossPeriodicFaces) {
  const fs::path folder = fs::temp_directory_path() / "octoflow_checkpoint_pieces";
  fs::remove_all(folder);
  fs::create_directories(folder);
  const Extent whole{6, 5, 4};
  // Two pieces cut along y, as two ranks would write them, and the main file listing them.
  const NodeBox low{{0, 0, 0}, Extent{6, 2, 4}}, high{{0, 2, 0}, Extent{6, 3, 4}};
  io::CheckpointFile main = smallFile();
  main.arrays.clear();
  main.header.ranks = 2;
  for (int rank = 0; rank < 2; ++rank) {
    io::CheckpointFile piece = smallFile();
    piece.records.clear();
    piece.header.rank = rank;
    piece.header.ranks = 2;
    piece.arrays = {numberedArray("phi", rank ? high : low, 2)};
    const std::string name = io::checkpointPieceName("small", 42, rank, 2);
    const std::uint64_t bytes = io::writeCheckpoint((folder / name).string(), piece);
    main.pieces.push_back({name, rank ? high : low, bytes});
  }
  const std::string path = (folder / io::checkpointFileName("small", 42)).string();
  io::writeCheckpoint(path, main);
  EXPECT_FALSE(fs::exists(path + ".partial"));

  io::CheckpointReader reader(path);
  EXPECT_EQ(reader.step(), 42);
  EXPECT_EQ(reader.values<double>("history", 2)[1], -2.25);
  EXPECT_NO_THROW(reader.checkMatches("lbm", 0x1234567890abcdefull, "small", whole));
  EXPECT_THROW(reader.checkMatches("lbm", 1, "other", whole), InputError);
  EXPECT_THROW(reader.checkMatches("phasefield", 0x1234567890abcdefull, "small", whole), InputError);
  EXPECT_THROW(reader.checkMatches("lbm", 0x1234567890abcdefull, "small", Extent{6, 5, 5}), InputError);

  // A box across both pieces and across the periodic faces of x and z: every value where it was.
  const NodeBox box{{-1, 1, 3}, Extent{8, 3, 2}};
  std::vector<float> values(static_cast<std::size_t>(2 * box.cellCount()));
  sim::readWrapped(reader, "phi", 2, 4, box, whole, values.data());
  std::size_t at = 0;
  for (int c = 0; c < 2; ++c)
    for (Index k = 0; k < 2; ++k)
      for (Index j = 0; j < 3; ++j)
        for (Index i = 0; i < 8; ++i) {
          const Index x = (box.lo[0] + i + 6) % 6, y = box.lo[1] + j, z = (box.lo[2] + k) % 4;
          ASSERT_EQ(values[at++], static_cast<float>(c * 1000000 + z * 10000 + y * 100 + x)) << c << i << j << k;
        }
  // Asking for other components or value sizes, or a record that is not there, is refused.
  std::vector<float> all(static_cast<std::size_t>(3 * whole.cellCount()));
  EXPECT_THROW(reader.readArray("phi", 3, 4, NodeBox::of(whole), all.data()), InputError);
  EXPECT_THROW(reader.readArray("u", 2, 4, NodeBox::of(whole), all.data()), InputError);
  EXPECT_THROW(reader.record("tracer_ids"), InputError);
  EXPECT_THROW(reader.values<double>("history", 3), InputError);

  // A piece missing, or a piece given for the main file.
  fs::remove(folder / io::checkpointPieceName("small", 42, 1, 2));
  io::CheckpointReader missing(path);
  EXPECT_THROW(missing.readArray("phi", 2, 4, NodeBox::of(whole), all.data()), InputError);
  try {
    io::CheckpointReader piece((folder / io::checkpointPieceName("small", 42, 0, 2)).string());
    ADD_FAILURE() << "a piece was taken for a main file";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("main file"), std::string::npos) << error.what();
  }
  fs::remove_all(folder);
}

TEST(Checkpoint, AFailedWriteLeavesNothingUnderEitherName) {
  const std::string path = "/proc/octoflow_cannot_write_here.ckpt";
  try {
    io::writeCheckpoint(path, smallFile());
    ADD_FAILURE() << "wrote under /proc";
  } catch (const OutputError& error) {
    EXPECT_NE(std::string(error.what()).find(path), std::string::npos) << error.what();
  }
  EXPECT_FALSE(fs::exists(path));
  EXPECT_FALSE(fs::exists(path + ".partial"));
}

TEST(FieldCheck, FindsTheFirstFaultOfTheOwnedNodesOnly) {
  // A 6 x 5 x 4 local grid whose owned nodes are x 1..4 (ghost layers at x = 0 and 5).
  const Extent grid{6, 5, 4};
  std::vector<float> density(static_cast<std::size_t>(grid.cellCount()), 1.0f);
  std::vector<float> velocity(3 * density.size(), 0.01f);
  sim::FieldSet fields;
  fields.box = NodeBox{{-1, 10, 0}, grid};  // whole-grid coordinates of the local grid
  fields.owned = NodeBox{{0, 10, 0}, Extent{4, 5, 4}};
  fields.arrays = {{"density", 1, density.data()}, {"velocity", 3, velocity.data()}};
  const std::vector<sim::FieldLimit> limits = {{"density", 0.1f, 10.0f, false}, {"velocity", 0.0f, 0.5f, true}};
  sim::FieldFault fault;
  EXPECT_FALSE(sim::findFieldFault(exec::Backend::Cpu, fields, limits, fault));
  // Faults in the ghost layers are not this rank's.
  density[static_cast<std::size_t>(grid.linear(0, 2, 2))] = std::numeric_limits<float>::quiet_NaN();
  density[static_cast<std::size_t>(grid.linear(5, 1, 1))] = 50.0f;
  EXPECT_FALSE(sim::findFieldFault(exec::Backend::Cpu, fields, limits, fault));
  // Two faults of the owned nodes: the lowest is reported, with its whole-grid coordinates.
  density[static_cast<std::size_t>(grid.linear(3, 4, 2))] = std::numeric_limits<float>::infinity();
  density[static_cast<std::size_t>(grid.linear(2, 1, 2))] = 0.05f;
  ASSERT_TRUE(sim::findFieldFault(exec::Backend::Cpu, fields, limits, fault));
  EXPECT_EQ(fault.field, "density");
  EXPECT_EQ(fault.node[0], 1);
  EXPECT_EQ(fault.node[1], 11);
  EXPECT_EQ(fault.node[2], 2);
  EXPECT_EQ(fault.values[0], 0.05f);
  EXPECT_NE(fault.describe().find("(1, 11, 2)"), std::string::npos) << fault.describe();
  // A speed of 0.5 or more (or NaN in one component) is a fault of velocity.
  std::fill(density.begin(), density.end(), 1.0f);
  velocity[3 * static_cast<std::size_t>(grid.linear(4, 3, 1)) + 1] = 0.5f;
  ASSERT_TRUE(sim::findFieldFault(exec::Backend::Cpu, fields, limits, fault));
  EXPECT_EQ(fault.field, "velocity");
  EXPECT_EQ(fault.node[0], 3);
  EXPECT_EQ(fault.components, 3);
  velocity[3 * static_cast<std::size_t>(grid.linear(4, 3, 1)) + 1] = 0.4f;
  velocity[3 * static_cast<std::size_t>(grid.linear(1, 0, 0)) + 2] = std::numeric_limits<float>::quiet_NaN();
  ASSERT_TRUE(sim::findFieldFault(exec::Backend::Cpu, fields, limits, fault));
  EXPECT_EQ(fault.node[0], 0);
  EXPECT_EQ(fault.node[1], 10);
}
