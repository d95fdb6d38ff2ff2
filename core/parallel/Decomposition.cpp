#include "parallel/Decomposition.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "common/Error.hpp"

namespace octoflow::parallel {

Extent Piece::localExtent() const {
  Index size[3];
  for (int axis = 0; axis < 3; ++axis) size[axis] = owned(axis) + (ghostLow[axis] ? 1 : 0) + (ghostHigh[axis] ? 1 : 0);
  return Extent{size[0], size[1], size[2]};
}

std::array<int, 3> chooseDims(const Extent& whole, int ranks) {
  std::array<int, 3> dims{1, 1, 1};
  std::vector<int> factors;
  for (int n = ranks, p = 2; n > 1;) {
    if (n % p == 0) {
      factors.push_back(p);
      n /= p;
    } else {
      ++p;
    }
  }
  std::sort(factors.rbegin(), factors.rend());
  for (int factor : factors) {
    int longest = -1;
    double longestSize = 0.0;
    // On a tie the slower axis: its faces are contiguous planes in memory (cheap to pack).
    for (int axis = 2; axis >= 0; --axis) {
      if (whole.size(axis) <= 1) continue;
      const double pieceSize = static_cast<double>(whole.size(axis)) / dims[axis];
      if (pieceSize > longestSize) {
        longestSize = pieceSize;
        longest = axis;
      }
    }
    if (longest < 0)
      throw InputError("mpirun", "-np", "cannot cut a grid of one node over " + std::to_string(ranks) + " ranks");
    dims[longest] *= factor;
  }
  return dims;
}

Piece makePiece(const Extent& whole, unsigned periodicAxes, const std::array<int, 3>& dims,
                const std::array<int, 3>& coords) {
  Piece piece;
  piece.dims = dims;
  piece.coords = coords;
  for (int axis = 0; axis < 3; ++axis) {
    const Index size = whole.size(axis);
    const int n = dims[axis], c = coords[axis];
    piece.lo[axis] = size * c / n;
    piece.hi[axis] = size * (c + 1) / n;
    if (n > 1 && piece.owned(axis) < 2)
      throw InputError("mpirun", "-np", "cutting " + std::to_string(size) + " nodes over " + std::to_string(n) +
                                            " ranks leaves a piece under 2 nodes: use fewer MPI ranks");
    const bool periodic = periodicAxes & (1u << axis);
    piece.ghostLow[axis] = n > 1 && (periodic || c > 0);
    piece.ghostHigh[axis] = n > 1 && (periodic || c < n - 1);
  }
  return piece;
}

lbm::UniformSolverConfig pieceConfig(const lbm::UniformSolverConfig& whole, const Piece& piece) {
  lbm::UniformSolverConfig config = whole;
  config.extent = piece.localExtent();
  config.isPiece = true;
  config.placement = lbm::placementOf(whole);
  config.ghostFaces = 0;
  for (int axis = 0; axis < 3; ++axis) {
    config.placement.origin[axis] = piece.origin(axis);
    if (piece.ghostLow[axis]) {
      config.ghostFaces |= 1u << (2 * axis);
      config.faces.face[2 * axis].type = lbm::FaceType::Periodic;
    }
    if (piece.ghostHigh[axis]) {
      config.ghostFaces |= 1u << (2 * axis + 1);
      config.faces.face[2 * axis + 1].type = lbm::FaceType::Periodic;
    }
  }
  if (!whole.solid.empty()) {
    const Extent& e = config.extent;
    config.solid.assign(static_cast<std::size_t>(e.cellCount()), 0);
    for (Index k = 0; k < e.nz; ++k)
      for (Index j = 0; j < e.ny; ++j)
        for (Index i = 0; i < e.nx; ++i) {
          const Index local[3] = {i, j, k};
          Index global[3];
          for (int axis = 0; axis < 3; ++axis) {
            const Index size = whole.extent.size(axis);
            global[axis] = ((piece.origin(axis) + local[axis]) % size + size) % size;
          }
          config.solid[e.linear(i, j, k)] = whole.solid[whole.extent.linear(global[0], global[1], global[2])];
        }
  }
  return config;
}

NodeBox pieceBox(const Piece& piece) {
  NodeBox box;
  Index size[3];
  for (int axis = 0; axis < 3; ++axis) {
    box.lo[axis] = piece.lo[axis];
    size[axis] = piece.owned(axis) + (piece.coords[axis] + 1 < piece.dims[axis] ? 1 : 0);
  }
  box.size = Extent{size[0], size[1], size[2]};
  return box;
}

// The owned nodes' values of a local array (perNode values a node, node-major), in node order.
std::vector<float> ownedValues(const Piece& piece, const float* local, int perNode) {
  const Extent e = piece.localExtent();
  std::vector<float> owned;
  owned.reserve(static_cast<std::size_t>(piece.owned(0) * piece.owned(1) * piece.owned(2)) * perNode);
  for (Index k = piece.ownedBegin(2); k < piece.ownedEnd(2); ++k)
    for (Index j = piece.ownedBegin(1); j < piece.ownedEnd(1); ++j)
      for (Index i = piece.ownedBegin(0); i < piece.ownedEnd(0); ++i) {
        const float* values = local + e.linear(i, j, k) * perNode;
        owned.insert(owned.end(), values, values + perNode);
      }
  return owned;
}

}  // namespace octoflow::parallel
