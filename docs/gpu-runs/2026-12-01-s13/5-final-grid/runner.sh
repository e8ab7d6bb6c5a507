#!/usr/bin/env bash
# Session 13, final call: cuVS 26.10 and ltokit side by side on the same files
# (scripts/gpu-grid.sh: batches 10,000 and 1,000, the grid sets and the two wide ones),
# ltokit with the candidate room per tile size (wide-room), the coarse score matrix at
# five blocks an SM, and the f16 score matrix for f16 and 8-bit queries; then the GPU tests
# on these kernels, every_variant last with the time left.
set -u
TESTS="large_batches small_batches_split a_non_finite device_resident an_index_built list_major_tiles list_major_bounds_seeded list_major_lists_longer probing_every_list kernels_linked_ahead auto_takes every_variant" \
  DEADLINE=565 bash scripts/gpu-grid.sh "$OUT"
