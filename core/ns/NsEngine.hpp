#pragma once
// The 2D Navier-Stokes step on one backend (docs/NS.md), written once over the execution queues:
// NsCpu.cpp instantiates it with the CPU's, NsCuda.cu with CUDA's, each after defining
// NsBackend<Queues> (a deterministic sum; the V-cycle's part below `blockCells` in one go; graphs
// of queued work).
//
// A step (SMAC): the outflow faces advance and are balanced against the inflow; ghosts; the
// advection along x; ghosts; the predictor (advection along y, diffusion, grad p of step n, the
// obstacle's penalisation); the divergence; V-cycles until the residual is `tolerance` of the
// first; the projection.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "common/Error.hpp"
#include "exec/Memory.hpp"
#include "ns/NsConfig.hpp"

namespace octoflow::ns {

template <class Queues>
struct NsBackend;

namespace detail {

// The fine levels' phases as launches on the compute queue (the queue keeps them in order).
template <class Executor>
struct QueueTeam {
  const Executor& executor;
  template <class F>
  void forEach(int width, int height, const F& f) {
    executor.parallelFor3(Extent{width, height, 1}, f);
  }
  void barrier() {}
};

template <class Queues, class Real>
class NsEngineFor final : public NsEngine {
public:
  using Backend = NsBackend<Queues>;

  explicit NsEngineFor(const NsConfig& config) : config_(config), g_(config.geometry) {
    g_.pitch = g_.nx + 1 + 2 * kGhost;
    const exec::MemorySpace space = exec::workingSpace(Backend::backend);
    const auto padded = static_cast<std::size_t>(g_.paddedCount());
    for (exec::Buffer<Real>* field : {&u_, &v_, &uX_, &vX_, &uStar_, &vStar_}) *field = exec::Buffer<Real>(space, padded);
    p_ = exec::Buffer<Real>(space, static_cast<std::size_t>(g_.nx) * g_.ny);
    if (config_.cylinder)
      for (exec::Buffer<Real>* field : {&chiU_, &chiV_, &forceU_, &forceV_}) *field = exec::Buffer<Real>(space, padded);
    const std::vector<std::array<int, 2>> sizes = multigridLevels(config_);
    levels_.count = static_cast<int>(sizes.size());
    blockFirst_ = levels_.count - 1;
    for (int l = 0; l < levels_.count; ++l) {
      const auto cells = static_cast<std::size_t>(sizes[l][0]) * sizes[l][1];
      phi_.emplace_back(space, cells);
      rhs_.emplace_back(space, cells);
      Level<Real>& level = levels_.level[l];
      level.nx = sizes[l][0];
      level.ny = sizes[l][1];
      level.periodicX = g_.periodic(0);
      level.periodicY = g_.periodic(1);
      level.phi = phi_.back().data();
      level.rhs = rhs_.back().data();
      if (static_cast<int>(cells) <= config_.multigrid.blockCells) blockFirst_ = std::min(blockFirst_, l);
    }
    shape_ = config_.multigrid.shape;
    if (shape_.coarsestSweeps == 0) shape_.coarsestSweeps = 2 * (sizes.back()[0] + sizes.back()[1]) + 8;
    sums_ = exec::Buffer<double>(space, kSumSlots + static_cast<std::size_t>(config_.multigrid.maxCycles) + 1 +
                                            std::max<std::size_t>(static_cast<std::size_t>(g_.ny) + 1, 1024));
  }

