#!/usr/bin/env bash
# Session 36's ready runner for nearest-first (never started, removed) with the row
# copy by warp columns added and its deadlines taken from the call's length, LIMIT seconds
# (default 590). `gpu-run` carried, built on main `4afbd49` by
# `TESTS=1 bash scripts/gpu-build-variants.sh cand= nf=docs/wip/nearest-first.patch gsk=docs/wip/group-shared-knob.patch rc=docs/wip/rowcopy.patch`
# and `bash scripts/gpu-build-variants.sh nfk=docs/wip/nearest-first.patch+docs/wip/seed-bytes-knob.patch`,
# the cuVS wheel chunks sent to /root/cuvs/ first (CUVS=0 skips cuVS):
#   nf  = each list's 64 rows nearest its centre first (the seeds read them);
#   rc  = the scan's row copy by warp columns (the images' 784-wide store: SASS ~20 → ~1.5
#         instructions a chunk);
#   gsk = the shared-memory grouping from fewer pairs (env knob; gs4k below);
#   nfk = nf with the seed's bytes an env knob (nf16k, nf8k below).
# The A/B first (cand, nf, nf16k, nf8k, rc, gs4k; two rounds), then nf's and rc's GPU tests, cuVS
# 26.10 beside cand, nf and rc at batch 10,000 (same files, same call), then ncu timelines.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s37c1
L=${LIMIT:-590}
b=gpu-run/bin
env_build gs4k gsk LTOKIT_WIP_GROUP_SHARED_MIN_PAIRS=4096
# nf with a seed of fewer rows (lowdim-i8: 128 and 64 rows where main's seed reads 256).
env_build nf16k nfk LTOKIT_WIP_SEED_BYTES=16384
env_build nf8k nfk LTOKIT_WIP_SEED_BYTES=8192
builds="cand nf nf16k nf8k rc gs4k" sets="lowdim-i8 lowdim-f16 images lowdim wide-i8" rounds=2
# A short call: four builds, four sets.
[ "$L" -lt 450 ] && builds="cand nf nf16k rc" sets="lowdim-i8 images lowdim-f16 lowdim"
# A very short one: the two sets the misses are on.
[ "$L" -lt 200 ] && builds="cand nf16k rc" sets="lowdim-i8 images"
# shellcheck disable=SC2086 # the builds are words
SETS="$sets" ROUNDS=$rounds timeout $((L * ${AB_PCT:-40} / 100 - SECONDS)) \
  bash scripts/gpu-ab.sh "$W/ab" $builds > "$W/ab.log" 2>&1
echo "ab at $SECONDS s" >> "$W/times.txt"
python3 scripts/ab-summary.py "$W/ab" cand > "$W/summary.txt" 2>&1
cp "$W/summary.txt" "$OUT/ab-summary.txt"
warm_test_cache nf ${WARM:-75}
SINCE=$SECONDS bash scripts/gpu-tests.sh $b/test-ivf-rc $W $((L * ${RC_PCT:-62} / 100)) list_major_tiles \
  list_major_bounds_seeded
SINCE=$SECONDS bash scripts/gpu-tests.sh $b/test-ivf-nf $W $((L * ${NF_PCT:-74} / 100)) an_index_built_on_the_device \
  list_major_bounds_seeded device_resident
if [ "${CUVS:-1}" = 1 ]; then
  sets="images:256:2,5,10,20 lowdim-i8:1024:10,20,50 lowdim:1024:10,20,50 lowdim-f16:1024:10,20,50 wide-i8:512:10,20,50"
  # shellcheck disable=SC2086 # the sets are words
  BUILDS="cand nf rc" SCANS=auto BATCH=10000 timeout $((L - 40 - SECONDS)) bash scripts/gpu-bench-vs-cuvs.sh $W/b10k $sets \
    > $W/b10k.log 2>&1
  echo "cuvs rc $? at $SECONDS s" >> $W/times.txt
  for x in cand nf rc; do cp $W/b10k/$x/summary.md $OUT/b10k-$x.md 2>/dev/null; done
fi
timeline rc images 256 2 $((L - 20))
timeline nf lowdim-i8 1024 10 "$L"
runner_finish
