# Sourced by the GPU scripts that time first searches (gpu-bench-vs-cuvs.sh,
# gpu-first-search.sh); run from the repository root with gpu-run/ carried.
#
# cold_cache DIR: makes DIR an ltokit disk cache holding only the plans an index build
# links (k-means, the coarse search of one probe — its selection in every form: rows of
# 257–1,024 centres take `coarse_select_rows_c1`, of up to 256 `coarse_select_short_c1` — every query type, the device layout) — so a build is timed
# warm and the first search links every plan of its own — and points CUDA_CACHE_PATH at a
# fresh DIR/nv: links were seen to be remembered across processes outside ltokit's caches
# (presumably nvJitLink using the driver's compute cache), which would flatter a first
# search. Exports CUDA_CACHE_PATH; the caller unsets it when done.
cold_cache() {
  local dir=$1
  rm -rf "$dir"
  mkdir -p "$dir"
  # The checked-in bundle: build.rs keeps it equal to the kernel sources the binary was
  # built from (a copy in gpu-run/ could be stale, and its plans would then miss). A
  # variant's binary (scripts/gpu-build-variants.sh) embeds its own bundle, compiled in a
  # scratch worktree — NVRTC's output depends on the include folders' names, so its
  # fragments differ by a few bytes from this checkout's and none of its plans would be
  # found: name the variant's copy in BENCH_BUNDLE (gpu-run/bin/ivf-NAME.ltkb) and its
  # binary in LTOKIT_EXE.
  local bundle=${BENCH_BUNDLE:-crates/ltokit-ivf/kernels/prebuilt/ivf.ltkb}
  # The binary that warms it: LTOKIT_EXE where a variant's build is timed.
  local exe=${LTOKIT_EXE:-gpu-run/bin/ltokit}
  "$exe" bundle inspect "$bundle" | grep -o 'plan [^ ]*' | cut -d' ' -f2 \
    | grep -E '^(kmeans_[a-z]+|layout_scatter|train_rows_[a-z0-9]+|coarse_scores_(mma_|h16_q[0-9]+_|imma_q[0-9]+_)?[a-z0-9]+|coarse_c1_[a-z0-9]+|coarse_select(_rows|_short)?_c1|row_norms_[a-z0-9]+)$' \
    > "$dir/build-plans.txt" || return 1
  export CUDA_CACHE_PATH=$dir/nv
  "$exe" warmup --bundle "$bundle" --arch native \
    --plans "$dir/build-plans.txt" --cache-dir "$dir" > /dev/null
}
