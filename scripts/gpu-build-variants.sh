#!/usr/bin/env bash
# Builds `ltokit` variants for one A/B device call (scripts/gpu-ab.sh): each VARIANT is
# NAME=PATCH[+PATCH...] (patches as in docs/wip/, applied in order to this checkout's
# HEAD in a scratch worktree, the kernel bundle refreshed), built in release mode into
# gpu-run/bin/ltokit-NAME, its embedded kernel bundle copied to gpu-run/bin/ivf-NAME.ltkb
# (BENCH_BUNDLE of scripts/cold-cache.sh). `prev=` (no patch) builds HEAD itself. The
# worktrees share this checkout's CUDA libraries (.cuda) and one target folder
# (target/variants). With
# TESTS=1 each variant's IVF GPU test binary goes to gpu-run/bin/test-ivf-NAME too (run it
# with --ignored --test-threads=1 TEST on the device).
#
# usage: bash scripts/gpu-build-variants.sh prev= cap=docs/wip/cand-cap.patch \
#          groups=docs/wip/keep-groups.patch both=docs/wip/cand-cap.patch+docs/wip/keep-groups.patch
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/setup-cuda.sh
mkdir -p gpu-run/bin
# The cuVS side of scripts/gpu-bench-vs-cuvs.sh reads gpu-run/cuvs_bench.py (as gpu-build.sh).
if [[ -f ../shared/peer/cuvs_bench.py ]]; then cp ../shared/peer/cuvs_bench.py gpu-run/; fi
scratch=$(mktemp -d)
trap 'git worktree prune; rm -rf "$scratch"' EXIT
for variant in "$@"; do
  name=${variant%%=*}
  patches=${variant#*=}
  [[ $name != "$variant" && -n $name ]] || { echo "variant $variant: expected NAME=PATCH[+PATCH...]" >&2; exit 2; }
  tree="$scratch/$name"
  git worktree add --quiet --detach "$tree" HEAD
  ln -s "$root/.cuda" "$tree/.cuda"
  if [[ -n $patches ]]; then
    IFS=+ read -ra list <<< "$patches"
    for p in "${list[@]}"; do
      git -C "$tree" apply "$root/$p" || { echo "variant $name: $p does not apply" >&2; exit 1; }
    done
    (cd "$tree" && scripts/update-prebuilt.sh > /dev/null)
  fi
  CARGO_TARGET_DIR="$root/target/variants" cargo build --quiet --release --locked \
    --manifest-path "$tree/Cargo.toml" -p ltokit-cli
  cp "$root/target/variants/release/ltokit" "gpu-run/bin/ltokit-$name"
  # The bundle that binary embeds, for warming its kernel cache (BENCH_BUNDLE of
  # scripts/cold-cache.sh): one compiled in another tree misses its plans.
  cp "$tree/crates/ltokit-ivf/kernels/prebuilt/ivf.ltkb" "gpu-run/bin/ivf-$name.ltkb"
  if [[ ${TESTS:-0} == 1 ]]; then
    test_exe=$(CARGO_TARGET_DIR="$root/target/variants" cargo test --quiet --release --locked \
      --manifest-path "$tree/Cargo.toml" -p ltokit-ivf --test gpu --no-run --message-format=json |
      python3 -c 'import json,sys; print([m["executable"] for m in map(json.loads, sys.stdin) if m.get("executable")][-1])')
    cp "$test_exe" "gpu-run/bin/test-ivf-$name"
  fi
  git worktree remove --force "$tree"
  echo "gpu-run/bin/ltokit-$name: $patches"
done
