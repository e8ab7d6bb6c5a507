#!/usr/bin/env bash
# Session 48's last call (carry gpu-run): BUILD's ncu timelines of images × 10 and × 20
# (two-phase batches), then full ncu profiles of their second-phase scans (the second
# lmscan launch), summarised into OUT/sass.txt, within LIMIT s.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s48d
L=${LIMIT:-150} B=${BUILD:-c128}
python3 scripts/make-bench-data.py /tmp/bench-data images > /dev/null 2>&1
timeline "$B" images 256 10 $((L - 90))
timeline "$B" images 256 20 $((L - 70))
full_profile img10b "$B" 1 images 256 10 $((L - 35))
full_profile img20b "$B" 1 images 256 20 $((L - 5))
profile_summaries img10b img20b
for n in img10b img20b; do xz -9 -c "$W/full-$n-details.txt" > "$OUT/full-$n-details.txt.xz" 2>/dev/null; done
runner_finish
