#!/usr/bin/env bash
# Session 15, call 5: the list-major GPU tests of `fo` (a slot's first offer takes the
# sorted candidates as its list) against the CPU reference.
set -u
mkdir -p gpu-run/bin; tar xJf gpu-run/fo.tar.xz -C gpu-run/bin
for t in list_major_tiles list_major_bounds_seeded; do
  timeout 80 gpu-run/bin/test-ivf-fo --ignored --test-threads=1 --nocapture $t 2>&1 | grep -E "^test |test result|panicked|checked"
done
