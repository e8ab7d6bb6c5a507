#!/usr/bin/env bash
# The test command of the README (and of CI): sets up the CUDA compiler libraries, then
# checks formatting and lints, runs every test that needs no GPU, and fuzzes each parser
# for a bounded time (FUZZ_SECONDS, default 30; 0 skips fuzzing).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# One clean build: incremental data would add gigabytes that a CI machine may not have.
export CARGO_INCREMENTAL=0
scripts/setup-cuda.sh
# NVRTC and nvJitLink of several CUDA 13 releases, for the toolkit matrix test.
scripts/setup-toolkit-matrix.sh
export LTOKIT_TOOLKIT_MATRIX="$root/.cuda/matrix"
# The compiler libraries were just installed: a test that finds them missing fails
# rather than skips.
export LTOKIT_TEST_REQUIRE_TOOLKIT=1 LTOKIT_TEST_REQUIRE_MATRIX=1
# The remote-cache tests start their own redis-server (Debian's) on free loopback ports.
scripts/setup-redis.sh
export LTOKIT_TEST_REQUIRE_REDIS=1
cargo fmt --all -- --check
# The fuzz workspace's lock file must match its dependencies (fuzzing would rewrite it).
cargo metadata --locked --format-version 1 --manifest-path fuzz/Cargo.toml >/dev/null
cargo clippy --workspace --all-targets --quiet -- -D warnings
# Every public item's docs build, their links resolved (none to private items).
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet
cargo test --workspace
# The adopter example, built as a user's crate is, against two cudarc CUDA versions (the
# final binary chooses; ltokit follows), then run: without a GPU it links its kernels.
for cuda in cuda-13000 cuda-12080; do
  CARGO_TARGET_DIR=target/adopter cargo clippy --locked --quiet \
    --manifest-path examples/adopter/Cargo.toml --no-default-features --features "$cuda" -- -D warnings
done
adopter_cache=$(mktemp -d)
LTOKIT_CACHE_DIR="$adopter_cache" CARGO_TARGET_DIR=target/adopter \
  cargo run --locked --quiet --manifest-path examples/adopter/Cargo.toml
rm -rf "$adopter_cache"
scripts/fuzz.sh "${FUZZ_SECONDS:-30}"
