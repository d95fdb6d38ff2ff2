#!/usr/bin/env bash
# Installs the Debian 12 packages octoflow needs, only those that are missing (idempotent).
# The package set is documented in docs/ARCHITECTURE.md (Build).
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libtomlplusplus-dev libcli11-dev libfmt-dev
  libopenmpi-dev openmpi-bin
  libgtest-dev libgmock-dev
  paraview-dev python3-paraview xvfb xauth
  # the ParaView GUI and xwd (the plugin's GUI test grabs the screen)
  paraview x11-apps
  # what Debian's ParaView CMake config needs but does not pull in
  libfreetype-dev libx11-dev libglew-dev libxml2-dev libnetcdf-dev libhdf5-dev
  libboost-dev libutfcpp-dev liblz4-dev libdouble-conversion-dev
  # paraview_add_plugin needs Qt5 and xmlpatterns
  qtbase5-dev qttools5-dev qtxmlpatterns5-dev-tools
  # the sanitizer and fuzzing build (preset asan, scripts/reliability_check.sh): clang 16, as
  # Debian 12's default clang 14 has no _Float16 on x86 (FP16 population storage); its compiler-rt
  # (ASan, UBSan, libFuzzer), OpenMP runtime, and llvm-symbolizer for readable sanitizer reports
  clang-16 libclang-rt-16-dev libomp-16-dev llvm-16
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "octoflow: all Debian packages present"
  exit 0
fi

echo "octoflow: installing ${#missing[@]} missing Debian packages: ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "octoflow: packages installed"
