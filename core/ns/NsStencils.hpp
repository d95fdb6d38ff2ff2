#pragma once
// The 2D incompressible Navier-Stokes solver's grid and its point-wise physics, compiled for host
// and device: the CPU reference and the CUDA kernels call these same functions (docs/NS.md).
//
// Staggered (MAC) grid of nx x ny square cells of side h: the pressure p at cell centres
// ((i + 1/2) h, (j + 1/2) h), u on the x faces (i h, (j + 1/2) h), v on the y faces
// ((i + 1/2) h, j h). u and v are stored in padded arrays with kGhost layers all round (one layout
// for both: i from -kGhost to nx + kGhost, j from -kGhost to ny + kGhost); the ghost values are
// affine functions of the field's own values (boundary conditions), written by GhostFill.
// The multigrid's arrays (correction phi and its right-hand side, every level) are compact.
#include <cmath>

#include "common/Extent.hpp"
#include "common/Macros.hpp"

namespace octoflow::ns {

// The multigrid's phase functions run on host and device teams alike: the host team's launches
// are host code, the GPU block's barriers device code; each instantiation is used on its own side.
#if defined(__CUDACC__)
#define OCTO_TEAM_FUNCTION _Pragma("nv_exec_check_disable")
#else
#define OCTO_TEAM_FUNCTION
#endif

constexpr int kGhost = 2;  // the cubic interpolation's reach with departure points clamped to one cell beyond the grid
constexpr int kMaxLevels = 16;

// What bounds the domain on a side. Inflow: u = 1, v = 0 (west only). Outflow: convective
// (east only). Slip: no normal flow, no shear. Wall: no slip. Lid: a wall moving at velocity 1
// along the side (+x on south and north, +y on west and east). Periodic: both sides of an axis.
enum class SideKind : int { Periodic, Inflow, Outflow, Slip, Wall, Lid };
enum Side : int { kWest = 0, kEast = 1, kSouth = 2, kNorth = 3 };
enum Component : int { kU = 0, kV = 1 };

struct Geometry {
  int nx = 0, ny = 0;
  int pitch = 0;  // nx + 1 + 2 kGhost
  SideKind side[4] = {SideKind::Inflow, SideKind::Outflow, SideKind::Slip, SideKind::Slip};

