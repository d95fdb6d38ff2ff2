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

if [ "$mode" = demo ]; then
  # Only what the demo runs: the CLI with ParaView, on the CPU (no CUDA code, no tests).
  cmake --preset demo
  cmake --build --preset demo -j "$(nproc)"
  # A 3D nickel dendrite growing from a nucleus: the phi = 0.5 surface rendered by ParaView Catalyst
  # from a turning camera (out/dendrite3d/catalyst/), the VTK series beside it. ParaView renders
  # through X: xvfb-run gives it a virtual display.
  xvfb-run -a build-demo/bin/octoflow run data/cases/dendrite3d.toml
  echo "demo: open out/dendrite3d/dendrite3d.pvd and out/dendrite3d/surface.pvd in ParaView; frames in out/dendrite3d/catalyst/"
else
  cmake --preset default
  cmake --build --preset default -j "$(nproc)"
  ctest --preset default -j "$(nproc)"
fi
