#include "sim/SolverState.hpp"

#include <array>

namespace octoflow::sim {

namespace {

// Copies the nodes of `part` (coordinates of the `to` box's frame) from a planar array over `from`
// into a planar array over `to`.
void copyPart(const unsigned char* from, const NodeBox& fromBox, unsigned char* to, const NodeBox& toBox,
              const NodeBox& part, int components, std::size_t valueBytes) {
  const std::size_t run = static_cast<std::size_t>(part.size.nx) * valueBytes;
  for (int c = 0; c < components; ++c) {
    const unsigned char* source = from + c * static_cast<std::size_t>(fromBox.cellCount()) * valueBytes;
    unsigned char* target = to + c * static_cast<std::size_t>(toBox.cellCount()) * valueBytes;
    for (Index k = 0; k < part.size.nz; ++k)
      for (Index j = 0; j < part.size.ny; ++j) {
        const Index x = part.lo[0], y = part.lo[1] + j, z = part.lo[2] + k;
        const Index in = fromBox.size.linear(x - fromBox.lo[0], y - fromBox.lo[1], z - fromBox.lo[2]);
        const Index out = toBox.size.linear(x - toBox.lo[0], y - toBox.lo[1], z - toBox.lo[2]);
        std::memcpy(target + out * valueBytes, source + in * valueBytes, run);
      }
  }
}

}  // namespace

StateArray extractState(const std::string& name, const void* localValues, const NodeBox& local, const NodeBox& owned,
                        int components, int valueBytes) {
  StateArray array{name, components, valueBytes, owned, {}};
  array.bytes.resize(array.expectedBytes());
  copyPart(static_cast<const unsigned char*>(localValues), local, array.bytes.data(), owned, owned, components,
           static_cast<std::size_t>(valueBytes));
  return array;
}

void readWrapped(const StateSource& source, const std::string& name, int components, int valueBytes,
                 const NodeBox& box, const Extent& whole, void* destination) {
  // Each axis splits into at most three runs: before the grid, inside it, past its end.
  std::array<std::array<Index, 4>, 3> cuts;
  std::array<int, 3> runs{};
  for (int axis = 0; axis < 3; ++axis) {
    const Index lo = box.lo[axis], hi = lo + box.size.size(axis), n = whole.size(axis);
    if (lo < -n || hi > 2 * n) source.fail(name, "asked for nodes more than a grid away (a bug of the solver)");
    auto& cut = cuts[static_cast<std::size_t>(axis)];
    int count = 0;
    cut[0] = lo;
    for (const Index edge : {Index{0}, n})
      if (edge > lo && edge < hi) cut[static_cast<std::size_t>(++count)] = edge;
    cut[static_cast<std::size_t>(++count)] = hi;
    runs[static_cast<std::size_t>(axis)] = count;
  }
  std::vector<unsigned char> part;
  for (int a = 0; a < runs[0]; ++a)
    for (int b = 0; b < runs[1]; ++b)
      for (int c = 0; c < runs[2]; ++c) {
        const int at[3] = {a, b, c};
        NodeBox piece, saved;
        Index size[3];
        for (int axis = 0; axis < 3; ++axis) {
          const auto& cut = cuts[static_cast<std::size_t>(axis)];
          piece.lo[axis] = cut[static_cast<std::size_t>(at[axis])];
          size[axis] = cut[static_cast<std::size_t>(at[axis]) + 1] - piece.lo[axis];
          const Index n = whole.size(axis);
          saved.lo[axis] = ((piece.lo[axis] % n) + n) % n;
        }
        piece.size = saved.size = Extent{size[0], size[1], size[2]};
        part.resize(static_cast<std::size_t>(saved.cellCount()) * components * valueBytes);
        source.readArray(name, components, valueBytes, saved, part.data());
        // The wrapped part, placed at its own (unwrapped) coordinates.
        NodeBox placed = saved;
        for (int axis = 0; axis < 3; ++axis) placed.lo[axis] = piece.lo[axis];
        copyPart(part.data(), placed, static_cast<unsigned char*>(destination), box, placed, components,
                 static_cast<std::size_t>(valueBytes));
      }
}

}  // namespace octoflow::sim
