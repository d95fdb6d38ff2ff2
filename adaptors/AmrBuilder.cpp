#include "AmrBuilder.hpp"

#include <vtkCellData.h>
#include <vtkFloatArray.h>
#include <vtkNew.h>
#include <vtkUniformGrid.h>
#include <vtkUnsignedCharArray.h>
#include <vtkDataSetAttributes.h>

#include <array>
#include <cmath>
#include <algorithm>
#include <map>

#include "common/Error.hpp"

namespace octoflow::adaptors {

namespace {

// A block's cell values: one vector a field (cells x components, x fastest).
struct CellBlock {
  std::vector<std::vector<float>> fields;
};

using BlockIndex = std::array<Index, 3>;  // origin / cells a side, at the block's level

// The cells of the block whose points come `slot`-th in `arrays`.
CellBlock cellsOfBlock(const sim::BlockGrid& grid, std::size_t slot, const std::vector<PointArray>& arrays) {
  const Index B = grid.blockNodes, C = B - 1;
  const std::size_t firstPoint = slot * static_cast<std::size_t>(grid.pointsPerBlock());
  CellBlock cells;
  for (const PointArray& array : arrays) {
    const int components = array.components;
    const float* points = array.values + firstPoint * static_cast<std::size_t>(components);
    std::vector<float> values(static_cast<std::size_t>(C * C * C * components));
    for (Index k = 0; k < C; ++k)
      for (Index j = 0; j < C; ++j)
        for (Index i = 0; i < C; ++i)
          for (int c = 0; c < components; ++c) {
            float sum = 0.0f;
            for (int corner = 0; corner < 8; ++corner) {
              const Index p = (i + (corner & 1)) + B * ((j + ((corner >> 1) & 1)) + B * (k + (corner >> 2)));
              sum += points[p * components + c];
            }
            values[static_cast<std::size_t>((i + C * (j + C * k)) * components + c)] = 0.125f * sum;
          }
    cells.fields.push_back(std::move(values));
  }
  return cells;
}

// The means of a finer block's cells, 2 x 2 x 2 at a time, into its octant `child` of `parent`.
void restrictInto(const CellBlock& fine, const std::vector<PointArray>& arrays, Index C, int child, CellBlock& parent) {
  const Index half = C / 2;
  const Index offset[3] = {(child & 1) * half, ((child >> 1) & 1) * half, (child >> 2) * half};
  for (std::size_t f = 0; f < arrays.size(); ++f) {
    const int components = arrays[f].components;
    std::vector<float>& out = parent.fields[f];
    const std::vector<float>& in = fine.fields[f];
    for (Index k = 0; k < half; ++k)
      for (Index j = 0; j < half; ++j)
        for (Index i = 0; i < half; ++i)
          for (int c = 0; c < components; ++c) {
            float sum = 0.0f;
            for (int corner = 0; corner < 8; ++corner) {
              const Index fi = 2 * i + (corner & 1), fj = 2 * j + ((corner >> 1) & 1), fk = 2 * k + (corner >> 2);
              sum += in[static_cast<std::size_t>((fi + C * (fj + C * fk)) * components + c)];
            }
            const Index cell = (offset[0] + i) + C * ((offset[1] + j) + C * (offset[2] + k));
            out[static_cast<std::size_t>(cell * components + c)] = 0.125f * sum;
          }
  }
}

// Every block of every level, by its index at its level (origin / cells a side): the leaves, and
// their ancestors, each the means of its 8 children.
struct Hierarchy {
  Index cells = 16;  // a block's cells a side
  std::vector<std::map<BlockIndex, CellBlock>> levels;

