#!/usr/bin/env bash
# Session 47, cuVS beside BUILDS (default main) on whatever card comes: after the cuVS
# wheel chunks are in /root/cuvs (chunk calls: carry cuvs-chunks/pNN, `mkdir -p /root/cuvs
# && cp cuvs-chunks/p* /root/cuvs/`), carry gpu-run (dev's bins.tar.xz, built by
# `bash scripts/gpu-build-variants.sh main= …` and tarred with XZ_OPT=-9) and run
#   BUILDS="main fsel" LIMIT=330 bash docs/gpu-runs/2026-12-07-s47/cuvs.sh
# cuVS and each build on the five bench sets at batch 10,000 (scripts/gpu-bench-vs-cuvs.sh:
# b10k-NAME.md), then ncu timelines of the first build on images × 2 and lowdim-i8 × 10
# while LIMIT allows.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s47c
L=${LIMIT:-300}
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader > "$W/gpu.txt"
[ -f gpu-run/cuvs_bench.py ] || echo "gpu-run/cuvs_bench.py missing: copy ../shared/peer/cuvs_bench.py there" >&2
# shellcheck disable=SC2086 # BUILDS is a word list
cuvs_beside $((L - 40)) ${BUILDS:-main}
first=${BUILDS%% *}
timeline "${first:-main}" images 256 2 $((L - 20))
timeline "${first:-main}" lowdim-i8 1024 10 $((L - 5))
cat "$W/gpu.txt"
runner_finish
