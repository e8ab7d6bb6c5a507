#!/usr/bin/env bash
# Refreshes the checked-in prebuilt kernel bundles (crates/*/kernels/prebuilt/*.ltkb)
# from their specs with NVRTC, so that machines without the CUDA compiler libraries can
# still build. Run it after changing a kernel source, header or bundle spec; the test
# `prebuilt_bundle_matches_its_sources` fails until you do.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/setup-cuda.sh
cargo run --quiet --release -p ltokit-cli -- bundle build \
  crates/ltokit-ivf/kernels/bundle.json -o crates/ltokit-ivf/kernels/prebuilt/ivf.ltkb