  // From the blocks `from` lists (block indices; `arrays` hold their points alone, in that order),
  // or every block when it is empty.
  Hierarchy(const sim::BlockGrid& grid, const std::vector<PointArray>& arrays, const std::vector<Index>& from)
      : cells(grid.blockNodes - 1) {
    levels.resize(static_cast<std::size_t>(grid.levels));
    const std::size_t count = from.empty() ? grid.blocks.size() : from.size();
    for (std::size_t n = 0; n < count; ++n) {
      const std::size_t b = from.empty() ? n : static_cast<std::size_t>(from[n]);
      const auto& block = grid.blocks[b];
      levels[static_cast<std::size_t>(block.level)][{block.origin[0] / cells, block.origin[1] / cells,
                                                     block.origin[2] / cells}] = cellsOfBlock(grid, n, arrays);
    }
    for (int level = grid.levels - 1; level > 0; --level)
      for (const auto& [index, blockCells] : levels[static_cast<std::size_t>(level)]) {
        const BlockIndex parentIndex{index[0] / 2, index[1] / 2, index[2] / 2};
        auto [parent, made] = levels[static_cast<std::size_t>(level - 1)].try_emplace(parentIndex);
        if (made)
          for (const PointArray& array : arrays)
            parent->second.fields.emplace_back(static_cast<std::size_t>(cells * cells * cells * array.components), 0.0f);
        const int child = static_cast<int>((index[0] & 1) | ((index[1] & 1) << 1) | ((index[2] & 1) << 2));
        restrictInto(blockCells, arrays, cells, child, parent->second);
      }
  }

  const CellBlock& blockAt(const sim::BlockGrid::Block& block) const {
    return levels[static_cast<std::size_t>(block.level)].at(
        {block.origin[0] / cells, block.origin[1] / cells, block.origin[2] / cells});
  }

