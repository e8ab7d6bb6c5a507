#!/usr/bin/env bash
# For the next session's first call (written in session 42): the A/B of main (cand) against
# gsh and gsho (gsh's list order with main's seeds and no group seed at all:
# docs/wip/group-order.patch, branch gsho), cuVS beside cand and gsho when the wheel chunks are in
# /root/cuvs (chunk calls first: docs/gpu-runs/2026-12-07-s41/README.md; two chunks a call
# now that the tracked tree is 19 MiB), and ncu timelines of gsho and cand on lowdim-i8 × 10
# and images × 2. Carry gpu-run (dev's bins.tar.xz holds every build named here).
# LIMIT (default 560) bounds the call; AB_PCT (default 50) the A/B's share. gsho's GPU tests
# (test-ivf-gsho in bins.tar.xz) go in a second call on the same warm machine if it lands:
#   SINCE=0 MIN_LEFT=5 bash scripts/gpu-tests.sh gpu-run/bin/test-ivf-gsho /tmp/t 300 \
#     list_major_bounds_seeded an_index_built_on_the_device device_resident list_major_tiles
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s43
L=${LIMIT:-560}
SETS="${SETS:-lowdim-i8 images lowdim-f16 lowdim wide-i8}" ROUNDS=${ROUNDS:-2} \
  ab_against $((L * ${AB_PCT:-50} / 100)) cand gsh gsho
if [ -f /root/cuvs/p14 ] && [ "${CUVS:-1}" = 1 ]; then cuvs_beside $((L - 50)) cand gsho; fi
timeline gsho lowdim-i8 1024 10 $((L - 36))
timeline cand lowdim-i8 1024 10 $((L - 24))
timeline gsho images 256 2 $((L - 12))
timeline cand images 256 2 "$L"
runner_finish
