#!/usr/bin/env bash
# The GPU tests and the H200 effects of the CPU-walked lineages, in one device call.
#
#   device call (kind nvidia-h200-x2, carry [".whl"]):  bash tools/measure-gpu.sh run
#   then here:                                          bash tools/measure-gpu.sh keep DIR
#     (DIR = the call's files_at) puts the measured lineages into corpus/*/lineage and the
#     pytest log into bench/results/gpu_tests.txt; then re-extract the cards:
#     .venv/bin/kltrans skills extract corpus/*/lineage -o skills
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  run)
    bash tools/gpu-run.sh setup >/dev/null
    export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
    mkdir -p "$OUT/lin"
    ngpu=$(nvidia-smi -L | wc -l)
    { echo "# command: python3 -m pytest -m gpu -p no:cacheprovider -q tests/  ($(nvidia-smi -L | head -1), $(date -u +%F))"
      timeout 240 python3 -m pytest -m gpu -p no:cacheprovider -q -o addopts="-ra --import-mode=importlib" tests/ 2>&1 | tail -30; } > "$OUT/gpu_tests.txt" || true
    tail -3 "$OUT/gpu_tests.txt"
    for lin in corpus/*/lineage; do
      w=$(basename "$(dirname "$lin")")
      python3 -c "import json,sys; d=json.load(open('$lin/lineage.json')); sys.exit(0 if d['config']['backend']=='cpu' else 1)" || continue
      cp -r "$lin" "$OUT/lin/$w"
      timeout 200 python3 -m kltrans lineage "corpus/$w" --measure --out "$OUT/lin/$w" \
        --jobs $(( ngpu * 5 )) --quiet 2>&1 | tail -2 || echo "$w: measure stopped"
    done
    tar czf "$OUT/lineages.tgz" -C "$OUT/lin" . && rm -rf "$OUT/lin" ;;
  keep)
    d="${2:?files_at of the call}"
    cp "$d/gpu_tests.txt" bench/results/gpu_tests.txt
    tmp=$(mktemp -d) && tar xzf "$d/lineages.tgz" -C "$tmp"
    for w in "$tmp"/*; do cp -r "$w/." "corpus/$(basename "$w")/lineage/"; done
    rm -rf "$tmp" ;;
  *)
    echo "usage: tools/measure-gpu.sh run | keep DIR" >&2; exit 2 ;;
esac
