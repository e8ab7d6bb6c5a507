#!/usr/bin/env bash
# Session 44: session 43's A/B split into short calls (starts are scarce and a machine can be
# taken back mid-call, losing all its output). BUILDS: the builds (the first is the base),
# AB: the A/B's bound in seconds, TIMELINES: "BUILD:SET:LISTS:PROBES ..." ncu timelines after
# it. Carry gpu-run (dev's bins.tar.xz: cand gsho ts48 cis krn rbs and test-ivf-{gsho,ts48,cis}).
#   BUILDS="cand gsho ts48 cis" AB=200 bash docs/gpu-runs/2026-12-07-s44/ab.sh
#   BUILDS="cand krn rbs ph2" AB=200 TIMELINES="ts48:lowdim-i8:1024:10 cand:lowdim-i8:1024:10" bash …/ab.sh
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s44
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader > "$W/gpu.txt"
bench_arg_build ph2 cand --phases always
SETS=${SETS:-"lowdim-i8 images lowdim-f16 lowdim wide-i8"} ROUNDS=${ROUNDS:-2} ab_against "${AB:-200}" ${BUILDS:?BUILDS}
for t in ${TIMELINES:-}; do
  IFS=: read -r build set lists probes <<< "$t"
  timeline "$build" "$set" "$lists" "$probes" $((SECONDS + 30))
done
cat "$W/gpu.txt"
runner_finish
