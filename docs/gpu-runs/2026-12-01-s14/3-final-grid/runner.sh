#!/usr/bin/env bash
# Session 14, final call: cuVS 26.10 and ltokit side by side (scripts/gpu-grid.sh) on
# main's final build, then the short IVF GPU tests and ltokit's core GPU tests.
set -u
mkdir -p gpu-run/bin; tar xJf gpu-run/bins.tar.xz -C gpu-run/bin
TESTS="a_plan_loaded_for_a_narrow device_resident small_batches a_non_finite an_index_built probing_every_list kernels_linked_ahead auto_takes list_major_lists_longer" DEADLINE=480 bash scripts/gpu-grid.sh $OUT
timeout 100 gpu-run/bin/test-ltokit-gpu-test --ignored --test-threads=1 > $OUT/core-gpu-tests.txt 2>&1; echo "core gpu tests exit $?"
grep -E "test result|FAILED|panicked" $OUT/core-gpu-tests.txt | head
