#!/usr/bin/env bash
# The two set-up commands of the README, for a fresh Debian 12 machine:
#   scripts/setup.sh demo   install what is missing, build, run the demo case (PNGs + VTK in out/)
#   scripts/setup.sh test   install what is missing, build, run the whole test suite
# Both are idempotent: packages already there are not reinstalled, the build is incremental.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
case "$mode" in
  demo | test) ;;
  *) echo "usage: scripts/setup.sh demo|test" >&2; exit 2 ;;
esac

bash scripts/install_deps.sh
# nvcc ships outside Debian (CUDA toolkit in /usr/local/cuda); the default preset uses it when found.
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH="/usr/local/cuda/bin:$PATH"; fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

cmake --preset default
cmake --build --preset default -j "$(nproc)"

if [ "$mode" = demo ]; then
  # Lid-driven cavity at Re = 100: VTK series in out/cavity2d/, Catalyst PNGs in out/cavity2d/catalyst/.
  # ParaView renders through X: xvfb-run gives it a virtual display.
  xvfb-run -a build/bin/octoflow run data/cases/cavity2d.toml
  echo "demo: open out/cavity2d/cavity2d.pvd and out/cavity2d/tracers.pvd in ParaView; frames in out/cavity2d/catalyst/"
else
  ctest --preset default -j "$(nproc)"
fi