  void initialize() override {
    const auto padded = static_cast<std::size_t>(g_.paddedCount());
    std::vector<Real> u(padded, Real(0)), v(padded, Real(0)), p(static_cast<std::size_t>(g_.nx) * g_.ny, Real(0));
    const double h = config_.h;
    for (int j = 0; j <= g_.ny; ++j)
      for (int i = 0; i <= g_.nx; ++i) {
        for (int c = 0; c < 2; ++c) {
          if (!g_.owns(c, i, j)) continue;
          const double x = (i + (c == kU ? 0.0 : 0.5)) * h, y = (j + (c == kV ? 0.0 : 0.5)) * h;
          double value = 0.0;
          if (config_.initial == InitialFlow::TaylorGreen)
            value = c == kU ? std::sin(x) * std::cos(y) : -std::cos(x) * std::sin(y);
          else if (config_.initial == InitialFlow::Uniform && c == kU)
            value = 1.0;
          if (c == kV && config_.cylinder && config_.perturbation != 0.0) {
            // A bump of v one diameter behind the cylinder.
            const double d = config_.cylinderDiameter;
            const double dx = (x - config_.cylinderCentre[0] - d) / d, dy = (y - config_.cylinderCentre[1]) / d;
            value += config_.perturbation * std::exp(-(dx * dx + dy * dy));
          }
          if (!g_.computed(c, i, j)) {  // a boundary face: the normal velocity its side imposes
            const int along = c == kU ? i : j;
            const SideKind kind = g_.side[2 * c + (along == 0 ? 0 : 1)];
            if (kind != SideKind::Outflow) value = normalVelocity(kind);
          }
          (c == kU ? u : v)[static_cast<std::size_t>(g_.at(i, j))] = static_cast<Real>(value);
        }
        if (i < g_.nx && j < g_.ny && config_.initial == InitialFlow::TaylorGreen) {
          const double x = (i + 0.5) * h, y = (j + 0.5) * h;
          p[static_cast<std::size_t>(j) * g_.nx + i] = static_cast<Real>(0.25 * (std::cos(2.0 * x) + std::cos(2.0 * y)));
        }
      }
    u_.copyFrom(u.data(), padded);
    v_.copyFrom(v.data(), padded);
    p_.copyFrom(p.data(), p.size());
    // The step's work arrays: every own point is written before it is read, the ghosts after it.
    for (exec::Buffer<Real>* field : {&uX_, &vX_, &uStar_, &vStar_}) field->setZero();
    if (config_.cylinder) initializeObstacle();
    step_ = 0;
  }

  void advance(Index steps) override {
    for (Index s = 0; s < steps; ++s) stepOnce();
  }
  Index step() const override { return step_; }

  void centreFields(float* velocity, float* pressure, float* vorticity) override {
    fillGhosts(u_.data(), v_.data());
    Backend::sum(queues_.compute, g_.nx, g_.ny, CellValue<Real>{g_.nx, p_.data()}, sums_.data() + 6, scratch());
    queues_.compute.parallelFor3(Extent{g_.nx, g_.ny, 1},
                                 CentreFields<Real>{g_, static_cast<Real>(1.0 / config_.h), u_.data(), v_.data(),
                                                    p_.data(), sums_.data() + 6, velocity, pressure, vorticity});
    queues_.compute.synchronize();
  }

  std::array<double, 2> force() override {
    if (!config_.cylinder) return {0.0, 0.0};
    for (int c = 0; c < 2; ++c) {
      const int* box = forceBox_[c];
      Backend::sum(queues_.compute, box[2], box[3],
                   ArraySum<Real>{g_, (c == kU ? forceU_ : forceV_).data(), box[0], box[1]}, sums_.data() + c,
                   scratch());
    }
    std::array<double, 2> sums{};
    exec::copyBytes(sums.data(), sums_.data(), sizeof sums);  // one wait for both
    return sums;
  }

  double kineticEnergy() override {
    fillGhosts(u_.data(), v_.data());
    Backend::sum(queues_.compute, g_.nx, g_.ny, KineticEnergy<Real>{g_, u_.data(), v_.data(), config_.h * config_.h},
                 sums_.data(), scratch());
    return readSum(0);
  }

  const PoissonReport& poisson() const override { return report_; }
  std::vector<int> takeCycleCounts() override {
    std::vector<int> counts;
    counts.swap(cycleCounts_);
    return counts;
  }
  int valueBytes() const override { return static_cast<int>(sizeof(Real)); }

