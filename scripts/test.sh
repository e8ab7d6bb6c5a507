#!/usr/bin/env bash
# The test command of the README (and of CI): sets up the CUDA compiler libraries, then
# checks formatting and lints, runs every test that needs no GPU, and fuzzes each parser
# for a bounded time (FUZZ_SECONDS, default 30; 0 skips fuzzing).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/setup-cuda.sh
# The compiler libraries were just installed: a test that finds them missing fails
# rather than skips.
export LTOKIT_TEST_REQUIRE_TOOLKIT=1
cargo fmt --all -- --check
# The fuzz workspace's lock file must match its dependencies (fuzzing would rewrite it).
cargo metadata --locked --format-version 1 --manifest-path fuzz/Cargo.toml >/dev/null
cargo clippy --workspace --all-targets --quiet -- -D warnings
cargo test --workspace
scripts/fuzz.sh "${FUZZ_SECONDS:-30}"
