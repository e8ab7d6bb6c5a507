#!/usr/bin/env bash
# ltokit and cuVS 26.10 IVF-Flat side by side, in one run on the GPU machine, on the same
# .npy files (scripts/make-bench-data.py makes them there). Run from the repository root
# with gpu-run/ carried (scripts/gpu-build.sh; it also copies the cuVS bench script) and
# the cuVS wheel chunks already sent to /root/cuvs/ (scripts/fetch-cuvs.sh says how).
#
# usage: bash scripts/gpu-bench-vs-cuvs.sh OUT_DIR [SET:LISTS:PROBES ...]
#   default sets: lowdim:1024:5,10,20,30,50,100  lowdim-f16:1024:10,20,50
#                 lowdim-i8:1024:10,20,50  images:256:2,5,10,20
# Both sides: batch $BATCH (default 10,000), k 10, squared L2, recall@10 against their
# own exact search, median of 5 timed runs after warm-up. cuVS is timed with queries on
# the GPU and results left there; ltokit both ways (device-resident and from the host),
# with each scan path in $SCANS (default per-query,list-major,auto).
# With BUILDS="NAME ..." (builds of scripts/gpu-build-variants.sh: gpu-run/bin/ltokit-NAME
# and its bundle ivf-NAME.ltkb) every build runs beside one cuVS run of each set, each
# build's table in OUT_DIR/NAME/summary.md; without it, gpu-run/bin/ltokit into OUT_DIR.
set -uo pipefail
batch=${BATCH:-10000}
scans=${SCANS:-per-query,list-major,auto}
out=${1:?usage: gpu-bench-vs-cuvs.sh OUT_DIR [SET:LISTS:PROBES ...]}
shift
mkdir -p "$out"
sets=("$@")
[[ ${#sets[@]} -gt 0 ]] || sets=(lowdim:1024:5,10,20,30,50,100 lowdim-f16:1024:10,20,50 lowdim-i8:1024:10,20,50 images:256:2,5,10,20)
if [[ ! -d /tmp/site/cuvs ]]; then
  (cat /root/cuvs/p* | tar xf - -C /root/cuvs) || { echo "cuVS chunks missing in /root/cuvs" >&2; exit 1; }
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site /root/cuvs/*.whl || exit 1
fi
data=/tmp/bench-data
names=()
for s in "${sets[@]}"; do names+=("${s%%:*}"); done
python3 scripts/make-bench-data.py "$data" "${names[@]}" || exit 1
# Each set's ltokit starts from an empty kernel cache holding only what the index build
# links, and a fresh CUDA_CACHE_PATH (scripts/cold-cache.sh): the build is timed warm, as
# cuVS's is, and the first search links every plan of its own.
source scripts/cold-cache.sh
builds=(${BUILDS:-})
for s in "${sets[@]}"; do
  IFS=: read -r name lists probes <<< "$s"
  for b in "${builds[@]:-}"; do
    exe=gpu-run/bin/ltokit dir=$out
    if [[ -n $b ]]; then
      exe=gpu-run/bin/ltokit-$b dir=$out/$b
      export BENCH_BUNDLE=gpu-run/bin/ivf-$b.ltkb LTOKIT_EXE=$exe
      mkdir -p "$dir"
    fi
    echo "== $name: ltokit ${b:-}" >&2
    cache=/tmp/ltokit-bench-cache-$name${b:+-$b}
    cold_cache "$cache" || exit 1
    LTOKIT_LOG=${LTOKIT_LOG:-warn} "$exe" ivf bench --base "$data/$name/base.npy" --queries "$data/$name/queries.npy" \
      --lists "$lists" --probes "$probes" --k 10 --batch "$batch" --scan "$scans" --json --cache-dir "$cache" \
      > "$dir/ltokit-$name.json" 2> "$dir/ltokit-$name.err"
    unset CUDA_CACHE_PATH
  done
  echo "== $name: cuVS" >&2
  BATCH=$batch PYTHONPATH=/tmp/site LD_LIBRARY_PATH=/tmp/site/nvidia/cu13/lib \
    python3 gpu-run/cuvs_bench.py "$data/$name" "$lists" native "$probes" > "$out/cuvs-$name.txt" 2>&1
  for b in "${builds[@]:-}"; do [[ -n $b ]] && cp "$out/cuvs-$name.txt" "$out/$b/"; done
done
if [[ ${#builds[@]} -eq 0 ]]; then
  python3 scripts/compare-vs-cuvs.py "$out" | tee "$out/summary.md"
else
  for b in "${builds[@]}"; do
    echo "== $b"
    python3 scripts/compare-vs-cuvs.py "$out/$b" | tee "$out/$b/summary.md"
  done
fi
