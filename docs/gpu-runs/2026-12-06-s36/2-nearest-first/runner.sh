#!/usr/bin/env bash
# Written in session 36 for the next call, never started (no device time was left). `gpu-run`
# carried, built on main by
# `TESTS=1 bash scripts/gpu-build-variants.sh cand= nf=docs/wip/nearest-first.patch gsk=docs/wip/group-shared-knob.patch`,
# and the cuVS wheel chunks sent to /root/cuvs/ first by fifteen calls of
# `mkdir -p /root/cuvs && cp cuvs-chunks/pNN /root/cuvs/`:
#   nf  = each list's 64 rows nearest its centre first (the seeds read them);
#   gsk = the shared-memory grouping from fewer pairs (env knob; gs4k / gs16k below).
# nf's GPU tests (the device build's layout, the seeded scans, device-resident), the A/B of
# cand, nf, gs4k and gs16k (three rounds), cuVS 26.10 beside cand and nf at batch 10,000
# (same files, same call), then an ncu timeline of nf's lowdim-i8 × 10.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s37c1
b=gpu-run/bin
warm_test_cache nf 75
SINCE=$SECONDS bash scripts/gpu-tests.sh $b/test-ivf-nf $W 240 an_index_built_on_the_device \
  list_major_bounds_seeded device_resident
env_build gs4k gsk LTOKIT_WIP_GROUP_SHARED_MIN_PAIRS=4096
env_build gs16k gsk LTOKIT_WIP_GROUP_SHARED_MIN_PAIRS=16384
SETS="lowdim-i8 lowdim-f16 images lowdim wide-i8" ROUNDS=3 timeout $((400 - SECONDS)) \
  bash scripts/gpu-ab.sh "$W/ab" cand nf gs4k gs16k > "$W/ab.log" 2>&1
echo "ab at $SECONDS s" >> "$W/times.txt"
python3 scripts/ab-summary.py "$W/ab" cand > "$W/summary.txt" 2>&1
cp "$W/summary.txt" "$OUT/ab-summary.txt"
sets="images:256:2,5,10,20 lowdim-i8:1024:10,20,50 lowdim:1024:10,20,50 lowdim-f16:1024:10,20,50 wide-i8:512:10,20,50"
# shellcheck disable=SC2086 # the sets are words
BUILDS="cand nf" SCANS=auto BATCH=10000 timeout $((560 - SECONDS)) bash scripts/gpu-bench-vs-cuvs.sh $W/b10k $sets \
  > $W/b10k.log 2>&1
echo "cuvs rc $? at $SECONDS s" >> $W/times.txt
for x in cand nf; do cp $W/b10k/$x/summary.md $OUT/b10k-$x.md 2>/dev/null; done
timeline nf lowdim-i8 1024 10 590
runner_finish
