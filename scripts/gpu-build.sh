#!/usr/bin/env bash
# Builds everything the GPU machine runs (it has no Rust) into gpu-run/ (git-ignored):
# the release `ltokit` binary and the release test binaries. Then, with the device
# tool, run `bash scripts/gpu-run.sh` there with gpu-run carried.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/setup-cuda.sh
rm -rf gpu-run
mkdir -p gpu-run/bin
cargo build --release --quiet -p ltokit-cli
cp target/release/ltokit gpu-run/bin/
cargo test --release --quiet --workspace --no-run --message-format=json 2>/dev/null \
  | python3 -c '
import json, shutil, sys
for line in sys.stdin:
    msg = json.loads(line)
    exe = msg.get("executable")
    if msg.get("reason") == "compiler-artifact" and exe and msg["profile"]["test"]:
        pkg = msg["package_id"].split("#")[0].rstrip("/").split("/")[-1]
        name = msg["target"]["name"].replace("-", "_")
        kind = msg["target"]["kind"][0]
        shutil.copy(exe, f"gpu-run/bin/test-{pkg}-{name}-{kind}")
        print(f"gpu-run/bin/test-{pkg}-{name}-{kind}")
'
# Summarisers of A/B benches and ncu SASS pages, for runner scripts.
cp scripts/ab-summary.py scripts/sass-summary.py scripts/sass-regions.py gpu-run/
# The cuVS side-by-side bench script (peer material, not part of the repository).
if [[ -f ../shared/peer/cuvs_bench.py ]]; then cp ../shared/peer/cuvs_bench.py gpu-run/; fi
# The adopter example (a user's crate: own cudarc, context and stream).
CARGO_TARGET_DIR=target/adopter cargo build --release --quiet --locked \
  --manifest-path examples/adopter/Cargo.toml
cp target/adopter/release/ltokit-adopter-example gpu-run/bin/
du -sh gpu-run
# The IVF kernel bundle that ltokit-ivf embeds, for `ltokit warmup` there.
cp "$(ls -t target/release/build/ltokit-ivf-*/out/ivf.ltkb | head -1)" gpu-run/ivf.ltkb
