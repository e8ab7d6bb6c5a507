#!/usr/bin/env bash
# For the next session's first call (written in session 42): the A/B of main (cand) against
# gsh and gshl (gsh's list order with main's seeds: docs/wip/group-seed-head.patch +
# docs/wip/gsh-list-seed.patch), cuVS beside cand and gshl when the wheel chunks are in
# /root/cuvs (chunk calls first: docs/gpu-runs/2026-12-07-s41/README.md; two chunks a call
# now that the tracked tree is 19 MiB), and ncu timelines of gshl and cand on lowdim-i8 × 10
# and images × 2. Carry gpu-run (dev's bins.tar.xz holds every build named here).
# LIMIT (default 560) bounds the call; AB_PCT (default 50) the A/B's share.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s43
L=${LIMIT:-560}
SETS="${SETS:-lowdim-i8 images lowdim-f16 lowdim wide-i8}" ROUNDS=${ROUNDS:-2} \
  ab_against $((L * ${AB_PCT:-50} / 100)) cand gsh gshl
if [ -f /root/cuvs/p14 ] && [ "${CUVS:-1}" = 1 ]; then cuvs_beside $((L - 50)) cand gshl; fi
timeline gshl lowdim-i8 1024 10 $((L - 36))
timeline cand lowdim-i8 1024 10 $((L - 24))
timeline gshl images 256 2 $((L - 12))
timeline cand images 256 2 "$L"
runner_finish
