#!/usr/bin/env bash
# The H200 experiment of issue 9 in chunks that fit the device's 10-minute calls.
#
# Each device call (kind nvidia-h200-x2, carry [".whl", "bench/experiment"]):
#   bash tools/experiment-gpu.sh run        # resumes from bench/experiment/, stops before 440 s
#                                           # (EXP_ARGS="--strategies skills" for some runs
#                                           # only, EXP_DIR=DIR to keep them apart)
#                                           # (440 s: the wheels' set-up and the packing come on
#                                           # top, and on 2026-12-01 540 s of runs overran a 600 s call;
#                                           # EXP_SECONDS=N for a shorter call; SLOTS_PER_GPU=K
#                                           # searches share each GPU, default 5: their start-up
#                                           # and compiles overlap, and the per-GPU lock keeps
#                                           # every correctness run and timing alone on the GPU;
#                                           # a run is kept when it ends; one cut short keeps its
#                                           # gate verdicts in checkpoints/ and replays them in
#                                           # the next call; with one GPU use 3-4 at once)
#   a set of its own in EXP_DIR (its files come back packed as $OUT/<basename>.tgz; keep with the same
#   EXP_DIR), e.g. the lineage roots, both card sets in one run so they share their baselines:
#   EXP_DIR=bench/exp-roots SLOTS_PER_GPU=4 EXP_ARGS="--roots loo own --no-corpus --no-heldout \
#     --strategies skills" bash tools/experiment-gpu.sh run
#   (two sets in one call: run gpu-run.sh setup first, then each in the background, then wait)
# before the first call of a new set, here (the baselines already timed are not timed again):
#   EXP_DIR=bench/exp-x bash tools/experiment-gpu.sh seed [RECORD]   # RECORD: default
#                                           # bench/results/experiment.json; its vendor, naive
#                                           # and expert timings become the set's baselines
# then here, after each call:
#   bash tools/experiment-gpu.sh keep DIR   # DIR = the call's files_at: keeps its partial runs
# and when every target is done (the run prints "complete"):
#   bash tools/experiment-gpu.sh report DIR # docs/RESULTS.md, bench/results/experiment.*
#
# bench/experiment/ is ignored by git (.git/info/exclude): it only carries the runs kept so
# far (experiment.partial.json) from one call to the next; every run is written there the
# moment it finishes, so a call cut short loses at most the runs in flight.
set -euo pipefail
cd "$(dirname "$0")/.."
EXP=${EXP_DIR:-bench/experiment}  # EXP_DIR: another set of runs (carry it instead)
unpack() {  # the set's folder from a call's files (DIR/<set>.tgz), unpacked in a temp folder
  local t; t=$(mktemp -d)
  tar xzf "$1/$(basename "$EXP").tgz" -C "$t" && echo "$t/$(basename "$EXP")"
}
case "${1:-}" in
  run)
    bash tools/gpu-run.sh setup >/dev/null
    export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
    out=$OUT/$(basename "$EXP")
    mkdir -p "$out"
    [ -f "$EXP/experiment.partial.json" ] && cp "$EXP/experiment.partial.json" "$out/"
    # the gate verdicts of the runs the last call cut short: they are replayed, not redone
    [ -d "$EXP/checkpoints" ] && cp -r "$EXP/checkpoints" "$out/"
    rc=0
    ngpu=$(nvidia-smi -L | wc -l)
    timeout --signal=INT --kill-after=20 "${EXP_SECONDS:-440}" python3 -m kltrans experiment corpus --budget 30 --seeds 0 \
      --backend cuda --jobs $(( ngpu * ${SLOTS_PER_GPU:-5} )) --out "$out" --resume -q \
      ${EXP_ARGS:-} > "$out/experiment.log" 2>&1 || rc=$?
    tail -12 "$out/experiment.log"
    if [ "$rc" = 0 ]; then echo "complete"; else echo "stopped (rc $rc): run again to resume"; fi
    python3 -c "import json,sys; d=json.load(open('$out/experiment.partial.json')); print('$EXP:', len(d['runs']), 'runs kept')" 2>/dev/null \
      || echo "$EXP: no run kept"
    # one archive per set: the device returns a limited number of files per call, and a
    # set's checkpoints alone can exceed it
    tar czf "$out.tgz" -C "$OUT" "$(basename "$EXP")" && rm -rf "$out" ;;
  seed)
    rec=${2:-bench/results/experiment.json}
    [ -e "$EXP/experiment.partial.json" ] && { echo "$EXP/experiment.partial.json exists: not replaced" >&2; exit 2; }
    grep -qx "/$EXP/" .git/info/exclude 2>/dev/null || echo "/$EXP/" >> .git/info/exclude
    mkdir -p "$EXP"
    .venv/bin/python - "$rec" "$EXP/experiment.partial.json" <<'PY'
import json, sys
from kltrans.syntax.files import atomic_write
rec, out = sys.argv[1:]
d = json.load(open(rec, encoding="utf-8"))
base = d.get("vendors") or d.get("baselines") or {}
atomic_write(out, json.dumps({"budget": d["budget"], "backend": d["backend"],
                              "command": f"baselines from {rec}", "seconds": 0.0,
                              "baselines": base, "runs": []}) + "\n")
print(f"{out}: {len(base)} baselines from {rec}")
PY
    ;;
  keep)
    grep -qx "/$EXP/" .git/info/exclude 2>/dev/null || echo "/$EXP/" >> .git/info/exclude
    src=$(unpack "${2:?files_at of the call}")
    mkdir -p "$EXP" && cp "$src/experiment.partial.json" "$EXP/"
    rm -rf "$EXP/checkpoints"; [ -d "$src/checkpoints" ] && cp -r "$src/checkpoints" "$EXP/"
    true ;;
  report)
    src=$(unpack "${2:?files_at of the last call}")
    cp "$src/experiment.json" bench/results/experiment.json
    .venv/bin/kltrans experiment --merge bench/results/experiment.json --out bench/results \
      --results docs/RESULTS.md --notes docs/results-notes.md ;;
  *)
    echo "usage: tools/experiment-gpu.sh run | seed [RECORD] | keep DIR | report DIR" >&2; exit 2 ;;
esac
