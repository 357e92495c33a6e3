#!/usr/bin/env bash
# The chunk_loop fixtures on the GPU: the input and the output of every positive case of
# tests/passes/chunk_loop/ through the gate's compile and correct stages on the cuda
# backend (the scale workload's test sizes and seeds). Run on the device machine:
#   bash bench/chunk_loop_gpu.sh > $OUT/chunk_loop_fixtures_h200.txt
# (carry .whl). Saved: bench/results/chunk_loop_fixtures_h200.txt.
set -uo pipefail
bash tools/gpu-run.sh setup >/dev/null && export PYTHONPATH=/tmp/site:$PWD
echo "# bash bench/chunk_loop_gpu.sh on $(nvidia-smi --query-gpu=name --format=csv,noheader)"
fail=0
for f in tests/passes/chunk_loop/*.cu; do
  case "$f" in *.expected.cu|*/neg_*) continue ;; esac
  for k in "$f" "${f%.cu}.expected.cu"; do
    python3 -m kltrans gate "$k" --workload tests/data/workloads/scale --backend cuda \
      --stages compile,correct > /tmp/chunk_gate.txt 2>&1
    rc=$?
    [ $rc -eq 0 ] || fail=1
    echo "$(basename "$k"): exit $rc: $(tail -1 /tmp/chunk_gate.txt)"
  done
done
exit $fail
