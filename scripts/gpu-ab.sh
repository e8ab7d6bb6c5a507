#!/usr/bin/env bash
# A/B of ltokit builds in one device call: each build's `ltokit ivf bench --scan
# list-major` on the bench sets (scripts/make-bench-data.py), batches 10,000 and 1,000,
# two rounds with the builds interleaved (each figure the median of 15 timed searches: with
# 3, single rounds read up to 11 % low while their profiled scan stage did not move —
# session 34, `docs/gpu-runs/2026-12-06-s34/2-final/ab.log` — and a search of 10,000
# queries takes under a millisecond), then one line per (set, batch, n_probes) with
# every build's device QPS and scan time, then each build's mean device and host QPS against
# the first build named (scripts/ab-summary.py). Run on the GPU machine
# from the repository root with gpu-run/ carried: build NAME is gpu-run/bin/ltokit-NAME,
# and `new` is gpu-run/bin/ltokit. Each build keeps its own kernel cache.
#
# usage: bash scripts/gpu-ab.sh OUT_DIR BUILD...   (e.g. prev new)
#   SETS (default "lowdim-i8 images lowdim-f16 lowdim"), ROUNDS (default 2); the
#   builds: scripts/gpu-build-variants.sh
set -uo pipefail
out=${1:?usage: gpu-ab.sh OUT_DIR BUILD...}
shift
[[ $# -gt 0 ]] || { echo "name at least one build" >&2; exit 2; }
# The executable of build NAME (`new`: gpu-run/bin/ltokit).
build_exe() {
  if [[ $1 == new ]]; then echo gpu-run/bin/ltokit; else echo "gpu-run/bin/ltokit-$1"; fi
}
# Every build's binary must be there before any runs (a missing one would leave only
# empty results for it, found after the call).
for build in "$@"; do
  exe=$(build_exe "$build")
  [[ -x $exe ]] || { echo "gpu-ab: build $build: no executable $exe" >&2; exit 2; }
done
sets=${SETS:-lowdim-i8 images lowdim-f16 lowdim}
data=/tmp/bench-data
mkdir -p "$out"
python3 scripts/make-bench-data.py "$data" $sets > "$out/data.txt" 2>&1 || exit 1
# Lists and probe counts of each set (the cuVS grid's).
shape() {
  case $1 in
    images) echo "256 2,5,10,20" ;;
    lowdim) echo "1024 5,20,50" ;;
    wide-*) echo "512 10,20,50" ;;
    *) echo "1024 10,20,50" ;;
  esac
}
for round in $(seq 1 "${ROUNDS:-2}"); do
  for build in "$@"; do
    exe=$(build_exe "$build")
    for set in $sets; do
      read -r lists probes <<< "$(shape "$set")"
      timeout 120 "$exe" ivf bench --k 10 --json --scan list-major --cache-dir "/tmp/ab-cache-$build" --reps 15 \
        --lists "$lists" --base "$data/$set/base.npy" --queries "$data/$set/queries.npy" \
        --probes "$probes" --batch 10000,1000 > "$out/$set-$build-$round.json" 2> "$out/$set-$build-$round.err"
    done
    echo "$build round $round at $SECONDS s" >> "$out/times.txt"
  done
done
python3 scripts/ab-summary.py "$out" "$1" | tee "$out/summary.txt"
