#!/usr/bin/env bash
# The corpus experts walked on the GPU (issue 8): steps chosen by time, in chunks that fit
# the device's 10-minute calls. An interrupted walk resumes from what it wrote.
#
# Walks not at their end yet are committed under bench/walk-gpu/W (their logs are not), so
# the next session resumes them. Each device call (kind nvidia-h200-x2, carry [".whl"]):
#   WALKS="histogram transpose" bash tools/walk-gpu.sh run
#       walks each named expert (default: every corpus workload whose committed lineage was
#       walked on the CPU) into bench/walk-gpu/W, all at once, resuming what is there;
#       stops before WALK_SECONDS (560); SIDE_MS (default 100) is each side of a paired
#       trial; PROBES (default 6) the probes per step; WALK_TEST=1 also runs
#       tests/test_walk_gpu.py alone first; SLOTS_PER_GPU (default 3) gate slots per GPU and
#       walk; MAX_BACKTRACKS (default 8) the dead ends a walk may back out of. Each step's seconds_by_phase (lineage.json) says where its time went; a
#       table of the walks (tools/walk-gpu-summary.py) is printed last;
#       REDO="layernorm:3 scan:9" walks committed lineages again from those steps (kltrans
#       lineage --redo-from): corpus/W/lineage is copied to bench/walk-gpu/W where that is
#       not there yet, then walked from step N by this version's rules (later calls resume)
#   (a walk already under bench/walk-gpu/W is cut back here first: bash tools/walk-gpu.sh redo W N)
# then here, after each call:
#   bash tools/walk-gpu.sh keep DIR     # DIR = the call's files_at: bench/walk-gpu/ as it was left
# the composite round trips of installed lineages (steps whose inverse alone is slower):
#   COMPOSITE="softmax scan" bash tools/walk-gpu.sh composite   # on the device
#   bash tools/walk-gpu.sh keep-composite DIR                    # here: into corpus/W/lineage
# and once walks reach their end:
#   bash tools/walk-gpu.sh install      # each walk ended "naive" becomes corpus/W/lineage (the CPU
#                                       # walk moves to corpus/W/lineage-cpu); then re-extract:
#                                       # .venv/bin/kltrans skills extract corpus/*/lineage -o skills
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=bench/walk-gpu
cpu_walked() {  # corpus workloads whose committed lineage was walked on the CPU
  for lin in corpus/*/lineage; do
    python3 -c "import json,sys; d=json.load(open('$lin/lineage.json')); sys.exit(0 if d['config']['backend']=='cpu' else 1)" \
      && basename "$(dirname "$lin")"
  done
}
case "${1:-}" in
  run)
    bash tools/gpu-run.sh setup >/dev/null
    export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
    mkdir -p "$OUT" "$DIR"
    ngpu=$(nvidia-smi -L | wc -l)
    if [ -n "${WALK_TEST:-}" ]; then
      { echo "# command: python3 -m pytest -m gpu -p no:cacheprovider -v tests/test_walk_gpu.py  ($(nvidia-smi -L | head -1), $(date -u +%F))"
        timeout 240 python3 -m pytest -m gpu -p no:cacheprovider -v \
          -o addopts="-ra --import-mode=importlib" tests/test_walk_gpu.py 2>&1 | tail -60; } \
        > "$OUT/walk_test.txt" || true
      tail -2 "$OUT/walk_test.txt"
      grep -q " passed" "$OUT/walk_test.txt" && ! grep -q " failed" "$OUT/walk_test.txt" \
        || { echo "the GPU walk tests did not pass: no walks this call"; exit 1; }
    fi
    left=$(( ${WALK_SECONDS:-560} - SECONDS ))
    declare -A redo=()
    for r in ${REDO:-}; do
      w=${r%%:*}
      if [ ! -d "$DIR/$w" ]; then cp -r "corpus/$w/lineage" "$DIR/$w" && redo[$w]=${r##*:}; fi
    done
    walks=${WALKS:-}
    [ -z "$walks" ] && [ -n "${REDO:-}" ] && walks=$(for r in $REDO; do echo "${r%%:*}"; done)
    [ -z "$walks" ] && walks=$(cpu_walked)
    for w in $walks; do
      timeout --signal=INT --kill-after=20 "$left" python3 -m kltrans lineage "corpus/$w" \
        --backend cuda --out "$DIR/$w" --jobs $(( ngpu * ${SLOTS_PER_GPU:-3} )) \
        --side-ms "${SIDE_MS:-100}" --probes "${PROBES:-6}" --max-backtracks "${MAX_BACKTRACKS:-8}" \
        ${redo[$w]:+--redo-from ${redo[$w]}} >> "$DIR/$w.log" 2>&1 &
    done
    wait || true
    for f in "$DIR"/*.log; do echo "$(basename "$f" .log): $(tail -1 "$f")"; done
    python3 tools/walk-gpu-summary.py "$DIR" || true
    tar czf "$OUT/walks.tgz" -C "$DIR" . ;;
  composite)
    # the composite round trip (kltrans lineage --composite) of every step of the named
    # installed lineages whose inverse alone is slower; COMPOSITE="W ..." (default: all)
    bash tools/gpu-run.sh setup >/dev/null
    export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
    mkdir -p "$OUT/composite"
    for w in ${COMPOSITE:-$(ls corpus | grep -v heldout)}; do
      [ -f "corpus/$w/lineage/lineage.json" ] || continue
      cp -r "corpus/$w/lineage" "$OUT/composite/$w"
      { echo "# command: kltrans lineage corpus/$w --out corpus/$w/lineage --composite --side-ms ${SIDE_MS:-100} --max-back ${MAX_BACK:-20} --jobs 4   ($(nvidia-smi -L | head -1), $(date -u +%F))"
        timeout --signal=INT --kill-after=20 "${COMPOSITE_SECONDS:-300}" python3 -m kltrans lineage \
          "corpus/$w" --out "$OUT/composite/$w" --composite --side-ms "${SIDE_MS:-100}" \
          --max-back "${MAX_BACK:-20}" --jobs 4 2>&1; } > "$OUT/composite/$w.txt" &
    done
    wait || true
    tail -n 12 "$OUT"/composite/*.txt
    # only the lineages' files come back (one archive: the states did not change)
    (cd "$OUT/composite" && tar czf ../composite.tgz */lineage.json */lineage.md */time.svg \
      && find . -mindepth 1 -maxdepth 1 -type d -exec rm -rf {} +) ;;
  keep-composite)
    # the lineages timed by "composite" (DIR = the call's files_at) replace the installed ones
    d="${2:?files_at of the call}"
    t=$(mktemp -d) && tar xzf "$d/composite.tgz" -C "$t"
    for f in "$d"/composite/*.txt; do
      w=$(basename "$f" .txt)
      [ -f "$t/$w/lineage.json" ] && cp "$t/$w/lineage.json" "$t/$w/lineage.md" "$t/$w/time.svg" "corpus/$w/lineage/"
      cat "$f" >> bench/results/composite_gpu.txt
    done
    rm -rf "$t" ;;
  redo)
    # here, no GPU needed: a walk already under bench/walk-gpu/W is cut back to before step N
    # (REDO only copies a lineage not there yet), so that the next run walks it again from there
    w="${2:?workload}"; n="${3:?step}"
    [ -f "$DIR/$w/lineage.json" ] || { echo "$DIR/$w: no walk there" >&2; exit 2; }
    .venv/bin/python -c "import sys; from kltrans.lineage import store; from kltrans.lineage.walk import _redo_from
d = store.load(sys.argv[1]); _redo_from(d, sys.argv[1], int(sys.argv[2])); print(sys.argv[1] + ':', len(d['transitions']), 'step(s) kept')" "$DIR/$w" "$n" ;;
  keep)
    d="${2:?files_at of the call}"
    [ -f "$d/walk_test.txt" ] && cp "$d/walk_test.txt" bench/results/walk_test_gpu.txt
    mkdir -p "$DIR" && tar xzf "$d/walks.tgz" -C "$DIR" ;;
  install)
    for lin in "$DIR"/*/lineage.json; do
      w=$(basename "$(dirname "$lin")")
      python3 -c "import json,sys; d=json.load(open('$lin')); sys.exit(0 if (d.get('termination') or {}).get('kind')=='naive' else 1)" \
        || { echo "$w: not at its end yet"; continue; }
      if [ ! -d "corpus/$w/lineage-cpu" ]; then git mv "corpus/$w/lineage" "corpus/$w/lineage-cpu"; else rm -rf "corpus/$w/lineage"; fi
      mkdir -p "corpus/$w/lineage" && cp -r "$DIR/$w/." "corpus/$w/lineage/"
      rm -rf "${DIR:?}/$w" "$DIR/$w.log"
      echo "$w: installed"
    done ;;
  *)
    echo "usage: tools/walk-gpu.sh run | redo W N | keep DIR | install | composite | keep-composite DIR" >&2; exit 2 ;;
esac
