#!/usr/bin/env bash
# Session 35, call 1 (`gpu-run` carried: `prev` = main 0b6e937, the session's start; `cand` =
# prev with docs/wip/persist8.patch (the f16 queries copied with cp.async into the f16 score
# matrix; the 8-bit score matrix through several tiles a block) and the seed's row check
# shared (lmseed.cuh), by `TESTS=1 bash scripts/gpu-build-variants.sh prev= cand=` on
# branch s35; `gpu-run/cuvs_bench.py` from ../shared/peer; the cuVS wheel chunks sent to
# /root/cuvs/ first by fifteen calls of `mkdir -p /root/cuvs && cp cuvs-chunks/pNN
# /root/cuvs/` with `cuvs-chunks/pNN` carried): the GPU tests of cand on a warmed test
# cache, the A/B of prev and cand (three rounds), cuVS 26.10 beside prev and cand at batch
# 10,000 (same files, same call), lowdim f32's latency at 20 probes, then the kernels of one lowdim-i8 × 10 batch timed at
# the clocks the bench runs at (ncu --clock-control none) if time is left.
set -u
. scripts/gpu-runner-lib.sh
runner_start /tmp/s35c1
b=gpu-run/bin
warm_test_cache cand 110
SINCE=$SECONDS bash scripts/gpu-tests.sh $b/test-ivf-cand $W 280 large_batches_of_f16 a_non_finite_query_is_named \
  device_resident list_major_bounds_seeded
SETS="lowdim-i8 lowdim-f16 lowdim images wide-i8" ROUNDS=3 timeout $((430 - SECONDS)) \
  bash scripts/gpu-ab.sh "$W/ab" prev cand > "$W/ab.log" 2>&1
echo "ab at $SECONDS s" >> "$W/times.txt"
python3 scripts/ab-summary.py "$W/ab" prev > "$W/summary.txt" 2>&1
sets="images:256:2,5,10,20 lowdim-i8:1024:10,20,50 lowdim:1024:10,20,50 lowdim-f16:1024:10,20,50 wide-i8:512:10,20,50"
# shellcheck disable=SC2086 # the sets are words
BUILDS="prev cand" SCANS=auto BATCH=10000 timeout $((575 - SECONDS)) bash scripts/gpu-bench-vs-cuvs.sh $W/b10k $sets \
  > $OUT/b10k.log 2>&1
echo "cuvs rc $? at $SECONDS s" >> $W/times.txt
for x in prev cand; do cp $W/b10k/$x/summary.md $OUT/b10k-$x.md 2>/dev/null; done
# Latency: lowdim f32 at 20 probes, one device-resident call waited for (device_call_ms).
left=$((560 - SECONDS))
if [ "$left" -gt 15 ]; then
  timeout "$left" $b/ltokit-cand ivf bench --k 10 --json --reps 3 --cache-dir /tmp/ab-cache-cand \
    --base /tmp/bench-data/lowdim/base.npy --queries /tmp/bench-data/lowdim/queries.npy --lists 1024 --probes 20 \
    --batch 1,100,1000 --scan auto > "$W/latency.json" 2> "$W/latency.err"
  echo "latency at $SECONDS s" >> "$W/times.txt"
  python3 -c "import json,sys; [print('latency', r['batch'], r['scan'], r['n_probes'], 'call ms', r['device_call_ms'], 'recall', r['recall']) for r in json.load(open(sys.argv[1]))['results']]" "$W/latency.json" 2>&1 | head -8
fi
left=$((588 - SECONDS))
if [ "$left" -gt 20 ]; then
  # shellcheck disable=SC2046 # bench_args is a word list
  timeout "$left" ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv \
    -k regex:'ivf_' $b/ltokit-cand $(bench_args cand lowdim-i8 1024 10) > "$W/timeline-free-lowdim-i8-10-cand.csv" 2> "$W/free.err"
  echo "free-clock timeline at $SECONDS s" >> "$W/times.txt"
fi
cp "$W/summary.txt" "$OUT/ab-summary.txt"
runner_finish
