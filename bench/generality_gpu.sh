#!/usr/bin/env bash
# The H200 columns of the generality report (corpus/wild): each expert against its naive
# version, paired, and the forward search from each naive version (budget 30) timed
# against the lineage's expert; first the GPU test of a kernel gated twice (C++ linkage
# and a template, in one process and in a new one). One device call (about 5 minutes):
#
#   bash bench/generality_gpu.sh "$OUT"            (carry [".whl"])
#
# then here, merged with a CPU run's explain and walk columns:
#   kltrans generality corpus/wild --measures none --merge CPU.json \
#       --merge generality_h200_speedup.json --merge generality_h200_forward.json \
#       --out bench/results --name generality_baseline
set -uo pipefail
out=${1:?usage: generality_gpu.sh OUT}
cd "$(dirname "$0")/.."
bash tools/gpu-run.sh setup >/dev/null || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
dev=$(nvidia-smi --query-gpu=name,uuid --format=csv,noheader | head -1)
cmd='python3 -m pytest -m gpu -p no:cacheprovider -v -o addopts="-ra --import-mode=importlib" tests/test_gate_twice_gpu.py'
{ echo "# command: $cmd  (GPU: $dev, $(date -u +%F))"; eval "$cmd" 2>&1; } \
  | tee "$out/gate_twice_gpu.txt" | tail -4
for m in speedup forward; do
  python3 -m kltrans generality corpus/wild --backend cuda --measures $m --budget 30 \
    --jobs 8 --out "$out" --name "generality_h200_$m" 2>&1 \
    | tee "$out/generality_h200_$m.log" | tail -22
done
# the same GPU test on the compile and run modules as they were before the fix (carried in
# .devtmp/ when checking that the test fails without it)
if [ -f .devtmp/compile_head.py ]; then
  rm -rf /tmp/head && mkdir -p /tmp/head && cp -r kltrans passes tests setup.cfg /tmp/head/
  cp .devtmp/compile_head.py /tmp/head/kltrans/gate/compile.py
  cp .devtmp/run_head.py /tmp/head/kltrans/gate/run.py
  (cd /tmp/head && PYTHONPATH=/tmp/site:/tmp/head eval "$cmd" 2>&1) \
    | tee "$out/gate_twice_gpu_before_fix.txt" | tail -4
fi
