#!/usr/bin/env bash
# On a machine of several GPUs, after build-gpu/bin/octoflow is built with MPI (scripts/gpu_check.sh
# or by hand): the scaling figures of docs/PERFORMANCE.md. Logs go to $1 (default: gpu-logs/).
set -uo pipefail
logs=${1:-gpu-logs}
mkdir -p "$logs"
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
[ "$gpus" -ge 2 ] || { echo "scaling_check.sh: $gpus GPU(s) here; it needs 2 or more"; exit 1; }
# Scaling over the GPUs of one host (MPI ranks, one GPU each; 1, 2, 4 and 8 GPUs as the machine
# has them), halos over CUDA IPC. First the bits: the same command on every count of GPUs, and on
# the CPU under 8 ranks, must print the digest of one rank (else no figure is taken). Then LBM
# D3Q19 BGK FP32 weak (256^3 a GPU) and strong (512^3), the phase-field solver weak (512^3 a GPU)
# and strong (1024^3), each with one step's timeline on the most GPUs; then the octree LBM (three
# levels, D3Q19, 8^3 leaves of 17^3 at level 0: blocks in Morton runs cut by work) on each count,
# with its load balance and time in exchanges, and a run of it with regrids (its time a count).
counts=1
for n in 2 4 8; do [ "$gpus" -ge "$n" ] && counts="$counts $n"; done
most=${counts##* }
# The 16 hex digits of the line "digest of ...: <digest>" every bench prints with --digest.
digest_of() { grep -oE 'digest of [^:]*: [0-9a-f]{16}' | grep -oE '[0-9a-f]{16}$'; }
# same_bits LABEL RANK_COUNTS COMMAND...: the digest of every rank count equals the first's.
same_bits() {
  local label=$1 ranks=$2 first="" ok=1 d
  shift 2
  for n in $ranks; do
    d=$(mpirun --oversubscribe -np "$n" -x OMP_NUM_THREADS=2 "$@" --digest | digest_of)
    echo "  $label, $n rank(s): digest $d"
    [ -z "$first" ] && first=$d
    { [ -n "$d" ] && [ "$d" = "$first" ]; } || ok=0
  done
  [ $ok = 1 ] && echo "bit-identical: $label" || { echo "DIFFERENT BITS: $label"; identical=0; }
}
identical=1
{
  git rev-parse --short HEAD 2>/dev/null || echo "commit: unknown"
  date -u +%Y-%m-%dT%H:%MZ
  lbm="build-gpu/bin/octoflow bench lbm --lattice D3Q19"
  pf="build-gpu/bin/octoflow bench phasefield"
  same_bits "lbm cuda 128^3" "$counts" $lbm --backend cuda --size 128 --steps 100
  same_bits "lbm cpu 32^3" "1 8" $lbm --backend cpu --size 32 --steps 10
  same_bits "phasefield cuda 128^3" "$counts" $pf --backend cuda --size 128 --steps 100
  same_bits "phasefield cpu 32^3" "1 8" $pf --backend cpu --size 32 --steps 10
  amr="build-gpu/bin/octoflow bench amr --lattice D3Q19"
  same_bits "amr cuda 3 levels" "$counts" $amr --backend cuda --leaves 8 --levels 3 --steps 50
  same_bits "amr cpu 2 levels" "1 8" $amr --backend cpu --leaves 4 --levels 2 --steps 4
  # A run of the octree LBM (the sphere's wake, regrids every 160 steps): forces.csv of every GPU
  # count the same bytes as one GPU's.
  wake="build-gpu/bin/octoflow run data/cases/sphere_wake_regrid_amr.toml --backend cuda --steps 960"
  for n in $counts; do
    mpirun --oversubscribe -np $n $wake --output "$logs/wake_$n" 2>&1 | grep -E "done:"
    if cmp -s "$logs/wake_1/forces.csv" "$logs/wake_$n/forces.csv"; then echo "  lbm-amr run, $n rank(s): forces.csv as 1"
    else echo "DIFFERENT BITS: lbm-amr run on $n ranks"; identical=0; fi
  done
} > "$logs/scaling.txt" 2>&1
cat "$logs/scaling.txt"
checked=$(wc -l < "$logs/scaling.txt")
if [ $identical = 1 ]; then
  {
    for n in $counts; do
      mpirun --oversubscribe -np $n $lbm --backend cuda --json --size 256 --weak
      mpirun --oversubscribe -np $n $lbm --backend cuda --json --size 512
    done
    mpirun --oversubscribe -np $most $lbm --backend cuda --size 256 --weak --timeline
    mpirun --oversubscribe -np $most $lbm --backend cuda --size 512 --timeline
    mpirun --oversubscribe -np $most -x OCTOFLOW_CUDA_IPC=0 $lbm --backend cuda --json --size 256 --weak
    for n in $counts; do
      mpirun --oversubscribe -np $n $pf --backend cuda --json --size 512 --weak
      mpirun --oversubscribe -np $n $pf --backend cuda --json --size 1024
    done
    mpirun --oversubscribe -np $most $pf --backend cuda --size 512 --weak --timeline
    mpirun --oversubscribe -np $most $pf --backend cuda --size 1024 --timeline
    mpirun --oversubscribe -np $most -x OCTOFLOW_CUDA_IPC=0 $pf --backend cuda --json --size 512 --weak
    for n in $counts; do
      mpirun --oversubscribe -np $n $amr --backend cuda --leaves 8 --levels 3
      mpirun --oversubscribe -np $n $amr --backend cuda --leaves 16 --levels 3
    done
  } >> "$logs/scaling.txt" 2>&1
  tail -n +$((checked + 1)) "$logs/scaling.txt"
fi
[ $identical = 1 ]
