#!/usr/bin/env bash
# Pass fixtures and walks on the GPU. Usage (on the device machine, carry .whl):
#   bash bench/fixtures_gpu.sh FIXTURE.cu... [-- LINEAGE[:EXPERT]...]
# Each positive fixture (not *.expected.cu, not neg_*) is gated with its golden output
# through the compile and correct stages on the cuda backend, against the workload of
# its "// GATE:" line (DEFAULT_WORKLOAD when it has none; not gated when neither is
# set). Each lineage folder after "--" is walked on the cuda backend from EXPERT (default:
# its last version); the walk's lineage.json goes to $OUT/walk-NAME.json. Exit 1 if a
# gate fails. Callers: bench/fold_fixtures_gpu.sh, bench/chunk_loop_gpu.sh,
# bench/share_row_gpu.sh.
set -uo pipefail
bash tools/gpu-run.sh setup >/dev/null && export PYTHONPATH=/tmp/site:$PWD
echo "# bash ${CALLER:-bench/fixtures_gpu.sh} on $(nvidia-smi --query-gpu=name --format=csv,noheader)"
fail=0
fixtures=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do fixtures+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
for f in "${fixtures[@]}"; do
  case "$f" in *.expected.cu|*/neg_*) continue ;; esac
  w=$(sed -n 's|^// GATE: *\([^ ]*\).*|\1|p' "$f" | head -1)
  w=${w:-${DEFAULT_WORKLOAD:-}}
  if [ -z "$w" ]; then echo "$(basename "$f"): no GATE workload, not gated"; continue; fi
  for k in "$f" "${f%.cu}.expected.cu"; do
    python3 -m kltrans gate "$k" --workload "$w" --backend cuda \
      --stages compile,correct > /tmp/fixture_gate.txt 2>&1
    rc=$?
    [ $rc -eq 0 ] || fail=1
    echo "$(basename "$k") ($w): exit $rc: $(tail -1 /tmp/fixture_gate.txt)"
  done
done
for spec in "$@"; do
  l=${spec%%:*}
  e=${spec#*:}
  [ "$e" = "$spec" ] && e=$(ls "$l"/v*.cu | sort -V | tail -1)
  n=$(basename "$l")-$(basename "$e" .cu)
  python3 -m kltrans lineage "$l" --expert "$e" --backend cuda --out "/tmp/walk-$n" --quiet \
    > "/tmp/walk-$n.txt" 2>&1
  rc=$?
  echo "walk $l from $(basename "$e") (cuda): exit $rc: $(python3 -c "
import json
d = json.load(open('/tmp/walk-$n/lineage.json'))
t = d['transitions']
print(d['termination']['kind'], 'in', len(t), 'steps:', ' '.join(s['spec'] for s in t))
" 2>&1 | tail -1)"
  [ -n "${OUT:-}" ] && cp "/tmp/walk-$n/lineage.json" "$OUT/walk-$n.json" 2>/dev/null
done
exit $fail