  // The values of field `f` in cell `cell` of level `level` (cell indices of that level, wrapped
  // across periodic faces, clamped at walls), from the finest level at or below `level` that
  // holds it.
  const float* cellValues(const sim::BlockGrid& grid, int level, Index (&cell)[3], std::size_t f, int components) const {
    for (int axis = 0; axis < 3; ++axis) {
      const Index count = grid.domainCells[axis] << level;
      if (grid.periodic[axis])
        cell[axis] = ((cell[axis] % count) + count) % count;
      else
        cell[axis] = std::min(std::max<Index>(cell[axis], 0), count - 1);
    }
    for (int l = level; l >= 0; --l) {
      const int shift = level - l;
      const Index c[3] = {cell[0] >> shift, cell[1] >> shift, cell[2] >> shift};
      const auto found = levels[static_cast<std::size_t>(l)].find({c[0] / cells, c[1] / cells, c[2] / cells});
      if (found == levels[static_cast<std::size_t>(l)].end()) continue;
      const Index local = (c[0] % cells) + cells * ((c[1] % cells) + cells * (c[2] % cells));
      return found->second.fields[f].data() + local * components;
    }
    throw Error("AMR output: no block holds a cell of level " + std::to_string(level));
  }
};

// A block of `cells + 2 ghost` cells a side at `level` whose first interior cell is `first`
// (cell indices of its level): the ghost layer (vtkGhostType DUPLICATECELL) holds the values of
// the cells around the block, at its level where they exist, else from the coarser level.
vtkSmartPointer<vtkUniformGrid> makeBlock(const sim::BlockGrid& grid, int level, const Index (&first)[3], int ghost,
                                          const CellBlock& own, const Hierarchy& hierarchy,
                                          const std::vector<PointArray>& arrays) {
  const double spacing = std::ldexp(1.0, -level);
  const Index C = hierarchy.cells, side = C + 2 * ghost;
  auto block = vtkSmartPointer<vtkUniformGrid>::New();
  block->SetDimensions(static_cast<int>(side + 1), static_cast<int>(side + 1), static_cast<int>(side + 1));
  block->SetSpacing(spacing, spacing, spacing);
  block->SetOrigin((first[0] - ghost) * spacing, (first[1] - ghost) * spacing, (first[2] - ghost) * spacing);
  const vtkIdType count = static_cast<vtkIdType>(side * side * side);
  for (std::size_t f = 0; f < arrays.size(); ++f) {
    const int components = arrays[f].components;
    vtkNew<vtkFloatArray> array;
    array->SetName(arrays[f].name.c_str());
    array->SetNumberOfComponents(components);
    array->SetNumberOfTuples(count);
    float* out = array->GetPointer(0);
    for (Index k = 0; k < side; ++k)
      for (Index j = 0; j < side; ++j)
        for (Index i = 0; i < side; ++i) {
          const bool inside = i >= ghost && i < C + ghost && j >= ghost && j < C + ghost && k >= ghost && k < C + ghost;
          Index cell[3] = {first[0] - ghost + i, first[1] - ghost + j, first[2] - ghost + k};
          // The block's own cells directly; the ghost layer from the blocks around it.
          const float* values =
              inside ? own.fields[f].data() + ((i - ghost) + C * ((j - ghost) + C * (k - ghost))) * components
                     : hierarchy.cellValues(grid, level, cell, f, components);
          std::copy(values, values + components, out + (i + side * (j + side * k)) * components);
        }
    block->GetCellData()->AddArray(array);
    if (components == 1 && !block->GetCellData()->GetScalars()) block->GetCellData()->SetActiveScalars(arrays[f].name.c_str());
    if (components == 3 && !block->GetCellData()->GetVectors()) block->GetCellData()->SetActiveVectors(arrays[f].name.c_str());
  }
  if (ghost > 0) {
    vtkNew<vtkUnsignedCharArray> ghosts;
    ghosts->SetName(vtkDataSetAttributes::GhostArrayName());
    ghosts->SetNumberOfTuples(count);
    for (Index k = 0; k < side; ++k)
      for (Index j = 0; j < side; ++j)
        for (Index i = 0; i < side; ++i) {
          const bool inside = i >= ghost && i < side - ghost && j >= ghost && j < side - ghost && k >= ghost && k < side - ghost;
          ghosts->SetValue(i + side * (j + side * k), inside ? 0 : vtkDataSetAttributes::DUPLICATECELL);
        }
    block->GetCellData()->AddArray(ghosts);
  }
  return block;
}

std::vector<PointArray> present(const std::vector<PointArray>& arrays) {
  std::vector<PointArray> out;
  for (const PointArray& array : arrays)
    if (array.values) out.push_back(array);
  return out;
}

void checkGrid(const sim::BlockGrid& grid) {
  if (grid.blockNodes < 3 || (grid.blockNodes - 1) % 2 != 0 || grid.levels < 1)
    throw Error("AMR output needs blocks of an even number of cells a side (got " + std::to_string(grid.blockNodes) +
                " points) and at least one level");
  for (int axis = 0; axis < 3; ++axis)
    if (grid.domainCells[axis] <= 0 || grid.domainCells[axis] % (grid.blockNodes - 1) != 0)
      throw Error("AMR output needs the domain's level-0 cells, a multiple of the block's, on every axis");
}

}  // namespace

vtkSmartPointer<vtkNonOverlappingAMR> makeNonOverlappingAmr(const sim::BlockGrid& grid,
                                                            const std::vector<PointArray>& givenArrays, bool ownOnly) {
  checkGrid(grid);
  const std::vector<PointArray> arrays = present(givenArrays);
  // A rank's pieces: the values of its own blocks and of the blocks around them alone
  // (BlockGrid::valuesHeld).
  const Hierarchy hierarchy(grid, arrays, ownOnly ? grid.valuesHeld : std::vector<Index>{});
  std::vector<int> perLevel(static_cast<std::size_t>(grid.levels), 0);
  for (const auto& block : grid.blocks) ++perLevel[static_cast<std::size_t>(block.level)];
  auto amr = vtkSmartPointer<vtkNonOverlappingAMR>::New();
  amr->Initialize(grid.levels, perLevel.data());
  std::vector<unsigned> next(perLevel.size(), 0);
  const Index ownEnd = grid.ownEnd < 0 ? static_cast<Index>(grid.blocks.size()) : grid.ownEnd;
  for (std::size_t b = 0; b < grid.blocks.size(); ++b) {
    const auto& block = grid.blocks[b];
    const unsigned index = next[static_cast<std::size_t>(block.level)]++;
    const Index n = static_cast<Index>(b);
    if (ownOnly && (n < grid.ownFirst || n >= ownEnd)) continue;
    amr->SetDataSet(static_cast<unsigned>(block.level), index,
                    makeBlock(grid, block.level, block.origin, 1, hierarchy.blockAt(block), hierarchy, arrays));
  }
  return amr;
}

}  // namespace octoflow::adaptors
