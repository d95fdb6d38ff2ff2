#pragma once
// The one template behind both executions of the uniform solver, instantiated per backend and
// lattice from lbm/UniformEngineInstance.in.
#include <type_traits>

#include "lbm/BulkPairStep.hpp"
#include "lbm/CollisionChoice.hpp"
#include "lbm/Halo.hpp"
#include "lbm/Mrt.hpp"
#include "lbm/StreamCollide.hpp"
#include "lbm/TracerFlow.hpp"
#include "lbm/UniformSolver.hpp"

namespace octoflow::lbm::detail {

template <class L, class S, class Collision, class Queues>
class UniformEngineFor final : public UniformEngine {
public:
  using Value = typename S::Value;

  UniformEngineFor(const UniformSolverConfig& config, const Collision& collision, const NodeLists& lists)
      : grid_{config.extent, config.faces, config.acceleration, lists.kind, placementOf(config)},
        initialVelocity_(config.initialVelocity),
        nodePairs_(config.fp16NodePairs),
        collision_(collision),
        lists_(lists) {}

  void initialize(const float* density, const float* velocity, void* populations, NodeMoments* moments,
                  LesVelocityValue* lesVelocity) override {
    auto* values = static_cast<Value*>(populations);
    queues_.compute.parallelFor(
        nodeCount(), InitializeEquilibrium<L, S>{nodeCount(), density, velocity, initialVelocity_, values, lesVelocity});
    queues_.compute.parallelFor(lists_.boundaryCount,
                                InitializeBoundaryNodes<L, S>{grid_, lists_.boundaryNodes, density, velocity,
                                                              initialVelocity_, moments, values});
  }
  void bulkStep(void* populations, bool odd, const NodeBox& box, const LesVelocityValue* velocityIn,
                LesVelocityValue* velocityOut, const VelocityTap& tap) override {
    auto* values = static_cast<Value*>(populations);
    const Vector3& a = grid_.acceleration;
    const bool forced = a.x != 0.0f || a.y != 0.0f || a.z != 0.0f;
    if (velocityIn)  // CSM, with the velocity fields
      odd ? bulkStepOf<true, true>(forced, box, values, tap, velocityIn, velocityOut)
          : bulkStepOf<false, true>(forced, box, values, tap, velocityIn, velocityOut);
    else
      odd ? bulkStepOf<true, false>(forced, box, values, tap) : bulkStepOf<false, false>(forced, box, values, tap);
  }
  void boundaryStep(void* populations, bool odd, const NodeMoments* previous, NodeMoments* next,
                    const LesVelocityValue* velocityIn, LesVelocityValue* velocityOut, const VelocityTap& tap) override {
    queues_.compute.parallelFor(lists_.boundaryCount,
                                BoundaryStep<L, S, Collision>{grid_, collision_, static_cast<Value*>(populations), odd,
                                                              lists_.boundaryNodes, previous, next, velocityIn,
                                                              velocityOut, tap});
  }
  void macroscopic(const void* populations, bool odd, const NodeMoments* previous, float* density,
                   float* velocity) override {
    const auto* values = static_cast<const Value*>(populations);
    if (odd)
      queues_.compute.parallelFor3(grid_.extent, BulkMacroscopic<L, S, true>{grid_, {values, nodeCount()}, density, velocity});
    else
      queues_.compute.parallelFor3(grid_.extent, BulkMacroscopic<L, S, false>{grid_, {values, nodeCount()}, density, velocity});
    queues_.compute.parallelFor(lists_.boundaryCount, BoundaryMacroscopic<L, S>{grid_, values, odd, lists_.boundaryNodes,
                                                                           previous, density, velocity});
  }
  void moveTracers(const void* populations, bool odd, const NodeMoments* previous, const particles::TracerMove& move,
                   const TapMarker& marker) override {
    const auto* values = static_cast<const Value*>(populations);
    if (odd)
      queues_.compute.parallelForSpread(
          move.count, AdvectAndMark<FlowAtNodes<L, S, true>>{{flowAtNodes<true>(values, previous), move}, marker});
    else
      queues_.compute.parallelForSpread(
          move.count, AdvectAndMark<FlowAtNodes<L, S, false>>{{flowAtNodes<false>(values, previous), move}, marker});
  }
  void moveTappedTracers(const TappedVelocity* velocity, float stamp, const particles::TracerMove& move,
                         const TapMarker& marker) override {
    queues_.compute.parallelForSpread(move.count,
                                      AdvectAndMark<TappedFlow>{{TappedFlow{grid_, velocity, stamp}, move}, marker});
  }
  void clearMask(std::uint32_t* words, Index count) override { queues_.compute.parallelFor(count, ClearMask{words}); }
  void obstacleForce(const void* populations, const ObstacleLink* links, Index count, double* force) override {
    queues_.compute.parallelFor(count, ObstacleForce<L, S>{links, static_cast<const Value*>(populations), nodeCount(), force});
  }
  int crossingCount() const override { return lbm::crossingCount<L>(); }
  void packHalo(const void* populations, const HaloBox& box, void* buffer) override {
    queues_.halo.parallelFor3(box.nodes(), PackHalo<S>{box, haloLinks<L>(box), grid_.extent,
                                                        static_cast<const Value*>(populations), static_cast<Value*>(buffer)});
  }
  void unpackHalo(void* populations, const HaloBox& box, const void* buffer) override {
    queues_.halo.parallelFor3(box.nodes(), UnpackHalo<S>{box, haloLinks<L>(box), grid_, static_cast<Value*>(populations),
                                                          static_cast<const Value*>(buffer)});
  }
  void copyLesVelocityHalo(LesVelocityValue* field, const HaloBox& box, LesVelocityValue* buffer, bool pack) override {
    queues_.halo.parallelFor3(box.nodes(), CopyLesVelocityHalo{box, grid_.extent, pack, field, buffer});
  }
  void copyOnHaloQueue(void* destination, const void* source, std::size_t bytes) override {
    queues_.halo.copy(destination, source, bytes);
  }
  void haloAfterCompute() override { queues_.haloAfterCompute(); }
  void computeAfterHalo() override { queues_.computeAfterHalo(); }
  void synchronizeHalo() override { queues_.halo.synchronize(); }
  void startTimeline() override { queues_.startTimeline(); }
  void markTimeline(bool onHaloQueue) override { queues_.markTimeline(onHaloQueue); }
  std::vector<double> stopTimeline() override { return queues_.stopTimeline(); }
  void synchronize() override { queues_.synchronize(); }
  void markQueued() override { queues_.markQueued(); }
  void waitForMarked() override { queues_.waitForMarked(); }

private:
  // Resident 256-thread blocks per SM the bulk kernels ask the CUDA register allocator for: the
  // fastest measured on an H200 (docs/PERFORMANCE.md). FP16 moves half the bytes a load, so it
  // needs more threads in flight, and so does D3Q27 MRT; only the lean forms (no body force, no
  // CSM) fit in the registers that leaves: the others spilled 100-320 bytes (ptxas, sm_90). The
  // lean D3Q27 FP16 forms take one block more again (64 registers a thread; measured on an H100:
  // MRT 23,100 against 20,870 MLUPS with 3 blocks, BGK unchanged, "MRT rows sharing one rate"),
  // but TRT: it spilled 160-216 bytes at 64 registers and ran at half BGK's speed.
  static constexpr bool kMrt = std::is_same_v<Collision, Mrt>;
  static constexpr bool kTrt = std::is_same_v<Collision, Trt>;
  static constexpr int bulkBlocksPerSm(bool forced, bool csm) {
    const int blocks = L::Q <= 9 ? 4 : (L::Q <= 19 ? 3 : 2);
    const bool lean = !forced && !csm;
    const bool moreInFlight = kMrt ? L::Q == 27 : S::kind == StorageKind::Fp16;
    const bool fp16Q27 = L::Q == 27 && S::kind == StorageKind::Fp16;
    return blocks + (lean && moreInFlight ? 1 : 0) + (lean && fp16Q27 && !kTrt ? 1 : 0);
  }
  // Where FP16 bulk steps update two nodes a thread (lbm/BulkPairStep.hpp), as measured on an
  // H200 and an H100 (docs/PERFORMANCE.md, "The staged pairs on an H200"): the lean D3Q19 form's
  // even steps, and its odd steps too with MRT (three resident blocks, 85 registers a thread), and
  // the lean D3Q27 BGK form's even steps with the words staged in shared memory (four resident
  // blocks: 4 x 27 KiB; +4.1 % on an H200, +1.4 % on an H100). Not TRT (pairs 2.8-3.9 % slower
  // on D3Q19, staged 31 % slower on D3Q27: its collision spills at the pairs' registers), not
  // D3Q27 MRT (staged 7-14 % slower), not the forced form (it needs 128 registers not to spill,
  // and lost 4 % with them).
  static constexpr bool pairsPay(bool odd, bool forced, bool csm) {
    const bool lean = S::kind == StorageKind::Fp16 && !forced && !csm;
    return lean && !kTrt && ((L::Q == 19 && (!odd || kMrt)) || (L::Q == 27 && !odd && !kMrt));
  }
  // MRT's D3Q19 pairs hold the waiting node's values two a register: they spilled at 80 registers
  // without; BGK's do not spill and lose to the byte permutes. D3Q27's pairs in registers spilled
  // and ran 23 % slower than one node a thread; staged, 4 % faster.
  static constexpr PairHolding kPairHolding =
      L::Q == 27 ? PairHolding::Staged : (kMrt ? PairHolding::Packed : PairHolding::Registers);
  static constexpr int kPairBlocksPerSm = kPairHolding == PairHolding::Staged ? 4 : 3;
  template <bool Odd, bool Csm>
  void bulkStepOf(bool forced, const NodeBox& box, Value* values, const VelocityTap& tap,
                  const LesVelocityValue* velocityIn = nullptr, LesVelocityValue* velocityOut = nullptr) {
    forced ? bulkStep<Odd, true, Csm>(box, values, tap, velocityIn, velocityOut)
           : bulkStep<Odd, false, Csm>(box, values, tap, velocityIn, velocityOut);
  }
  template <bool Odd, bool Forced, bool Csm>
  void bulkStep(const NodeBox& box, Value* values, const VelocityTap& tap, const LesVelocityValue* velocityIn,
                LesVelocityValue* velocityOut) {
    if constexpr (pairsPay(Odd, Forced, Csm)) {
      if (nodePairs_ && pairsFit(grid_.extent, box)) {
        queues_.compute.template parallelFor3<kPairBlocksPerSm>(
            pairBoxOf(box), BulkPairStep<L, Collision, Odd, kPairHolding>{
                                grid_, collision_, {values, nodeCount()}, tap, box.lo[0] + box.size.nx});
        return;
      }
    }
    queues_.compute.template parallelFor3<bulkBlocksPerSm(Forced, Csm)>(
        box, BulkStep<L, S, Collision, Odd, Forced, Csm>{grid_, collision_, {values, nodeCount()}, velocityIn,
                                                             velocityOut, tap});
  }
  template <bool Odd>
  FlowAtNodes<L, S, Odd> flowAtNodes(const Value* values, const NodeMoments* previous) const {
    return {grid_, {values, nodeCount()}, values, lists_.boundaryNodes, lists_.boundaryCount, previous};
  }
  Index nodeCount() const { return grid_.extent.cellCount(); }
  GridView grid_;
  Vector3 initialVelocity_;  // where initialize() is given no velocity field
  bool nodePairs_;  // UniformSolverConfig::fp16NodePairs
  Collision collision_;
  NodeLists lists_;
  Queues queues_;
};

template <class Queues, class L, class S>
std::unique_ptr<UniformEngine> makeEngineFor(const UniformSolverConfig& config, const NodeLists& lists) {
  return withCollisionOf<L>(config, [&](const auto& collision) -> std::unique_ptr<UniformEngine> {
    using Collision = std::decay_t<decltype(collision)>;
    return std::make_unique<UniformEngineFor<L, S, Collision, Queues>>(config, collision, lists);
  });
}

}  // namespace octoflow::lbm::detail
