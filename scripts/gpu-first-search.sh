#!/usr/bin/env bash
# The first search of a fresh process from empty caches, with the link timeline: for each
# set, a new ltokit disk cache holding only the build's plans and a fresh CUDA_CACHE_PATH
# (scripts/cold-cache.sh), then `ltokit ivf bench` with debug logs (each link's time, the
# k-means stages). Run on the GPU machine from the repository root with gpu-run/
# carried (scripts/gpu-build.sh) and the sets made by scripts/make-bench-data.py in DATA.
#
# usage: DATA=/tmp/bench-data bash scripts/gpu-first-search.sh OUT_DIR SET:LISTS:PROBES ...
# Writes OUT_DIR/first-SET.{json,err}; prints build, first search and the links.
set -u
out=${1:?usage: gpu-first-search.sh OUT_DIR SET:LISTS:PROBES ...}
shift
data=${DATA:-/tmp/bench-data}
mkdir -p "$out"
source scripts/cold-cache.sh
for set in "$@"; do
  IFS=: read -r name lists probes <<< "$set"
  cache=/tmp/ltokit-first-$name
  cold_cache "$cache" || continue
  LTOKIT_LOG=ltokit=debug,ltokit_ivf=debug timeout 120 gpu-run/bin/ltokit ivf bench --k 10 --json \
    --reps 3 --cache-dir "$cache" --lists "$lists" --base "$data/$name/base.npy" \
    --queries "$data/$name/queries.npy" --probes "$probes" --batch 10000 --scan auto \
    > "$out/first-$name.json" 2> "$out/first-$name.err"
  python3 -c "
import json
j = json.load(open('$out/first-$name.json'))
print('$name: build', round(j['build_s'], 3), 's, first search', round(j['first_search_ms'], 1), 'ms')"
  sed 's/\x1b\[[0-9;]*m//g' "$out/first-$name.err" | grep -E 'linked|k-means' \
    | sed -E 's/ key=Some\([^)]*\)\)//' | cut -c12-160
done
