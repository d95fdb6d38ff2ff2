#!/usr/bin/env bash
# The drag coefficient of a run: the mean of forces.csv's cd column over the last quarter of its rows.
#   bench/mean_cd.sh <forces.csv>
set -euo pipefail
awk -F, 'NR == 1 { for (c = 1; c <= NF; ++c) if ($c == "cd") col = c; next }
         { cd[++n] = $col }
         END { from = int(0.75 * n) + 1; s = 0; for (i = from; i <= n; ++i) s += cd[i]; printf "%.4f", s / (n - from + 1) }' "$1"
