// The CPU reference execution of the 2D Navier-Stokes step (OpenMP): sums add row sums in row
// order, and the V-cycle's coarse part runs on one thread, so results do not depend on the thread
// count.
#include "exec/cpu/CpuExecutor.hpp"
#include "ns/NsEngine.hpp"

namespace octoflow::ns {

template <>
struct NsBackend<exec::CpuQueues> {
  static constexpr exec::Backend backend = exec::Backend::Cpu;

  // The sum of f(i, j) over [0, width) x [0, height) into *result; scratch holds height values.
  template <class F>
  static void sum(const exec::CpuExecutor&, Index width, Index height, const F& f, double* result, double* scratch) {
#pragma omp parallel for schedule(static)
    for (Index j = 0; j < height; ++j) {
      double row = 0.0;
      for (Index i = 0; i < width; ++i) row += f(i, j);
      scratch[j] = row;
    }
    double total = 0.0;
    for (Index j = 0; j < height; ++j) total += scratch[j];
    *result = total;
  }

  struct SerialTeam {
    template <class F>
    void forEach(int width, int height, const F& f) {
      for (int j = 0; j < height; ++j)
        for (int i = 0; i < width; ++i) f(i, j, 0);
    }
    void barrier() {}
  };

  // The CPU runs queued work at once: nothing to record.
  struct Graphs {
    explicit Graphs(exec::CpuQueues&) {}
  };
  template <class F>
  static void replay(Graphs&, const exec::CpuExecutor&, int, const F& queueWork) {
    queueWork();
  }

  template <class Real>
  static void coarseCycle(const exec::CpuExecutor&, const LevelSet<Real>& levels, int first, const CycleShape& shape) {
    SerialTeam team;
    vCycleFrom(team, levels, first, shape);
  }
};

std::unique_ptr<NsEngine> makeNsEngineCpu(const NsConfig& config) {
  if (config.precision == Precision::Fp64) return std::make_unique<detail::NsEngineFor<exec::CpuQueues, double>>(config);
  return std::make_unique<detail::NsEngineFor<exec::CpuQueues, float>>(config);
}

}  // namespace octoflow::ns
