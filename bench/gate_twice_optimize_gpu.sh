#!/usr/bin/env bash
# The new-user report's sequence on the H200, for C++-linkage kernels: optimize A,
# optimize B, optimize A again, then gate B; each command's exit status and last lines.
# Run on this tree, and (when .devtmp/ carries the gate modules from before the cubin
# symbol fallback and the template instantiation) on a copy with those modules.
#
#   bash bench/gate_twice_optimize_gpu.sh "$OUT"        (carry [".whl", ".devtmp"])
set -uo pipefail
out=${1:?usage: gate_twice_optimize_gpu.sh OUT}
cd "$(dirname "$0")/.."
bash tools/gpu-run.sh setup >/dev/null || exit 1
export PYTHONUNBUFFERED=1
w=$PWD/tests/data/generality/mini/scale
k=$(mktemp -d)
cat > "$k/a.cu" <<'EOF'
// kltrans: launch scale grid=ceil_div(n, 256) block=256
__global__ void scale(const float* x, float* y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 3.0f * x[i];
}
EOF
cat > "$k/b.cu" <<'EOF'
// kltrans: launch triple grid=ceil_div(n, 128) block=128
__global__ void triple(const float *in, float *out, int count)
{
    int idx = threadIdx.x + blockIdx.x * blockDim.x;
    if (idx < count) {
        out[idx] = in[idx] * 3.0f;
    }
}
EOF
sequence() {  # $1: the tree to run kltrans from
  local tree=$1
  export KLTRANS_CACHE_DIR=$(mktemp -d)
  for step in "optimize a.cu" "optimize b.cu" "optimize a.cu" "gate b.cu" "gate a.cu"; do
    set -- $step
    if [ "$1" = optimize ]; then
      argv=(optimize "$k/$2" --workload "$w" --backend cuda --budget 3 -o "$k/out-$2")
    else
      argv=(gate "$k/$2" --workload "$w" --backend cuda --stages compile,correct)
    fi
    (cd "$tree" && PYTHONPATH=/tmp/site:$tree python3 -m kltrans "${argv[@]}") > "$k/log" 2>&1
    echo "== kltrans ${argv[*]##*/}: exit $?"
    tail -4 "$k/log"
  done
}
{
  echo "# command: bash bench/gate_twice_optimize_gpu.sh (GPU: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), $(date -u +%F))"
  echo "## this tree"
  sequence "$PWD"
  if [ -f .devtmp/compile_head.py ]; then
    rm -rf /tmp/head && mkdir -p /tmp/head && cp -r kltrans passes skills corpus tests setup.cfg /tmp/head/
    cp .devtmp/compile_head.py /tmp/head/kltrans/gate/compile.py
    cp .devtmp/run_head.py /tmp/head/kltrans/gate/run.py
    echo "## gate compile.py and run.py from before the fixes"
    sequence /tmp/head
  fi
} 2>&1 | tee "$out/gate_twice_optimize_gpu.txt"