  NsStateArrays saveState() const override {
    NsStateArrays state;
    state.u = ownValues(u_, kU);
    state.v = ownValues(v_, kV);
    state.p.resize(p_.bytes());
    p_.copyTo(reinterpret_cast<Real*>(state.p.data()), p_.size());
    state.plannedCycles = plannedCycles_;
    return state;
  }

  void restoreState(const NsStateArrays& state, Index step) override {
    const auto padded = static_cast<std::size_t>(g_.paddedCount());
    std::vector<Real> host(padded, Real(0));
    for (int c = 0; c < 2; ++c) {
      const std::vector<unsigned char>& bytes = c == kU ? state.u : state.v;
      const int width = g_.nx + (c == kU ? 1 : 0), height = g_.ny + (c == kV ? 1 : 0);
      for (int j = 0; j < height; ++j)
        std::memcpy(&host[static_cast<std::size_t>(g_.at(0, j))], bytes.data() + sizeof(Real) * j * width,
                    sizeof(Real) * width);
      (c == kU ? u_ : v_).copyFrom(host.data(), padded);
    }
    p_.copyFrom(reinterpret_cast<const Real*>(state.p.data()), p_.size());
    plannedCycles_ = state.plannedCycles;
    step_ = step;
  }

  void recordTimeline(Index step) override { timeline_.choose(step); }
  const std::vector<sim::TimelineMark>& timeline() const override { return timeline_.marks(); }

private:
  static constexpr std::size_t kSumSlots = 8;

  double* norms() { return sums_.data() + kSumSlots; }  // maxCycles + 1 squared residual norms
  double* scratch() { return norms() + config_.multigrid.maxCycles + 1; }
  double readSum(int slot) {
    double value = 0.0;
    exec::copyBytes(&value, sums_.data() + slot, sizeof value);
    return value;
  }
  void fillGhosts(Real* u, Real* v) {
    const int side = kGhost;
    queues_.compute.parallelFor3(NodeBox{{-side, -side, 0}, Extent{g_.pitch, g_.ny + 1 + 2 * side, 1}}, GhostFill<Real>{g_, u, v});
  }
  void mark(const char* what) {
    if (timeline_.mark(what, false)) queues_.markTimeline(false);
  }
  void vCycle() {
    detail::QueueTeam<decltype(queues_.compute)> team{queues_.compute};
    const Real omega = static_cast<Real>(shape_.omega);
    for (int l = 0; l < blockFirst_; ++l)
      smoothThenRestrict(team, levels_.level[l], levels_.level[l + 1], shape_.preSmoothing, omega);
    Backend::coarseCycle(queues_.compute, levels_, blockFirst_, shape_);
    for (int l = blockFirst_ - 1; l >= 0; --l)
      prolongThenSmooth(team, levels_.level[l], levels_.level[l + 1], shape_.postSmoothing, omega);
  }

