#!/usr/bin/env bash
# The H200 effects of the CPU-walked lineages, every gated pass fixture's output gated on
# the GPU, and the GPU tests, in one device call (about 7 minutes on 2 x H200).
#
#   device call (kind nvidia-h200-x2, carry [".whl"]):  bash tools/measure-gpu.sh run
#   then here:                                          bash tools/measure-gpu.sh keep DIR
#     (DIR = the call's files_at) puts the measured lineages into corpus/*/lineage, the
#     pass gate table into bench/results/pass_effect_gate.{txt,json} and the pytest log
#     into bench/results/gpu_tests.txt; then re-extract the cards:
#     .venv/bin/kltrans skills extract corpus/*/lineage -o skills
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  run)
    bash tools/gpu-run.sh setup >/dev/null
    export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
    mkdir -p "$OUT/lin"
    ngpu=$(nvidia-smi -L | wc -l)
    for lin in corpus/*/lineage; do
      w=$(basename "$(dirname "$lin")")
      python3 -c "import json,sys; d=json.load(open('$lin/lineage.json')); sys.exit(0 if d['config']['backend']=='cpu' else 1)" || continue
      cp -r "$lin" "$OUT/lin/$w"
      timeout 120 python3 -m kltrans lineage "corpus/$w" --measure --out "$OUT/lin/$w" \
        --jobs $(( ngpu * 5 )) --quiet 2>&1 | tail -2 || echo "$w: measure stopped"
    done
    timeout 150 python3 bench/pass_effect.py --out "$OUT" --part gate --jobs $(( ngpu * 5 )) | tail -2 \
      || echo "pass gate stopped"
    { echo "# command: python3 -m pytest -m gpu -p no:cacheprovider -q tests/  ($(nvidia-smi -L | head -1), $(date -u +%F))"
      timeout 200 python3 -m pytest -m gpu -p no:cacheprovider -q -o addopts="-ra --import-mode=importlib" tests/ 2>&1 | tail -30; } > "$OUT/gpu_tests.txt" || true
    tail -3 "$OUT/gpu_tests.txt"
    tar czf "$OUT/lineages.tgz" -C "$OUT/lin" . && rm -rf "$OUT/lin" ;;
  keep)
    d="${2:?files_at of the call}"
    cp "$d/gpu_tests.txt" bench/results/gpu_tests.txt
    for f in pass_effect_gate.txt pass_effect_gate.json; do [ -f "$d/$f" ] && cp "$d/$f" bench/results/; done
    tmp=$(mktemp -d) && tar xzf "$d/lineages.tgz" -C "$tmp"
    for w in "$tmp"/*; do cp -r "$w/." "corpus/$(basename "$w")/lineage/"; done
    rm -rf "$tmp" ;;
  *)
    echo "usage: tools/measure-gpu.sh run | keep DIR" >&2; exit 2 ;;
esac
