#!/usr/bin/env bash
# Session 48's profiles (carry gpu-run): full ncu profiles of BUILD's images × 2 and × 10
# scans and of its images score matrix, summarised into OUT/sass.txt, within LIMIT s.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s48p
L=${LIMIT:-200} B=${BUILD:-c128}
python3 scripts/make-bench-data.py /tmp/bench-data images > /dev/null 2>&1
full_profile img2 "$B" 0 images 256 2 $((L - 110))
full_profile img10 "$B" 0 images 256 10 $((L - 50))
coarse_profile "$B" $((L - 8))
profile_summaries img2 img10 coarse
for n in img2 img10 coarse; do xz -9 -c "$W/full-$n-details.txt" > "$OUT/full-$n-details.txt.xz" 2>/dev/null; done
runner_finish