  // Queues a step up to the projection: the boundary faces, the predictor, the pressure
  // equation's right-hand side and `cycles` V-cycles, each cycle's residual norm (squared) in the
  // norm slots (slot 0: the right-hand side's). The same work every step: CUDA replays it as a graph.
  void queuePredictorAndCycles(int cycles) {
    const auto& ex = queues_.compute;
    const Real courant = static_cast<Real>(config_.dt / config_.h);
    if (g_.side[kEast] == SideKind::Outflow) {
      ex.parallelFor(g_.ny, OutflowAdvance<Real>{g_, courant, u_.data()});
      Backend::sum(ex, 1, g_.ny, BoundaryFace<Real>{g_, u_.data(), 0}, sums_.data() + 4, scratch());
      Backend::sum(ex, 1, g_.ny, BoundaryFace<Real>{g_, u_.data(), g_.nx}, sums_.data() + 5, scratch());
      ex.parallelFor(g_.ny, OutflowBalance<Real>{g_, sums_.data() + 4, u_.data()});
    }
    fillGhosts(u_.data(), v_.data());
    const Extent points{g_.nx + 1, g_.ny + 1, 1};
    ex.parallelFor3(points, AdvectX<Real>{g_, courant, u_.data(), v_.data(), uX_.data(), vX_.data()});
    fillGhosts(uX_.data(), vX_.data());
    mark("advection along x");
    const Real diffusion = static_cast<Real>(config_.viscosity * config_.dt / (config_.h * config_.h));
    ex.parallelFor3(points, Predict<Real>{g_, courant, diffusion, u_.data(), v_.data(), uX_.data(), vX_.data(), p_.data(),
                                          chiU_.data(), chiV_.data(), static_cast<Real>(config_.h * config_.h / config_.dt),
                                          uStar_.data(), vStar_.data(), forceU_.data(), forceV_.data()});
    mark("advection along y, diffusion, pressure gradient, obstacle");
    ex.parallelFor3(Extent{g_.nx, g_.ny, 1}, Divergence<Real>{g_, static_cast<Real>(config_.h / config_.dt), uStar_.data(),
                                                             vStar_.data(), levels_.level[0]});
    Backend::sum(ex, g_.nx, g_.ny, CellValue<Real>{g_.nx, levels_.level[0].rhs}, sums_.data() + 3, scratch());
    ex.parallelFor3(Extent{g_.nx, g_.ny, 1}, RemoveMean<Real>{levels_.level[0], sums_.data() + 3});
    queueResidualNorm(0);
    for (int cycle = 1; cycle <= cycles; ++cycle) {
      vCycle();
      if (cycle >= cycles - 1) queueResidualNorm(cycle);  // the last two: did the plan need them all?
    }
  }
  void queueResidualNorm(int slot) {
    Backend::sum(queues_.compute, levels_.level[0].nx, levels_.level[0].ny, SquaredResidual<Real>{levels_.level[0]},
                 norms() + slot, scratch());
  }

  // Each step runs the cycles the last one needed (at least one) without looking, then more, one
  // by one, until the residual is within tolerance: every step meets it, and the host waits for
  // the GPU once a step (not once a cycle). One cycle fewer is planned next when the last but one
  // was already within tolerance. Both backends follow the same rule.
  void stepOnce() {
    const bool recording = timeline_.begin(step_);
    if (recording) queues_.startTimeline();
    mark("start");
    const int planned = std::clamp(plannedCycles_, 1, config_.multigrid.maxCycles);
    if (recording)
      queuePredictorAndCycles(planned);  // with the timeline's marks between the phases
    else
      Backend::replay(graphs_, queues_.compute, planned, [&] { queuePredictorAndCycles(planned); });
    std::vector<double> squares(static_cast<std::size_t>(planned) + 1);
    exec::copyBytes(squares.data(), norms(), squares.size() * sizeof(double));
    report_ = PoissonReport{};
    report_.initialResidual = std::sqrt(squares[0]);
    const double target = config_.multigrid.tolerance * report_.initialResidual;
    int needed = -1;
    for (int cycle = std::max(1, planned - 1); cycle <= planned && needed < 0; ++cycle)
      if (std::sqrt(squares[static_cast<std::size_t>(cycle)]) <= target) needed = cycle;
    report_.cycles = planned;
    report_.finalResidual = std::sqrt(squares.back());
    // A cycle that no longer halves the residual has met the precision's floor (FP32: a smooth
    // right-hand side needs a phi far larger than it, whose rounding stays in the residual): the
    // step goes on with it, and the report says how far it got.
    while (report_.finalResidual > target && report_.cycles < config_.multigrid.maxCycles) {
      vCycle();
      queueResidualNorm(0);
      ++report_.cycles;
      double square = 0.0;
      exec::copyBytes(&square, norms(), sizeof square);
      const double previous = report_.finalResidual;
      report_.finalResidual = std::sqrt(square);
      if (report_.finalResidual > 0.5 * previous) break;
    }
    const bool reached = report_.finalResidual <= target;
    plannedCycles_ = needed > 0 ? needed : (reached ? report_.cycles : std::max(1, report_.cycles - 1));
    cycleCounts_.push_back(report_.cycles);
    mark("pressure (multigrid)");
    queues_.compute.parallelFor3(Extent{g_.nx + 1, g_.ny + 1, 1},
                                 Project<Real>{g_, static_cast<Real>(config_.dt / config_.h), uStar_.data(), vStar_.data(),
                                               levels_.level[0].phi, u_.data(), v_.data(), p_.data()});
    mark("projection");
    ++step_;
    if (timeline_.recording()) timeline_.end(queues_.stopTimeline());
  }

