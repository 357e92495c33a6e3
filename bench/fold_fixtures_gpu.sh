#!/usr/bin/env bash
# The fold fixtures on the GPU: input and output of every positive atomic-per-thread and
# one-per-thread fold case that names a workload (its "// GATE:" line) through the gate's
# compile and correct stages on the cuda backend, then the two reduction lineages of the
# generality suite walked on the cuda backend (where each walk ends). Run on the device
# machine:
#   bash bench/fold_fixtures_gpu.sh > $OUT/fold_fixtures_h200.txt
# (carry .whl). Saved: bench/results/fold_fixtures_h200.txt.
set -uo pipefail
bash tools/gpu-run.sh setup >/dev/null && export PYTHONPATH=/tmp/site:$PWD
echo "# bash bench/fold_fixtures_gpu.sh on $(nvidia-smi --query-gpu=name --format=csv,noheader)"
fail=0
for f in tests/passes/block_reduce_atomic/apt_*.cu tests/passes/grid_stride/opt_fold_*.cu; do
  case "$f" in *.expected.cu) continue ;; esac
  w=$(sed -n 's|^// GATE: *\([^ ]*\).*|\1|p' "$f" | head -1)
  if [ -z "$w" ]; then echo "$(basename "$f"): no GATE workload, not gated"; continue; fi
  for k in "$f" "${f%.cu}.expected.cu"; do
    python3 -m kltrans gate "$k" --workload "$w" --backend cuda \
      --stages compile,correct > /tmp/fold_gate.txt 2>&1
    rc=$?
    [ $rc -eq 0 ] || fail=1
    echo "$(basename "$k") ($w): exit $rc: $(tail -1 /tmp/fold_gate.txt)"
  done
done
for l in reduce-classic reduce-cg; do
  e=$(ls corpus/wild/$l/v*.cu | sort -V | tail -1)
  python3 -m kltrans lineage "corpus/wild/$l" --expert "$e" --backend cuda --out "/tmp/walk-$l" --quiet \
    > "/tmp/walk-$l.txt" 2>&1
  rc=$?
  echo "walk $l (cuda): exit $rc: $(python3 -c "
import json
d = json.load(open('/tmp/walk-$l/lineage.json'))
t = d['transitions']
print(d['termination']['kind'], 'in', len(t), 'steps:', ' '.join(s['spec'] for s in t))
" 2>&1 | tail -1)"
  [ -n "${OUT:-}" ] && cp "/tmp/walk-$l/lineage.json" "$OUT/walk-$l.json" 2>/dev/null
done
exit $fail
