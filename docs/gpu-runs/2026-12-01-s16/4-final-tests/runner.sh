#!/usr/bin/env bash
# Session 16, call 4: the IVF GPU tests the grid's call left out, on the same final build
# (main b2168db: warpsort.cuh's sort and merge became templates, so every kernel that
# includes it was recompiled): every per-query variant, the coarse search of large
# batches, long lists, device builds and linking ahead — through scripts/gpu-tests.sh.
set -u
SECONDS=0
mkdir -p gpu-run/bin; tar xJf gpu-run/bins.tar.xz -C gpu-run/bin
SINCE=$SECONDS bash scripts/gpu-tests.sh gpu-run/bin/test-ltokit-ivf-gpu-test $OUT 570 \
  every_variant large_batches list_major_lists_longer an_index_built_on_the_device kernels_linked_ahead
grep -E "^test |test result|panicked|not run|checked|match|=" $OUT/tests.txt | cut -c1-250
cat $OUT/times.txt
