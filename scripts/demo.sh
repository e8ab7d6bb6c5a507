#!/usr/bin/env bash
# The main job of the README: sets up the CUDA compiler libraries, builds ltokit, and
# runs `ltokit demo`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/setup-cuda.sh
cargo build --release --quiet -p ltokit-cli
exec target/release/ltokit demo "$@"
