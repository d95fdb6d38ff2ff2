#pragma once
// What the 2D Navier-Stokes solver runs (parsed from a case's [ns] section by NsCase.cpp), and the
// engine interface its CPU and CUDA executions implement (docs/NS.md).
#include <array>
#include <memory>
#include <vector>

#include "common/Extent.hpp"
#include "exec/Backend.hpp"
#include "ns/NsStencils.hpp"
#include "sim/StepTimeline.hpp"

namespace octoflow::ns {

enum class Precision { Fp32, Fp64 };
enum class InitialFlow { Rest, Uniform, TaylorGreen };

struct MultigridSettings {
  int levels = 0;           // at most this many levels (0: as many as the grid halves into)
  double tolerance = 1e-5;  // cycles until the residual's 2-norm is this fraction of the first
  int maxCycles = 40;
  CycleShape shape;
  // Levels of at most this many cells run their part of a V-cycle inside one GPU block, in one
  // launch (the launches of small grids cost more than their work).
  int blockCells = 4096;  // the fastest of 0 to 16384 at 1024 x 512 (H100; docs/PERFORMANCE.md)
};

// Case units: the reference velocity is 1 (the inflow, the lid, the Taylor-Green amplitude) and
// so is the reference length (the cylinder's diameter, the cavity's side), so nu = 1 / Re.
struct NsConfig {
  Geometry geometry;  // nx, ny and the sides (pitch filled by the engine)
  double h = 1.0;     // the cells' side
  double dt = 0.01;
  double viscosity = 0.01;
  bool cylinder = false;
  std::array<double, 2> cylinderCentre{0.0, 0.0};
  double cylinderDiameter = 1.0;
  InitialFlow initial = InitialFlow::Uniform;
  double perturbation = 0.0;  // a small v behind the cylinder at step 0, so that the wake goes unsymmetric
  MultigridSettings multigrid;
  Precision precision = Precision::Fp32;
};

// The sizes of the multigrid's levels: halved while both sides are even (and stay even along a
// periodic axis), at least 2 cells, and the settings allow.
std::vector<std::array<int, 2>> multigridLevels(const NsConfig& config);
// The fraction of the square of side h around (x, y) that the cylinder covers (0 without one):
// from the signed distance, linear over one cell.
double solidFraction(const NsConfig& config, double x, double y);

struct PoissonReport {
  int cycles = 0;
  double initialResidual = 0.0;  // 2-norm of the right-hand side (phi = 0)
  double finalResidual = 0.0;
  // The mean reduction a cycle: (final / initial)^(1 / cycles).
  double convergenceFactor() const;
};

// The staggered fields of a checkpoint: u ((nx + 1) x ny), v (nx x (ny + 1)), p (nx x ny), raw
// values of the solver's precision; and the V-cycles the next step starts with.
struct NsStateArrays {
  std::vector<unsigned char> u, v, p;
  int plannedCycles = 1;
};

class NsEngine {
public:
  virtual ~NsEngine() = default;
  virtual void initialize() = 0;  // the initial flow, step 0
  virtual void advance(Index steps) = 0;
  virtual Index step() const = 0;
  // The cell-centre fields (working memory, nx x ny; null: not wanted).
  virtual void centreFields(float* velocity, float* pressure, float* vorticity) = 0;
  // The force the last step's penalisation took from the flow, per unit depth (x, y), and the
  // kinetic energy of the flow now.
  virtual std::array<double, 2> force() = 0;
  virtual double kineticEnergy() = 0;
  virtual const PoissonReport& poisson() const = 0;
  // Each step's cycle count since the last call (for benches), then cleared.
  virtual std::vector<int> takeCycleCounts() = 0;
  virtual int valueBytes() const = 0;
  virtual NsStateArrays saveState() const = 0;
  virtual void restoreState(const NsStateArrays& state, Index step) = 0;
  virtual void recordTimeline(Index step) = 0;
  virtual const std::vector<sim::TimelineMark>& timeline() const = 0;
};

std::unique_ptr<NsEngine> makeNsEngine(const NsConfig& config, exec::Backend backend);

}  // namespace octoflow::ns
