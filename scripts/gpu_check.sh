#!/usr/bin/env bash
# On a GPU machine (no ParaView, no network): configure with the `gpu` preset, build, run the
# whole test suite with OCTOFLOW_REQUIRE_GPU=1 (GPU tests fail instead of skipping) and the
# benchmarks. Logs go to $1 (default: gpu-logs/). Header-only dependencies and GoogleTest come
# from .deps/ (see README, "Building on a GPU machine"). $2 picks parts: "all" (default) or a
# comma-separated list of tests, bench (LBM), pairs (FP16 node pairs against one node a thread),
# phasefield, insitu, amr (the octree LBM's kernels: bits and figures), amr-ranks (the octree LBM
# over 2 ranks), scaling.
set -uo pipefail
logs=${1:-gpu-logs}
parts=${2:-all}
want() { [ "$parts" = all ] || [[ ",$parts," == *",$1,"* ]]; }
mkdir -p "$logs"
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
{
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.memory --format=csv
  nvidia-smi topo -m
  nvcc --version | tail -1
  cmake --version | head -1
} > "$logs/machine.txt" 2>&1
mpi=ON
command -v mpicxx >/dev/null || mpi=OFF
# Code for this machine's GPU only (the default builds two architectures: twice the minutes of
# device time for the same sm_90 code on an H100 or H200).
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d .)
archs=()
[ -n "$arch" ] && archs=(-DCMAKE_CUDA_ARCHITECTURES=${arch}-real)
cmake --preset gpu -DOCTOFLOW_ENABLE_MPI=$mpi -DOCTOFLOW_GTEST_SOURCE_DIR=.deps/googletest "${archs[@]}" > "$logs/configure.txt" 2>&1 \
  || { tail -30 "$logs/configure.txt"; exit 1; }