  OCTO_HD int cells(int axis) const { return axis == 0 ? nx : ny; }
  OCTO_HD bool periodic(int axis) const { return side[2 * axis] == SideKind::Periodic; }
  OCTO_HD int at(int i, int j) const { return (j + kGhost) * pitch + i + kGhost; }
  // Values in a padded array.
  OCTO_HD int paddedCount() const { return pitch * (ny + 1 + 2 * kGhost); }
  // The last own index of a component along an axis: its faces 0..n along its own axis (n is the
  // periodic image of 0 on a periodic axis), cells 0..n-1 along the other.
  OCTO_HD int lastOwn(int component, int axis) const {
    const int n = cells(axis);
    return component == axis && !periodic(axis) ? n : n - 1;
  }
  OCTO_HD bool owns(int component, int i, int j) const {
    return i >= 0 && j >= 0 && i <= lastOwn(component, 0) && j <= lastOwn(component, 1);
  }
  // Whether a component's point is computed by the step (else it is a boundary face, whose value
  // the boundary condition gives).
  OCTO_HD bool computed(int component, int i, int j) const {
    if (!owns(component, i, j)) return false;
    if (periodic(component)) return true;
    const int along = component == 0 ? i : j;
    return along > 0 && along < cells(component);
  }
  // A cell index wrapped on a periodic axis, mirrored (the zero-gradient of the pressure and its
  // correction at every other side) elsewhere.
  OCTO_HD int cellIndex(int index, int axis) const {
    const int n = cells(axis);
    if (index < 0) return periodic(axis) ? index + n : -1 - index;
    if (index >= n) return periodic(axis) ? index - n : 2 * n - 1 - index;
    return index;
  }
};

// The normal velocity a side imposes (inflow 1, walls 0) and the tangential one (a lid 1).
OCTO_HD inline double normalVelocity(SideKind kind) { return kind == SideKind::Inflow ? 1.0 : 0.0; }
OCTO_HD inline double tangentialVelocity(SideKind kind) { return kind == SideKind::Lid ? 1.0 : 0.0; }

// A ghost value as offset + sign * (the value at the own point (i, j)).
struct GhostSource {
  int i = 0, j = 0;
  double offset = 0.0, sign = 1.0;
};

// Maps one coordinate of a ghost point of `component` onto its own range along `axis`.
OCTO_HD inline void mapGhostAxis(const Geometry& g, int component, int axis, int& index, double& offset, double& sign) {
  const int n = g.cells(axis), last = g.lastOwn(component, axis);
  if (index >= 0 && index <= last) return;
  offset = 0.0;
  sign = 1.0;
  if (g.periodic(axis)) {
    index = index < 0 ? index + n : index - n;
    return;
  }
  const bool low = index < 0;
  const SideKind kind = g.side[2 * axis + (low ? 0 : 1)];
  if (component == axis) {
    // The face-located component: its boundary face is own; beyond it, odd about the imposed
    // normal velocity (mass through the face as imposed), or, at an outflow, the face's value.
    if (kind == SideKind::Outflow) {
      index = low ? 0 : n;
      return;
    }
    index = low ? -index : 2 * n - index;
    offset = 2.0 * normalVelocity(kind);
    sign = -1.0;
    return;
  }
  // The cell-centred component: mirrored about the side, odd about the tangential velocity of a
  // no-slip side (wall, lid, inflow), even at a slip side and an outflow.
  index = low ? -1 - index : 2 * n - 1 - index;
  if (kind == SideKind::Slip || kind == SideKind::Outflow) return;
  offset = 2.0 * tangentialVelocity(kind);
  sign = -1.0;
}

OCTO_HD inline GhostSource ghostSource(const Geometry& g, int component, int i, int j) {
  GhostSource s{i, j, 0.0, 1.0};
  double offsetX = 0.0, signX = 1.0, offsetY = 0.0, signY = 1.0;
  mapGhostAxis(g, component, 0, s.i, offsetX, signX);
  mapGhostAxis(g, component, 1, s.j, offsetY, signY);
  s.offset = offsetX + signX * offsetY;
  s.sign = signX * signY;
  return s;
}

// Every ghost value of u and v from their own values (the padded box, lo = -kGhost).
template <class Real>
struct GhostFill {
  Geometry g;
  Real* u;
  Real* v;
  OCTO_HD void operator()(Index ii, Index jj, Index) const {
    const int i = static_cast<int>(ii), j = static_cast<int>(jj);
    Real* fields[2] = {u, v};
    for (int c = 0; c < 2; ++c) {
      if (g.owns(c, i, j)) continue;
      const GhostSource s = ghostSource(g, c, i, j);
      fields[c][g.at(i, j)] = static_cast<Real>(s.offset) + static_cast<Real>(s.sign) * fields[c][g.at(s.i, s.j)];
    }
  }
};

// Lagrange's cubic through the values at -1, 0, 1, 2, at t in [0, 1].
template <class Real>
OCTO_HD Real cubicLagrange(Real fm1, Real f0, Real f1, Real f2, Real t) {
  const Real a = t + Real(1), b = t - Real(1), c = t - Real(2);
  return (-t * b * c * fm1 + Real(3) * a * b * c * f0 - Real(3) * a * t * c * f1 + a * t * b * f2) / Real(6);
}

// The value of a padded field at position `x` (in index units) along `axis`, through the point
// (i, j) on the other axis; x is clamped to [-1, n] (one cell beyond the grid, where the ghost
// layers still give the four points).
template <class Real>
OCTO_HD Real cubicAlong(const Geometry& g, const Real* f, int axis, Real x, int i, int j) {
  const Real lowest = Real(-1), highest = static_cast<Real>(g.cells(axis));
  x = x < lowest ? lowest : (x > highest ? highest : x);
  int k = static_cast<int>(floor(x));
  if (k > g.cells(axis) - 1) k = g.cells(axis) - 1;
  const Real t = x - static_cast<Real>(k);
  const int stride = axis == 0 ? 1 : g.pitch;
  const Real* p = f + (axis == 0 ? g.at(k, j) : g.at(i, k));
  return cubicLagrange(p[-stride], p[0], p[stride], p[2 * stride], t);
}

// The first half of the advection: cubic semi-Lagrangian along x, departure points from the
// x-velocity at each point (at a v point, the mean of the four u around it). Boundary faces are
// copied. Launched over (nx + 1) x (ny + 1) points: u and v of each.
template <class Real>
struct AdvectX {
  Geometry g;
  Real courant;  // dt / h
  const Real* u;
  const Real* v;
  Real* uOut;
  Real* vOut;
  OCTO_HD void operator()(Index ii, Index jj, Index) const {
    const int i = static_cast<int>(ii), j = static_cast<int>(jj);
    if (g.owns(kU, i, j)) {
      const int at = g.at(i, j);
      uOut[at] = g.computed(kU, i, j) ? cubicAlong(g, u, 0, static_cast<Real>(i) - courant * u[at], i, j) : u[at];
    }
    if (g.owns(kV, i, j)) {
      const int at = g.at(i, j);
      if (g.computed(kV, i, j)) {
        const Real a = Real(0.25) * ((u[g.at(i, j - 1)] + u[g.at(i + 1, j - 1)]) + (u[at] + u[g.at(i + 1, j)]));
        vOut[at] = cubicAlong(g, v, 0, static_cast<Real>(i) - courant * a, i, j);
      } else {
        vOut[at] = v[at];
      }
    }
  }
};

// The rest of the predictor, point by point: the advection along y (departure points from the
// y-velocity of step n), explicit diffusion of step n's velocity, the pressure gradient of step n
// (SMAC), and the obstacle's penalisation: the velocity is multiplied by 1 - chi (chi the solid
// fraction of the point), and the momentum taken, chi u* h^2 / dt, is the force on the body there.
template <class Real>
struct Predict {
  Geometry g;
  Real courant;    // dt / h
  Real diffusion;  // nu dt / h^2
  const Real* u;   // step n (ghosts filled)
  const Real* v;
  const Real* uX;  // after AdvectX (ghosts filled)
  const Real* vX;
  const Real* p;   // compact nx x ny
  const Real* chiU;  // solid fractions (null: no obstacle)
  const Real* chiV;
  Real forceScale;   // h^2 / dt
  Real* uStar;
  Real* vStar;
  Real* forceU;  // written where chi > 0
  Real* forceV;

