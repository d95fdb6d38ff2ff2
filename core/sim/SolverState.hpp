#pragma once
// A solver's full state, as checkpoints keep it (io/Checkpoint.hpp): arrays over nodes of the whole
// grid (each rank gives those of its owned nodes) and records (step-independent values the run
// needs to go on bit for bit: a counter, the last tip position, the tracers). Arrays are kept by
// node coordinates, not by rank, so a state saved by N ranks restores on any number of ranks.
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "common/Error.hpp"
#include "common/Extent.hpp"

namespace octoflow::sim {

// `components` planes of the nodes of `box` (whole-grid coordinates, x fastest), each value
// `valueBytes` bytes, as the solver stores it (raw bits: FP16 populations stay FP16).
struct StateArray {
  std::string name;
  int components = 1;
  int valueBytes = 4;
  NodeBox box;
  std::vector<unsigned char> bytes;

  std::size_t planeBytes() const { return static_cast<std::size_t>(box.cellCount()) * valueBytes; }
  std::size_t expectedBytes() const { return planeBytes() * static_cast<std::size_t>(components); }
};

struct StateRecord {
  std::string name;
  std::vector<unsigned char> bytes;
};

// Trivially copyable values as a record's bytes, and back (the count must match exactly).
template <class T>
StateRecord makeRecord(const std::string& name, const T* values, std::size_t count) {
  static_assert(std::is_trivially_copyable_v<T>, "records hold plain values");
  StateRecord record{name, std::vector<unsigned char>(count * sizeof(T))};
  if (count) std::memcpy(record.bytes.data(), values, record.bytes.size());
  return record;
}
template <class T>
StateRecord makeRecord(const std::string& name, const std::vector<T>& values) {
  return makeRecord(name, values.data(), values.size());
}

struct SolverState {
  std::vector<StateArray> arrays;    // this rank's owned nodes
  std::vector<StateRecord> records;  // meaningful on rank 0 (the same on every rank, or rank 0's own)
};

// Where a restoring solver reads its state from (a checkpoint, on every rank).
class StateSource {
public:
  virtual ~StateSource() = default;
  virtual Index step() const = 0;
  // The record's bytes; a missing record is an error of the checkpoint (InputError naming it).
  virtual const std::vector<unsigned char>& record(const std::string& name) const = 0;
  virtual bool hasRecord(const std::string& name) const = 0;
  // Fills `destination` (components planes of box nodes, x fastest) with the nodes of `box` of the
  // named array, from whichever pieces hold them; an array missing, of other components or value
  // size, or not covering `box` is an InputError.
  virtual void readArray(const std::string& name, int components, int valueBytes, const NodeBox& box,
                         void* destination) const = 0;

  template <class T>
  std::vector<T> values(const std::string& name) const {
    const std::vector<unsigned char>& bytes = record(name);
    if (bytes.size() % sizeof(T) != 0) fail(name, "holds " + std::to_string(bytes.size()) + " bytes, not whole values");
    std::vector<T> out(bytes.size() / sizeof(T));
    if (!out.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
    return out;
  }
  template <class T>
  std::vector<T> values(const std::string& name, std::size_t count) const {
    std::vector<T> out = values<T>(name);
    if (out.size() != count)
      fail(name, "holds " + std::to_string(out.size()) + " values, expected " + std::to_string(count));
    return out;
  }
  // An InputError about the checkpoint's record or array `name`.
  [[noreturn]] virtual void fail(const std::string& name, const std::string& problem) const = 0;
};

// The nodes of `owned` of a local array as a StateArray: the array holds `components` planes of the
// nodes of `local` (whole-grid coordinates of the local grid, x fastest), `valueBytes` each.
StateArray extractState(const std::string& name, const void* localValues, const NodeBox& local, const NodeBox& owned,
                        int components, int valueBytes);

// Reads the nodes of `box` (whole-grid coordinates that may reach past the grid's ends, as ghost
// layers do across periodic faces: those wrap around `whole`) of a saved array into `destination`
// (components planes of box nodes).
void readWrapped(const StateSource& source, const std::string& name, int components, int valueBytes,
                 const NodeBox& box, const Extent& whole, void* destination);

}  // namespace octoflow::sim
