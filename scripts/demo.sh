#!/usr/bin/env bash
# The main job of the README: sets up the CUDA compiler libraries, builds ltokit, and
# runs `ltokit demo`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/setup-cuda.sh
echo "demo: building ltokit (release; the first build takes several minutes on 2 cores, later ones seconds)" >&2
cargo build --release -p ltokit-cli
exec target/release/ltokit demo "$@"
