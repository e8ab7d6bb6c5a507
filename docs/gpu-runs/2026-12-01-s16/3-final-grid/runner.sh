#!/usr/bin/env bash
# Session 16, final call: cuVS 26.10 and ltokit side by side (scripts/gpu-grid.sh) on
# main's final build (the score-only seed), then the list-major GPU tests and the short
# IVF GPU tests against the CPU reference, and ltokit's core GPU tests.
set -u
mkdir -p gpu-run/bin; tar xJf gpu-run/bins.tar.xz -C gpu-run/bin
TESTS="list_major_bounds_seeded list_major_tiles a_plan_loaded_for_a_narrow device_resident small_batches a_non_finite probing_every_list auto_takes" DEADLINE=480 bash scripts/gpu-grid.sh $OUT
timeout 90 gpu-run/bin/test-ltokit-gpu-test --ignored --test-threads=1 > $OUT/core-gpu-tests.txt 2>&1; echo "core gpu tests exit $?"
grep -E "test result|FAILED|panicked" $OUT/core-gpu-tests.txt | head
