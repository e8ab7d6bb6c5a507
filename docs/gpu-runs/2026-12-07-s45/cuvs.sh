#!/usr/bin/env bash
# Session 45, cuVS beside main on the H200: after the cuVS wheel chunks are in /root/cuvs
# (chunk calls: carry cuvs-chunks/pNN two at a time, `mkdir -p /root/cuvs && cp
# cuvs-chunks/p* /root/cuvs/`), carry gpu-run (dev's bins.tar.xz: main, built by
# `bash scripts/gpu-build-variants.sh main=` from the commit under test) and run
#   LIMIT=300 bash docs/gpu-runs/2026-12-07-s45/cuvs.sh
# (the next session's H200 call: LIMIT=240 NO_TIMELINES=1 PROFILE_SCAN=1 bash …/cuvs.sh)
# cuVS and main on the five bench sets at batch 10,000 (scripts/gpu-bench-vs-cuvs.sh), then
# the ncu timelines of images × 2 and lowdim-i8 × 10, then the images' coarse score matrix
# (its third launch: the index build's k-means runs the f32 form, ivf_coarse_scores_mma)
# under ncu's memory and occupancy sections (coarse.txt), as long as LIMIT allows.
# Session 45's first run had no gpu-run/cuvs_bench.py (scripts/gpu-build.sh copies it from
# ../shared/peer/, gpu-build-variants.sh does not): copy it into gpu-run/ before carrying.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s45c
L=${LIMIT:-300}
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader > "$W/gpu.txt"
[ -f gpu-run/cuvs_bench.py ] || echo "gpu-run/cuvs_bench.py missing: copy ../shared/peer/cuvs_bench.py there" >&2
cuvs_beside $((L - 60)) main
[ -n "${NO_TIMELINES:-}" ] || timeline main images 256 2 $((L - 30))
[ -n "${NO_TIMELINES:-}" ] || timeline main lowdim-i8 1024 10 $((L - 15))
left=$((L - SECONDS))
if [ "$left" -gt 20 ]; then
  # shellcheck disable=SC2046 # bench_args is a word list
  timeout "$left" ncu --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
    --section LaunchStats --section WarpStateStats -k regex:ivf_coarse_scores_imma --launch-skip 2 --launch-count 1 \
    gpu-run/bin/ltokit-main $(bench_args main images 256 2) > "$W/coarse.txt" 2>&1
  cp "$W/coarse.txt" "$OUT/"
fi
# With PROFILE_SCAN=1, then a full ncu profile (details and SASS source counters) of the
# images × 2 scan, for where its 126 µs go now (session 32's was before krn, cis and kb):
# W/full-img2-*, in the tarball.
[ -n "${PROFILE_SCAN:-}" ] && full_profile img2 main 0 images 256 2 "$L"
cat "$W/gpu.txt"
runner_finish
