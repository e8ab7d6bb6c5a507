#!/usr/bin/env bash
# Session 40's runner (written without a device: the session had 156 s of device time).
# main (`cand`) against gseed (docs/wip/group-seed.patch: builds store each list in compact
# 32-row groups, the device keeps every group's centre, and the seed reads the 4 groups of
# a query's first probe whose centres are nearest it instead of the list's first 128
# rows; the CPU model keeps 28.8 rows a query against main's 62.9 on lowdim-i8 × 10), on
# every seeded set, then gseed's GPU tests. Build on dev, from main `67cc23e` or later
# with the same crates (bins.tar.xz holds session 39's builds too, for 3-kr.sh):
#   TESTS=1 bash scripts/gpu-build-variants.sh cand= gseed=docs/wip/group-seed.patch
#   tar cJf gpu-run/bins.tar.xz -C gpu-run/bin . && rm -rf gpu-run/bin
# (untar with -C gpu-run/bin). LIMIT (default 420) bounds the call.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s40gseed
L=${LIMIT:-420}
b=gpu-run/bin
SETS="lowdim-i8 lowdim-f16 images wide-i8" ROUNDS=${ROUNDS:-2} ab_against $((L * 50 / 100)) cand gseed
grep -E "build|layout|recall" "$W/ab.log" | tail -40 > "$OUT/ab-build.txt" 2>/dev/null
# The seed's three forms (Groups among them) on every type, the device build's layout
# (compact groups on both sides), and device-resident search (group centres from lay_out).
SINCE=$SECONDS MIN_LEFT=10 bash scripts/gpu-tests.sh $b/test-ivf-gseed $W $((L - 3)) \
  list_major_bounds_seeded an_index_built_on_the_device device_resident list_major_tiles
runner_finish
