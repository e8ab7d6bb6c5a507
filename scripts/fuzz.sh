#!/usr/bin/env bash
# Fuzzes each parser of outside input for a bounded time: fuzz.sh SECONDS (0 skips).
# Installs cargo-fuzz when missing; runs on the stable toolchain via RUSTC_BOOTSTRAP.
# Seeds: the fixtures in tests/fixtures. A crash fails the script and leaves the input
# in fuzz/artifacts/.
set -euo pipefail
seconds=${1:-30}
[[ "$seconds" == 0 ]] && { echo "fuzz: skipped (0 seconds)"; exit 0; }
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export RUSTC_BOOTSTRAP=1
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "fuzz: installing cargo-fuzz" >&2
  cargo install --quiet --locked cargo-fuzz
fi
for target in fatbin elf bundle provider ivf_files; do
  corpus="fuzz/corpus/$target"
  mkdir -p "$corpus"
  cp -n tests/fixtures/*.fatbin tests/fixtures/*.o tests/fixtures/*.cubin tests/fixtures/*.ltkb tests/fixtures/*.ltkp "$corpus"/ 2>/dev/null || true
  echo "fuzz: $target for ${seconds}s" >&2
  cargo fuzz run --release "$target" "$corpus" -- -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=262144 -print_final_stats=1 2>&1 \
    | grep -E "^(stat::number_of_executed_units|stat::new_units_added|==|SUMMARY|Done)" || true
  # grep hides libFuzzer's chatter; the exit status below is what counts.
  [[ ${PIPESTATUS[0]} -eq 0 ]] || { echo "fuzz: $target found a crash; see fuzz/artifacts/$target" >&2; exit 1; }
done
