#!/usr/bin/env bash
# Time to solution of the octree LBM against the uniform grid at its finest spacing: the sphere at
# Re = 100 (data/cases/sphere_re100_amr.toml, data/cases/sphere_re100_uniform.toml), the same
# physical time on both. Prints each run's wall time (the whole `octoflow run`, start-up included),
# its drag coefficient (the mean of forces.csv's cd over the last quarter of the run), the speed-up
# and the drag difference.
#   bench/sphere_time_to_solution.sh [octoflow binary] [backend] [output directory]
# No -e: a run that fails or diverges still prints its line, and the other case still runs.
set -uo pipefail
octoflow=${1:-build/bin/octoflow}
backend=${2:-cuda}
out=${3:-out/sphere_re100}
here=$(cd "$(dirname "$0")/.." && pwd)

meanCd() { "$here/bench/mean_cd.sh" "$1"; }  # the mean of cd over the last quarter of the rows

declare -A seconds cd
for kind in amr uniform; do
  start=$(date +%s.%N)
  "$octoflow" run "$here/data/cases/sphere_re100_$kind.toml" --backend "$backend" --output "$out/$kind" 2>&1 | tail -n 2
  end=$(date +%s.%N)
  seconds[$kind]=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')
  cd[$kind]=$(meanCd "$out/$kind/forces.csv")
  echo "sphere Re 100, $kind: ${seconds[$kind]} s, cd ${cd[$kind]}"
done
awk -v ta="${seconds[amr]}" -v tu="${seconds[uniform]}" -v ca="${cd[amr]}" -v cu="${cd[uniform]}" \
  'BEGIN { printf "time to solution: octree %.2f s, uniform %.2f s: %.1fx; cd octree %.4f, uniform %.4f (%+.2f %%); Clift-Grace-Weber 1.087\n", ta, tu, tu / ta, ca, cu, 100 * (ca / cu - 1) }'
