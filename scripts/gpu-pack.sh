#!/usr/bin/env bash
# Packs builds of scripts/gpu-build-variants.sh into gpu-run/bins.tar.xz for one device call
# (carry ["gpu-run/bins.tar.xz"]; scripts/gpu-runner-lib.sh's runner_start unpacks it into
# gpu-run/bin there): each BUILD's binary and kernel bundle, and after `--` the IVF GPU test
# binaries of the builds whose tests the call runs. xz -9: about 1.3 MB a build, 1 MB a test
# binary. The call carries the tracked tree too, within 64,000,000 bytes in all.
# usage: scripts/gpu-pack.sh main gr pers -- all
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
tests=0
[[ $# -gt 0 ]] || { echo "usage: scripts/gpu-pack.sh BUILD... [-- TEST_BUILD...]" >&2; exit 2; }
for name in "$@"; do
  if [[ $name == -- ]]; then tests=1; continue; fi
  if [[ $tests == 1 ]]; then files=("gpu-run/bin/test-ivf-$name")
  else files=("gpu-run/bin/ltokit-$name" "gpu-run/bin/ivf-$name.ltkb"); fi
  for f in "${files[@]}"; do
    [[ -f $f ]] || { echo "$f is missing: build it with TESTS=1 bash scripts/gpu-build-variants.sh $name=PATCH…" >&2; exit 1; }
    cp "$f" "$stage/"
  done
done
XZ_OPT=-9 tar cJf gpu-run/bins.tar.xz -C "$stage" .
packed=$(stat -c %s gpu-run/bins.tar.xz)
tree=$(git ls-files -z | du -cb --files0-from=- | tail -n 1 | cut -f1)
echo "gpu-run/bins.tar.xz: $packed bytes; with the tracked tree $((packed + tree)) of 64,000,000"
[[ $((packed + tree)) -le 64000000 ]] || { echo "over the carry limit: pack fewer builds a call" >&2; exit 1; }
