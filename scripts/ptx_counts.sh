#!/usr/bin/env bash
# PTX instructions a node of the uniform LBM's bulk kernels (docs/PERFORMANCE.md, "FP16 and MRT:
# fewer instructions a node"): a proxy for the SASS instructions Nsight Compute counts, for work on
# instruction-bound kernels on a machine with nvcc and no GPU. Compiles one lattice's CUDA engine
# to PTX from a copy of core/ with LES compiled out (the path a run without LES executes) and
# prints, per bulk kernel (storage, collision, odd step, forced, CSM), its instruction count.
# Usage: scripts/ptx_counts.sh [D2Q9|D3Q19|D3Q27] [commit (default: the working tree)]
set -euo pipefail
lattice=${1:-D3Q19}
commit=${2:-}
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -n "$commit" ]; then git archive "$commit" core | tar -x -C "$work"; else cp -r core "$work/"; fi
collision="$work/core/lbm/Collision.hpp"
grep -q "if (model == LesModel::None) return tau;" "$collision" ||
  { echo "ptx_counts.sh: the LES test in $collision has changed; update this script"; exit 2; }
sed -i '0,/if (model == LesModel::None) return tau;/s//if (true) return tau;/' "$collision"
cat > "$work/engine.cu" <<CU
#include "exec/cuda/CudaExecutor.cuh"
#include "lbm/UniformEngine.hpp"
namespace octoflow::lbm::detail {
template <>
std::unique_ptr<UniformEngine> makeCudaEngineFor<$lattice>(const UniformSolverConfig& config, const NodeLists& lists) {
  return makeEngineFor<exec::CudaQueues, $lattice>(config, lists);
}
}  // namespace octoflow::lbm::detail
CU
nvcc -std=c++17 -O3 -arch=sm_90 -I"$work/core" -DOCTOFLOW_HAVE_CUDA=1 -DOCTOFLOW_HAVE_MPI=0 -ptx \
  -o "$work/engine.ptx" "$work/engine.cu"
python3 - "$work/engine.ptx" <<'PY'
import re, subprocess, sys
text = open(sys.argv[1]).read()
rows = []
for entry in re.split(r'\n(?=\.(?:visible|weak)?\s*\.entry|\.entry)', text):
    name = re.search(r'\.entry\s+(\S+)\(', entry)
    if not name:
        continue
    readable = subprocess.run(['c++filt', name.group(1)], capture_output=True, text=True).stdout
    kernel = re.search(r'BulkStep<octoflow::lbm::(\w+), octoflow::lbm::(\w+)Storage, octoflow::lbm::(\w+), '
                       r'(\w+), (\w+), (\w+)>', readable)
    if not kernel:
        continue
    body = entry[entry.find('{'):]
    # An instruction a line; inline asm comes braced ("{  cvt.f32.f16 %f1, %rs1;}"): its braces dropped.
    lines = (line.strip().strip('{}').strip() for line in body.split('\n'))
    count = sum(1 for line in lines if line and not line.startswith(('.', '//')) and not line.endswith(':'))
    rows.append((kernel.groups(), count))
print('lattice storage collision odd forced csm: PTX instructions')
for (lattice, storage, collision, odd, forced, csm), count in sorted(rows):
    print(f'{lattice} {storage} {collision} odd={odd} forced={forced} csm={csm}: {count}')
PY
