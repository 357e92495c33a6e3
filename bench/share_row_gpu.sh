#!/usr/bin/env bash
# The share-row / unshare-row fixtures on the GPU (input and output of each positive
# case through compile and correct on the cuda backend, against tests/data/workloads/
# rowsoftmax), then walks on the cuda backend from a warp- or block-per-row version of
# three public-style lineages and from cgsum's cooperative-groups warp per row: each
# walk's first step is unshare-row, its measured effect in the walk's lineage.json.
# Run on the device machine:
#   bash bench/share_row_gpu.sh > $OUT/share_row_h200.txt
# (carry .whl). Saved: bench/results/share_row_h200.txt, each walk-NAME.json as
# bench/results/share_row_walk_NAME.json.
CALLER=bench/share_row_gpu.sh exec bash bench/fixtures_gpu.sh tests/passes/share_row/*.cu -- \
  corpus/wild/softmax-raw:corpus/wild/softmax-raw/v2_warp_shfl.cu \
  corpus/wild/layernorm-cg:corpus/wild/layernorm-cg/v3_block_reduce.cu \
  corpus/wild/softmax-cg:corpus/wild/softmax-cg/v2_block_row.cu \
  tests/data/generality/cgsum/rowsum
