#!/usr/bin/env bash
# Session 28, call 2 (planned; about 560 s): the IVF GPU tests of one build (BUILD,
# default prev: gpu-run/bin/test-ivf-BUILD from `TESTS=1 bash scripts/gpu-build-variants.sh
# BUILD=...`), every_variant_matches and list_major_tiles first and alone — they timed out
# at 585 s beside the others in sessions 26 and 27, when each linked its plans into an
# empty test cache one at a time. So the test cache (the tests' engine keeps it at
# $TMPDIR/ltokit-ivf-gpu-test-cache) is warmed first, 16 links at a time, with every plan
# of capacity 1, 16, 128 or 1,024 (k = 1, 10, 100, 700), linked for any dimension or for
# 64 or 128, and every plan that is neither a scan nor a list-major scan (1,441 plans of
# main's bundle on 2026-12-04, about 50 s on 16 cores at the 0.54 core-seconds a link
# measured on the build machine).
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s28b
build=${BUILD:-prev}
cache=${TMPDIR:-/tmp}/ltokit-ivf-gpu-test-cache
gpu-run/bin/ltokit-$build bundle inspect gpu-run/bin/ivf-$build.ltkb | awk '$1 == "plan" {print $2}' > $W/all-plans.txt
{ grep -E '_c(1|16|128|1024)_' $W/all-plans.txt | grep -vE '_d(96|100|200|256|384)_'
  grep -vE '^(lmscan|scan)_' $W/all-plans.txt | grep -vE '_c(1|16|128|1024)_'; } | sort -u > $W/test-plans.txt
gpu-run/bin/ltokit-$build warmup --bundle gpu-run/bin/ivf-$build.ltkb --arch native --jobs 16 \
  --plans $W/test-plans.txt --cache-dir "$cache" > $W/warmup.txt 2>&1
echo "warmup at $SECONDS s: $(tail -n 1 $W/warmup.txt)" >> $W/times.txt
SINCE=$SECONDS bash scripts/gpu-tests.sh gpu-run/bin/test-ivf-$build $W 585 every_variant_matches \
  list_major_tiles list_major_bounds_seeded small_batches_cut device_resident list_major_lists_longer \
  probing_every_list an_index_built eight_bit_distances large_batches repeated_device auto_takes \
  a_plan_loaded a_non_finite small_batches_split kernels_linked_ahead
runner_finish