  OCTO_HD Real pressure(int i, int j) const { return p[g.cellIndex(j, 1) * g.nx + g.cellIndex(i, 0)]; }
  OCTO_HD Real laplacian(const Real* f, int at) const {
    return (f[at - 1] + f[at + 1]) + (f[at - g.pitch] + f[at + g.pitch]) - Real(4) * f[at];
  }
  OCTO_HD Real penalise(const Real* chi, Real* force, int at, Real value) const {
    if (!chi) return value;
    const Real c = chi[at];
    if (c > Real(0)) force[at] = c * value * forceScale;
    return (Real(1) - c) * value;
  }
  OCTO_HD void operator()(Index ii, Index jj, Index) const {
    const int i = static_cast<int>(ii), j = static_cast<int>(jj);
    if (g.owns(kU, i, j)) {
      const int at = g.at(i, j);
      if (g.computed(kU, i, j)) {
        const Real a = Real(0.25) * ((v[g.at(i - 1, j)] + v[at]) + (v[g.at(i - 1, j + 1)] + v[g.at(i, j + 1)]));
        Real value = cubicAlong(g, uX, 1, static_cast<Real>(j) - courant * a, i, j);
        value += diffusion * laplacian(u, at) - courant * (pressure(i, j) - pressure(i - 1, j));
        uStar[at] = penalise(chiU, forceU, at, value);
      } else {
        uStar[at] = u[at];
      }
    }
    if (g.owns(kV, i, j)) {
      const int at = g.at(i, j);
      if (g.computed(kV, i, j)) {
        Real value = cubicAlong(g, vX, 1, static_cast<Real>(j) - courant * v[at], i, j);
        value += diffusion * laplacian(v, at) - courant * (pressure(i, j) - pressure(i, j - 1));
        vStar[at] = penalise(chiV, forceV, at, value);
      } else {
        vStar[at] = v[at];
      }
    }
  }
};

// The outflow's convective condition du/dt + U du/dx = 0 on the east faces (upwind, U = 1).
template <class Real>
struct OutflowAdvance {
  Geometry g;
  Real courant;
  Real* u;
  OCTO_HD void operator()(Index jj) const {
    const int j = static_cast<int>(jj), at = g.at(g.nx, j);
    u[at] -= courant * (u[at] - u[at - 1]);
  }
};
// ... and the same shift on every east face, so that as much leaves as enters (the pressure
// equation's compatibility): sums[0] the inflow (west faces), sums[1] the outflow (east faces).
template <class Real>
struct OutflowBalance {
  Geometry g;
  const double* sums;
  Real* u;
  OCTO_HD void operator()(Index jj) const {
    const int j = static_cast<int>(jj);
    u[g.at(g.nx, j)] += static_cast<Real>((sums[0] - sums[1]) / static_cast<double>(g.ny));
  }
};
template <class Real>
struct BoundaryFace {
  Geometry g;
  const Real* u;
  int i;
  OCTO_HD double operator()(Index, Index j) const { return static_cast<double>(u[g.at(i, static_cast<int>(j))]); }
};

// ---- Pressure: a correction phi with laplacian(phi) = div(u*) / dt, on compact levels ----
template <class Real>
struct Level {
  int nx = 0, ny = 0;
  bool periodicX = false, periodicY = false;
  Real* phi = nullptr;
  Real* rhs = nullptr;  // h^2 div(u*) / dt on level 0; restricted residuals below
  OCTO_HD int neighbour(int index, int n, bool periodic) const {
    if (index < 0) return periodic ? index + n : 0;  // zero gradient: the ghost equals the cell
    if (index >= n) return periodic ? index - n : n - 1;
    return index;
  }
  OCTO_HD Real neighbourSum(int i, int j) const {
    const int w = neighbour(i - 1, nx, periodicX), e = neighbour(i + 1, nx, periodicX);
    const int s = neighbour(j - 1, ny, periodicY), n = neighbour(j + 1, ny, periodicY);
    return (phi[j * nx + w] + phi[j * nx + e]) + (phi[s * nx + i] + phi[n * nx + i]);
  }
  // b - (sum of the neighbours - 4 phi): the residual of the 5-point equation.
  OCTO_HD Real residual(int i, int j) const {
    return rhs[j * nx + i] - (neighbourSum(i, j) - Real(4) * phi[j * nx + i]);
  }
};

template <class Real>
struct LevelSet {
  Level<Real> level[kMaxLevels];
  int count = 0;
};

// The right-hand side of level 0 from the predicted velocity, and phi = 0 (cells).
template <class Real>
struct Divergence {
  Geometry g;
  Real scale;  // h / dt
  const Real* uStar;
  const Real* vStar;
  Level<Real> level;
  OCTO_HD void operator()(Index ii, Index jj, Index) const {
    const int i = static_cast<int>(ii), j = static_cast<int>(jj);
    const int east = g.periodic(0) && i + 1 == g.nx ? 0 : i + 1;
    const int north = g.periodic(1) && j + 1 == g.ny ? 0 : j + 1;
    const Real div = (uStar[g.at(east, j)] - uStar[g.at(i, j)]) + (vStar[g.at(i, north)] - vStar[g.at(i, j)]);
    level.rhs[j * g.nx + i] = scale * div;
    level.phi[j * g.nx + i] = Real(0);
  }
};

// The pressure equation with no Dirichlet side is singular: its right-hand side must sum to zero.
// The outflow's balance makes it so up to rounding; the rounding's mean is taken out, else it
// would stay in the residual whatever the cycles do.
template <class Real>
struct CellValue {  // of a compact nx x ny array
  int nx;
  const Real* values;
  OCTO_HD double operator()(Index i, Index j) const { return static_cast<double>(values[j * nx + i]); }
};
template <class Real>
struct RemoveMean {
  Level<Real> level;
  const double* sum;
  OCTO_HD void operator()(Index i, Index j, Index) const {
    level.rhs[j * level.nx + i] -= static_cast<Real>(*sum / (static_cast<double>(level.nx) * level.ny));
  }
};

// Red-black SOR: one colour's cells ((i + j) % 2 == colour), launched over (nx + 1) / 2 x ny.
template <class Real>
struct SorColour {
  Level<Real> level;
  int colour;
  Real omega;
  OCTO_HD void operator()(Index ii, Index jj, Index) const {
    const int j = static_cast<int>(jj), i = 2 * static_cast<int>(ii) + ((j + colour) & 1);
    if (i >= level.nx) return;
    Real& phi = level.phi[j * level.nx + i];
    phi += omega * ((level.neighbourSum(i, j) - level.rhs[j * level.nx + i]) * Real(0.25) - phi);
  }
};

// The coarse level's right-hand side: the sum of the residuals of its four fine cells (the mean
// residual times (2h)^2 / h^2); its phi = 0. Launched over the coarse cells.
template <class Real>
struct RestrictResidual {
  Level<Real> fine, coarse;
  OCTO_HD void operator()(Index ii, Index jj, Index) const {
    const int i = static_cast<int>(ii), j = static_cast<int>(jj);
    const Real sum = (fine.residual(2 * i, 2 * j) + fine.residual(2 * i + 1, 2 * j)) +
                     (fine.residual(2 * i, 2 * j + 1) + fine.residual(2 * i + 1, 2 * j + 1));
    coarse.rhs[j * coarse.nx + i] = sum;
    coarse.phi[j * coarse.nx + i] = Real(0);
  }
};

// The coarse correction interpolated bilinearly (weights 9, 3, 3, 1 / 16) onto the fine cells.
template <class Real>
struct ProlongCorrection {
  Level<Real> fine, coarse;
  OCTO_HD Real correction(int i, int j) const {
    const int ci = i >> 1, cj = j >> 1;
    const int ni = coarse.neighbour(ci + ((i & 1) ? 1 : -1), coarse.nx, coarse.periodicX);
    const int nj = coarse.neighbour(cj + ((j & 1) ? 1 : -1), coarse.ny, coarse.periodicY);
    const Real* c = coarse.phi;
    const int cx = coarse.nx;
    return (Real(9) * c[cj * cx + ci] + Real(3) * (c[cj * cx + ni] + c[nj * cx + ci]) + c[nj * cx + ni]) * Real(0.0625);
  }
  OCTO_HD void operator()(Index ii, Index jj, Index) const {
    const int i = static_cast<int>(ii), j = static_cast<int>(jj);
    fine.phi[j * fine.nx + i] += correction(i, j);
  }
};

template <class Real>
struct SquaredResidual {
  Level<Real> level;
  OCTO_HD double operator()(Index i, Index j) const {
    const double r = static_cast<double>(level.residual(static_cast<int>(i), static_cast<int>(j)));
    return r * r;
  }
};

// The projection: u = u* - dt grad(phi) on the computed points, p += phi.
template <class Real>
struct Project {
  Geometry g;
  Real courant;  // dt / h
  const Real* uStar;
  const Real* vStar;
  const Real* phi;  // compact level 0
  Real* u;
  Real* v;
  Real* p;
  OCTO_HD Real correction(int i, int j) const { return phi[g.cellIndex(j, 1) * g.nx + g.cellIndex(i, 0)]; }
  OCTO_HD void operator()(Index ii, Index jj, Index) const {
    const int i = static_cast<int>(ii), j = static_cast<int>(jj);
    if (g.owns(kU, i, j)) {
      const int at = g.at(i, j);
      u[at] = g.computed(kU, i, j) ? uStar[at] - courant * (correction(i, j) - correction(i - 1, j)) : uStar[at];
    }
    if (g.owns(kV, i, j)) {
      const int at = g.at(i, j);
      v[at] = g.computed(kV, i, j) ? vStar[at] - courant * (correction(i, j) - correction(i, j - 1)) : vStar[at];
    }
    if (i < g.nx && j < g.ny) p[j * g.nx + i] += phi[j * g.nx + i];
  }
};

// The multigrid's phases on a level, for a team of threads that meet at barriers: the V-cycle
// below a level runs inside one GPU block (Team: its threads, __syncthreads) or on one CPU thread.
OCTO_TEAM_FUNCTION
template <class Real, class Team>
OCTO_HD void smooth(Team& team, const Level<Real>& level, int sweeps, Real omega) {
  for (int s = 0; s < sweeps; ++s)
    for (int colour = 0; colour < 2; ++colour) {
      team.forEach((level.nx + 1) / 2, level.ny, SorColour<Real>{level, colour, omega});
      team.barrier();
    }
}

struct CycleShape {
  int preSmoothing = 1, postSmoothing = 2;  // the fastest to 1e-5 of (2,2) (2,1) (1,2) (1,1) at 1024 x 512 (docs/PERFORMANCE.md)
  int coarsestSweeps = 0;  // red-black sweeps on the coarsest level (its exact solve)
  double omega = 1.15;
  double coarsestOmega = 1.5;
};

// A level's way down (pre-smoothing, then the coarse level's right-hand side from its residuals)
// and up (the coarse correction added, then post-smoothing).
OCTO_TEAM_FUNCTION
template <class Real, class Team>
OCTO_HD void smoothThenRestrict(Team& team, const Level<Real>& fine, const Level<Real>& coarse, int sweeps, Real omega) {
  smooth(team, fine, sweeps, omega);
  team.forEach(coarse.nx, coarse.ny, RestrictResidual<Real>{fine, coarse});
  team.barrier();
}
OCTO_TEAM_FUNCTION
template <class Real, class Team>
OCTO_HD void prolongThenSmooth(Team& team, const Level<Real>& fine, const Level<Real>& coarse, int sweeps, Real omega) {
  team.forEach(fine.nx, fine.ny, ProlongCorrection<Real>{fine, coarse});
  team.barrier();
  smooth(team, fine, sweeps, omega);
}

// The V-cycle from level `first` down to the coarsest.
OCTO_TEAM_FUNCTION
template <class Real, class Team>
OCTO_HD void vCycleFrom(Team& team, const LevelSet<Real>& levels, int first, const CycleShape& shape) {
  const int last = levels.count - 1;
  const Real omega = static_cast<Real>(shape.omega);
  for (int l = first; l < last; ++l)
    smoothThenRestrict(team, levels.level[l], levels.level[l + 1], shape.preSmoothing, omega);
  smooth(team, levels.level[last], shape.coarsestSweeps, static_cast<Real>(shape.coarsestOmega));
  for (int l = last - 1; l >= first; --l)
    prolongThenSmooth(team, levels.level[l], levels.level[l + 1], shape.postSmoothing, omega);
}

// The fields at the cell centres (the output grid's nodes): velocity (xyz, z = 0), pressure (less
// its mean over the domain: the equations fix it up to a constant) and the vorticity dv/dx - du/dy
// (the mean of the four corner values around the centre).
template <class Real>
struct CentreFields {
  Geometry g;
  Real inverseH;
  const Real* u;  // ghosts filled
  const Real* v;
  const Real* p;
  const double* pressureSum;  // of p over the cells
  float* velocity;  // null: not wanted
  float* pressure;
  float* vorticity;
  OCTO_HD Real cornerVorticity(int i, int j) const {  // at (i h, j h)
    return (v[g.at(i, j)] - v[g.at(i - 1, j)]) - (u[g.at(i, j)] - u[g.at(i, j - 1)]);
  }
  OCTO_HD void operator()(Index ii, Index jj, Index) const {
    const int i = static_cast<int>(ii), j = static_cast<int>(jj), cell = j * g.nx + i;
    if (velocity) {
      velocity[3 * cell] = static_cast<float>(Real(0.5) * (u[g.at(i, j)] + u[g.at(i + 1, j)]));
      velocity[3 * cell + 1] = static_cast<float>(Real(0.5) * (v[g.at(i, j)] + v[g.at(i, j + 1)]));
      velocity[3 * cell + 2] = 0.0f;
    }
    if (pressure)
      pressure[cell] = static_cast<float>(static_cast<double>(p[cell]) - *pressureSum / (static_cast<double>(g.nx) * g.ny));
    if (vorticity)
      vorticity[cell] = static_cast<float>(Real(0.25) * inverseH *
                                           ((cornerVorticity(i, j) + cornerVorticity(i + 1, j)) +
                                            (cornerVorticity(i, j + 1) + cornerVorticity(i + 1, j + 1))));
  }
};

// Sums for the diagnostics, point by point (a deterministic reduction adds them up).
template <class Real>
struct ArraySum {  // a padded array over the points [lo, lo + size)
  Geometry g;
  const Real* values;
  int loI, loJ;
  OCTO_HD double operator()(Index i, Index j) const {
    return static_cast<double>(values[g.at(loI + static_cast<int>(i), loJ + static_cast<int>(j))]);
  }
};
template <class Real>
struct KineticEnergy {  // (u^2 + v^2) / 2 h^2 of a cell, from its centre velocity
  Geometry g;
  const Real* u;
  const Real* v;
  double area;
  OCTO_HD double operator()(Index ii, Index jj) const {
    const int i = static_cast<int>(ii), j = static_cast<int>(jj);
    const double uc = 0.5 * static_cast<double>(u[g.at(i, j)] + u[g.at(i + 1, j)]);
    const double vc = 0.5 * static_cast<double>(v[g.at(i, j)] + v[g.at(i, j + 1)]);
    return 0.5 * (uc * uc + vc * vc) * area;
  }
};

}  // namespace octoflow::ns