# Without the tests, only the CLI (the benchmarks' and the scaling runs' one binary): a build of
# every target takes minutes of device time the figures do not need.
targets=()
want tests || targets=(--target octoflow_cli)
want tests || ! want pairs || targets+=(blocking_tests)  # the NodePairs bits
want tests || ! want amr-ranks || [ "$mpi" = OFF ] || targets+=(mpi_tests)  # the DistributedAmr bits
want tests || ! want amr || targets+=(parity_tests)  # the AmrLbmGpu and AmrLbmParity bits
cmake --build build-gpu -j16 "${targets[@]}" > "$logs/build.txt" 2>&1 || { grep -E "error" "$logs/build.txt" | head -30; exit 1; }
tests_status=0
if want tests; then
OCTOFLOW_REQUIRE_GPU=1 ctest --test-dir build-gpu -j8 --output-on-failure > "$logs/tests.txt" 2>&1
tests_status=$?
tail -15 "$logs/tests.txt"
# The figures the GPU tests print (parity differences, Re = 1000 cavity, fine cylinder,
# isosurface and tracer parity).
{
  build-gpu/bin/parity_tests
  build-gpu/bin/validation_tests --gtest_filter='*Gpu*'
} > "$logs/gpu_figures.txt" 2>&1
grep -E "max \||cavity|cylinder|isosurface|tracers|run extracts" "$logs/gpu_figures.txt"
fi
build-gpu/bin/octoflow info > "$logs/info.txt" 2>&1
cat "$logs/info.txt"
if want bench; then
{
  git rev-parse --short HEAD 2>/dev/null || echo "commit: unknown"
  date -u +%Y-%m-%dT%H:%MZ
  build-gpu/bin/octoflow bench lbm --backend cuda --matrix
  for lattice in D2Q9 D3Q19 D3Q27; do
    for storage in fp32 fp16; do
      build-gpu/bin/octoflow bench lbm --backend cuda --lattice $lattice --collision trt --storage $storage --json
    done
    build-gpu/bin/octoflow bench lbm --backend cuda --lattice $lattice --collision mrt --les smagorinsky --json
  done
  # The forced form (a body force), which body-force driven cases run.
  for lattice in D2Q9 D3Q19 D3Q27; do
    for storage in fp32 fp16; do
      build-gpu/bin/octoflow bench lbm --backend cuda --lattice $lattice --storage $storage --forced --json
    done
    build-gpu/bin/octoflow bench lbm --backend cuda --lattice $lattice --collision mrt --forced --json
  done
  for lattice in D3Q19 D3Q27; do
    build-gpu/bin/octoflow bench lbm --backend cuda --lattice $lattice --les csm --json
    build-gpu/bin/octoflow bench lbm --backend cuda --lattice $lattice --collision mrt --les csm --json
  done
  build-gpu/bin/octoflow bench lbm --backend cuda --lattice D3Q19 --size 256
  # phi = 0.5 of a 512^3 field on the host (target <= 5 ms on an H200), and 256^3.
  build-gpu/bin/octoflow bench isosurface --backend cuda --size 512
  build-gpu/bin/octoflow bench isosurface --backend cuda --size 256 --json
} > "$logs/bench.txt" 2>&1
cat "$logs/bench.txt"
fi
# FP16 node pairs where the program runs them (D3Q19 BGK in registers, D3Q19 MRT two a register,
# D3Q27 BGK staged in shared memory; UniformEngine.hpp, pairsPay) against one node a thread,
# alternating, twice, each collision; then the NodePairs bits on the GPU.
if want pairs; then
{
  git rev-parse --short HEAD 2>/dev/null || echo "commit: unknown"
  for round in 1 2; do
    for lattice in D3Q19 D3Q27; do
      for collision in bgk trt mrt; do
        for form in "--nodes-per-thread 2" "--nodes-per-thread 1"; do
          echo "== $lattice fp16 $collision $form (round $round)"
          build-gpu/bin/octoflow bench lbm --backend cuda --lattice $lattice --storage fp16 --collision $collision $form
        done
      done
    done
  done
  [ -x build-gpu/bin/blocking_tests ] && OCTOFLOW_REQUIRE_GPU=1 build-gpu/bin/blocking_tests --gtest_filter='*NodePairs*Gpu*'
} > "$logs/pairs.txt" 2>&1
grep -E "^==|MLUPS|differ|PASSED|FAILED" "$logs/pairs.txt"
fi
# Phase-field (Kobayashi, noise on): 512^3 (target >= 100 GLUPS on an H200), 256^3, 2D 8192^2.
if want phasefield; then
{
  git rev-parse --short HEAD 2>/dev/null || echo "commit: unknown"
  build-gpu/bin/octoflow bench phasefield --backend cuda --size 512
  build-gpu/bin/octoflow bench phasefield --backend cuda --size 256 --json
  build-gpu/bin/octoflow bench phasefield --backend cuda --2d --size 8192
} > "$logs/phasefield.txt" 2>&1
cat "$logs/phasefield.txt"
fi
# In-situ overhead at 256^3 (surface + tracers to the host every 50 steps): tracers moved every
# step and every 10; with the velocity field copied too; and the isosurface alone.
if want insitu; then
{
  git rev-parse --short HEAD 2>/dev/null || echo "commit: unknown"
  for tracers_every in 1 10; do
    build-gpu/bin/octoflow bench insitu --backend cuda --size 256 --steps 1000 --tracers-every $tracers_every
    build-gpu/bin/octoflow bench insitu --backend cuda --size 256 --steps 1000 --tracers-every $tracers_every --fields
  done
  build-gpu/bin/octoflow bench insitu --backend cuda --size 256 --steps 1000 --tracers-every 50
  build-gpu/bin/octoflow bench insitu --backend cuda --size 256 --steps 1000 --tracers 1000000 --tracers-every 10
  # The tracer moves alone (no hand-offs), sampled from the populations and, for comparison, in a
  # velocity field; and their fixed cost (few tracers).
  for tracers in 1000 10000 100000 1000000; do
    build-gpu/bin/octoflow bench insitu --backend cuda --size 256 --steps 1000 --every 100000 --tracers $tracers
  done
  build-gpu/bin/octoflow bench insitu --backend cuda --size 256 --steps 1000 --every 100000 --tracer-velocity field
} > "$logs/insitu.txt" 2>&1
cat "$logs/insitu.txt"
fi
# The octree LBM's kernels on one GPU: the GPU bit tests (every kernel form against the naive one,
# CUDA against the CPU reference), the kernel forms of the seed's Table 4 (one level, 17^3 and
# 33^3 blocks), the default form on 1 and 3 levels (D3Q27, D3Q19; twice), and the sphere at
# Re = 100 on the octree (the step time and the drag; the uniform grid's run:
# bench/sphere_time_to_solution.sh).
if want amr; then
{
  git rev-parse --short HEAD 2>/dev/null || echo "commit: unknown"
  OCTOFLOW_REQUIRE_GPU=1 build-gpu/bin/parity_tests --gtest_filter='AmrLbm*'
  for blocks in "" "--leaves 4 --leaf-cells 32"; do
    for kernel in naive split streams classes sorted whole; do
      echo "== $kernel D3Q27 $blocks"
      build-gpu/bin/octoflow bench amr --backend cuda --kernel $kernel --lattice D3Q27 --steps 400 $blocks
    done
  done
  for round in 1 2; do
    for lattice in D3Q27 D3Q19; do
      for levels in 1 3; do
        echo "== whole $lattice, $levels level(s) (round $round)"
        build-gpu/bin/octoflow bench amr --backend cuda --lattice $lattice --levels $levels --steps 200
      done
    done
  done
  # The LES models on the octree: the step with and without CSM (its eddy pass), BGK and MRT.
  for collision in bgk mrt; do
    for levels in 1 3; do
      for les in none csm; do
        echo "== whole D3Q27 $collision les=$les, $levels level(s)"
        build-gpu/bin/octoflow bench amr --backend cuda --lattice D3Q27 --collision $collision --les $les --levels $levels --steps 200
      done
    done
  done
  build-gpu/bin/octoflow run data/cases/sphere_re100_amr.toml --backend cuda --output "$logs/sphere_amr" 2>&1 | tail -2
  tail -3 "$logs/sphere_amr/forces.csv"
  # The sphere with CSM in place of the Smagorinsky model, with BGK and with MRT (the mean drag of
  # the last quarter: bench/sphere_time_to_solution.sh's measure).
  for collision in bgk mrt; do
    sed -e 's/^les = "smagorinsky".*/les = "csm"/' -e "s/^lattice = \(.*\)/lattice = \1\ncollision = \"$collision\"/" \
      data/cases/sphere_re100_amr.toml > "$logs/sphere_csm_$collision.toml"
    echo "== sphere Re 100, $collision + csm"
    build-gpu/bin/octoflow run "$logs/sphere_csm_$collision.toml" --backend cuda --output "$logs/sphere_csm_$collision" 2>&1 | tail -2
    echo "mean cd of the last quarter $(bench/mean_cd.sh "$logs/sphere_csm_$collision/forces.csv")"
  done
} > "$logs/amr.txt" 2>&1
grep -E "^==|ms a step|copy|PASSED|FAILED|done:|mean cd" "$logs/amr.txt"
fi
# The octree LBM over MPI ranks on this machine's GPU(s) (several GPUs: scaling_check.sh): the
# DistributedAmr bits on CUDA under 2 ranks, the digest of 1 and 2 ranks, and the 2-rank bench
# (with and without CSM).
if want amr-ranks && [ "$mpi" = ON ]; then
{
  git rev-parse --short HEAD 2>/dev/null || echo "commit: unknown"
  [ -x build-gpu/bin/mpi_tests ] && OCTOFLOW_REQUIRE_GPU=1 mpirun --oversubscribe -np 2 build-gpu/bin/mpi_tests \
    --gtest_filter='DistributedAmr.*'
  amr="build-gpu/bin/octoflow bench amr --backend cuda --lattice D3Q19 --leaves 8 --levels 3"
  for n in 1 2; do mpirun --oversubscribe -np $n $amr --steps 50 --digest; done
  for n in 1 2; do mpirun --oversubscribe -np $n $amr; done
  # The same 2 ranks with their messages through host memory and MPI instead of CUDA IPC.
  echo "OCTOFLOW_CUDA_IPC=0:"
  mpirun --oversubscribe -np 2 -x OCTOFLOW_CUDA_IPC=0 $amr
  # MRT + CSM: the eddy parts travel in an exchange of their own each time a level's are made.
  for n in 1 2; do mpirun --oversubscribe -np $n $amr --collision mrt --les csm; done
  # A run of the octree LBM (two regrids of the sphere's wake, forces) on 1 and 2 ranks.
  run="build-gpu/bin/octoflow run data/cases/sphere_wake_regrid_amr.toml --backend cuda --steps 320"
  for n in 1 2; do mpirun --oversubscribe -np $n $run --output "$logs/amr_run_$n" 2>&1 | grep -E "MPI ranks|done:"; done
  cmp "$logs/amr_run_1/forces.csv" "$logs/amr_run_2/forces.csv" && echo "lbm-amr run: forces.csv the same on 1 and 2 ranks" ||
    echo "lbm-amr run: forces.csv DIFFER on 1 and 2 ranks"
  mpirun --oversubscribe -np 2 -x OCTOFLOW_CUDA_IPC=0 $run --output "$logs/amr_run_2_staged" 2>&1 | grep -E "MPI ranks|done:"
  cmp "$logs/amr_run_1/forces.csv" "$logs/amr_run_2_staged/forces.csv" &&
    echo "lbm-amr run: forces.csv the same on 1 rank and 2 ranks through host memory" ||
    echo "lbm-amr run: forces.csv DIFFER on 1 rank and 2 ranks through host memory"
} > "$logs/amr_ranks.txt" 2>&1
grep -E "digest|ms a step|balance|sent|PASSED|FAILED|lbm-amr run|done:|IPC" "$logs/amr_ranks.txt"
fi
# Scaling over the GPUs of one host: scripts/scaling_check.sh (bits first, then the figures).
if want scaling && [ "$mpi" = ON ]; then
  scripts/scaling_check.sh "$logs"
fi
exit $tests_status