  void initializeObstacle() {
    const auto padded = static_cast<std::size_t>(g_.paddedCount());
    std::vector<Real> chi[2] = {std::vector<Real>(padded, Real(0)), std::vector<Real>(padded, Real(0))};
    for (int c = 0; c < 2; ++c) {
      int lo[2] = {g_.nx, g_.ny}, hi[2] = {-1, -1};
      for (int j = 0; j <= g_.ny; ++j)
        for (int i = 0; i <= g_.nx; ++i) {
          if (!g_.computed(c, i, j)) continue;
          const double x = (i + (c == kU ? 0.0 : 0.5)) * config_.h, y = (j + (c == kV ? 0.0 : 0.5)) * config_.h;
          const double fraction = solidFraction(config_, x, y);
          if (fraction <= 0.0) continue;
          chi[c][static_cast<std::size_t>(g_.at(i, j))] = static_cast<Real>(fraction);
          lo[0] = std::min(lo[0], i), lo[1] = std::min(lo[1], j), hi[0] = std::max(hi[0], i), hi[1] = std::max(hi[1], j);
        }
      int* box = forceBox_[c];
      box[0] = lo[0], box[1] = lo[1], box[2] = std::max(0, hi[0] - lo[0] + 1), box[3] = std::max(0, hi[1] - lo[1] + 1);
    }
    chiU_.copyFrom(chi[0].data(), padded);
    chiV_.copyFrom(chi[1].data(), padded);
    forceU_.setZero();
    forceV_.setZero();
  }

  std::vector<unsigned char> ownValues(const exec::Buffer<Real>& field, int component) const {
    std::vector<Real> host(field.size());
    field.copyTo(host.data(), host.size());
    const int width = g_.nx + (component == kU ? 1 : 0), height = g_.ny + (component == kV ? 1 : 0);
    std::vector<unsigned char> bytes(sizeof(Real) * static_cast<std::size_t>(width) * height);
    for (int j = 0; j < height; ++j)
      std::memcpy(bytes.data() + sizeof(Real) * j * width, &host[static_cast<std::size_t>(g_.at(0, j))], sizeof(Real) * width);
    return bytes;
  }

  NsConfig config_;
  Geometry g_;
  Queues queues_;
  typename Backend::Graphs graphs_{queues_};  // after queues_: it may give them a stream of its own
  exec::Buffer<Real> u_, v_, uX_, vX_, uStar_, vStar_, p_;
  exec::Buffer<Real> chiU_, chiV_, forceU_, forceV_;  // with an obstacle
  std::vector<exec::Buffer<Real>> phi_, rhs_;
  LevelSet<Real> levels_;
  int blockFirst_ = 0;  // the first level whose V-cycle part runs in one go (Backend::coarseCycle)
  CycleShape shape_;
  exec::Buffer<double> sums_;  // reductions: results in the first slots, then scratch
  int forceBox_[2][4] = {};    // per component: first i, first j, width, height of the points with chi > 0
  PoissonReport report_;
  std::vector<int> cycleCounts_;
  int plannedCycles_ = 1;  // the cycles the last step needed
  sim::StepTimeline timeline_;
  Index step_ = 0;
};

}  // namespace detail

}  // namespace octoflow::ns
