#!/usr/bin/env bash
# The H200 effects of the CPU-walked lineages, every gated pass fixture's output gated on
# the GPU, and the GPU tests, in one device call (about 7 minutes on 2 x H200).
#
#   device call (kind nvidia-h200-x2, carry [".whl"]):  bash tools/measure-gpu.sh run
#     (or its two halves: "checks" -- GPU tests, then the pass gate -- and "lineages")
#   then here:                                          bash tools/measure-gpu.sh keep DIR
#     (DIR = the call's files_at) puts the measured lineages into corpus/*/lineage, the
#     pass gate table into bench/results/pass_effect_gate.{txt,json} and the pytest log
#     into bench/results/gpu_tests.txt; then re-extract the cards:
#     .venv/bin/kltrans skills extract corpus/*/lineage -o skills
set -euo pipefail
cd "$(dirname "$0")/.."
run_checks() {  # the GPU tests first, alone, then every gated pass fixture's output
  { echo "# command: python3 -m pytest -m gpu -p no:cacheprovider -v tests/  ($(nvidia-smi -L | head -1), $(date -u +%F))"
    timeout "${TESTS_SECONDS:-200}" python3 -m pytest -m gpu -p no:cacheprovider -v \
      -o addopts="-ra --import-mode=importlib" tests/ 2>&1 | tail -150; } > "$OUT/gpu_tests.txt" || true
  tail -3 "$OUT/gpu_tests.txt"
  timeout "${GATE_SECONDS:-150}" python3 bench/pass_effect.py --out "$OUT" --part gate \
    --jobs $(( ngpu * 5 )) | tail -2 || echo "pass gate stopped"
}
run_lineages() {  # every CPU-walked lineage's steps, timed; all lineages at once, each step
  # under the per-GPU lock; an effect is written the moment it is measured, so a stopped
  # measure keeps its part (the next call times the rest)
  mkdir -p "$OUT/lin"
  for lin in corpus/*/lineage; do
    w=$(basename "$(dirname "$lin")")
    python3 -c "import json,sys; d=json.load(open('$lin/lineage.json')); sys.exit(0 if d['config']['backend']=='cpu' else 1)" || continue
    cp -r "$lin" "$OUT/lin/$w"
    timeout "${MEASURE_SECONDS:-300}" python3 -m kltrans lineage "corpus/$w" --measure \
      --out "$OUT/lin/$w" --jobs $(( ngpu * 2 )) --quiet > "$OUT/lin/$w.log" 2>&1 &
  done
  wait || true
  for f in "$OUT"/lin/*.log; do echo "$(basename "$f" .log): $(tail -1 "$f")"; rm -f "$f"; done
  tar czf "$OUT/lineages.tgz" -C "$OUT/lin" . && rm -rf "$OUT/lin"
}
case "${1:-}" in
  run|checks|lineages)
    bash tools/gpu-run.sh setup >/dev/null
    export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
    mkdir -p "$OUT"
    ngpu=$(nvidia-smi -L | wc -l)
    case "$1" in
      run) run_checks; run_lineages ;;
      checks) run_checks ;;
      lineages) run_lineages ;;
    esac ;;
  keep)
    d="${2:?files_at of the call}"
    [ -f "$d/gpu_tests.txt" ] && cp "$d/gpu_tests.txt" bench/results/gpu_tests.txt
    for f in pass_effect_gate.txt pass_effect_gate.json; do [ -f "$d/$f" ] && cp "$d/$f" bench/results/; done
    if [ -f "$d/lineages.tgz" ]; then
      tmp=$(mktemp -d) && tar xzf "$d/lineages.tgz" -C "$tmp"
      for w in "$tmp"/*; do cp -r "$w/." "corpus/$(basename "$w")/lineage/"; done
      rm -rf "$tmp"
    fi ;;
  *)
    echo "usage: tools/measure-gpu.sh run | checks | lineages | keep DIR" >&2; exit 2 ;;
esac
