#pragma once
// Cutting a whole uniform grid into pieces over a 3D grid of ranks: which nodes a piece owns,
// where it keeps ghost layers of its neighbours' nodes, and the solver configuration of a piece.
// No MPI here: the arithmetic is the same for every rank and testable alone.
#include <array>
#include <vector>

#include "common/Extent.hpp"
#include "lbm/UniformSolver.hpp"

namespace octoflow::parallel {

struct Piece {
  std::array<int, 3> dims{1, 1, 1};    // ranks per axis
  std::array<int, 3> coords{0, 0, 0};  // this piece's place among them
  std::array<Index, 3> lo{0, 0, 0};    // owned nodes [lo, hi), whole-grid coordinates
  std::array<Index, 3> hi{1, 1, 1};
  std::array<bool, 3> ghostLow{false, false, false};   // a ghost layer below lo (a neighbour there)
  std::array<bool, 3> ghostHigh{false, false, false};  // a ghost layer at hi

  Index owned(int axis) const { return hi[axis] - lo[axis]; }
  // The piece's grid: its owned nodes and its ghost layers.
  Extent localExtent() const;
  // Whole-grid coordinate of the piece's local node 0 along an axis.
  Index origin(int axis) const { return lo[axis] - (ghostLow[axis] ? 1 : 0); }
  // Local coordinate range of the owned nodes along an axis.
  Index ownedBegin(int axis) const { return ghostLow[axis] ? 1 : 0; }
  Index ownedEnd(int axis) const { return ownedBegin(axis) + owned(axis); }
};

// Ranks per axis for `ranks` ranks: prime factors, largest first, each to the axis whose pieces
// are longest, the slower axis on a tie (axes of one node are never cut).
std::array<int, 3> chooseDims(const Extent& whole, int ranks);

// The piece at `coords` of `dims`: as even a cut as the sizes allow. Periodic axes (a bit per
// axis) wrap, so the end pieces of a cut periodic axis have neighbours (and ghost layers) too.
// Throws an InputError (mpirun -np) when a cut axis leaves a piece fewer than 2 nodes.
Piece makePiece(const Extent& whole, unsigned periodicAxes, const std::array<int, 3>& dims,
                const std::array<int, 3>& coords);

// The box of a piece's nodes handed to ParaView (Catalyst pieces, .pvti): owned nodes plus the
// next piece's first layer along every axis where one follows (not across a periodic wrap), so
// neighbouring pieces share a layer and no cell is missing between them. Whole-grid coordinates.
NodeBox pieceBox(const Piece& piece);

// The owned nodes' values of a piece's local array (perNode values a node, node-major), in node order.
std::vector<float> ownedValues(const Piece& piece, const float* local, int perNode);

// The solver configuration of a piece: its extent with ghost layers, the whole grid's faces where
// the piece touches them (faces bordering ghost layers given as periodic), its part of the
// obstacle mask (ghost layers included, wrapped across periodic faces) and its placement.
lbm::UniformSolverConfig pieceConfig(const lbm::UniformSolverConfig& whole, const Piece& piece);

}  // namespace octoflow::parallel
