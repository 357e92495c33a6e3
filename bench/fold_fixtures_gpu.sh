#!/usr/bin/env bash
# The fold fixtures on the GPU: input and output of every positive atomic-per-thread and
# one-per-thread fold case that names a workload (its "// GATE:" line) through the gate's
# compile and correct stages on the cuda backend, then the two reduction lineages of the
# generality suite walked on the cuda backend (where each walk ends). Run on the device
# machine:
#   bash bench/fold_fixtures_gpu.sh > $OUT/fold_fixtures_h200.txt
# (carry .whl). Saved: bench/results/fold_fixtures_h200.txt.
CALLER=bench/fold_fixtures_gpu.sh exec bash bench/fixtures_gpu.sh \
  tests/passes/block_reduce_atomic/apt_*.cu tests/passes/grid_stride/opt_fold_*.cu \
  -- corpus/wild/reduce-classic corpus/wild/reduce-cg
