#!/usr/bin/env bash
# The chunk_loop fixtures on the GPU: the input and the output of every positive case of
# tests/passes/chunk_loop/ through the gate's compile and correct stages on the cuda
# backend (the scale workload's test sizes and seeds). Run on the device machine:
#   bash bench/chunk_loop_gpu.sh > $OUT/chunk_loop_fixtures_h200.txt
# (carry .whl). Saved: bench/results/chunk_loop_fixtures_h200.txt.
CALLER=bench/chunk_loop_gpu.sh DEFAULT_WORKLOAD=tests/data/workloads/scale \
  exec bash bench/fixtures_gpu.sh tests/passes/chunk_loop/*.cu
