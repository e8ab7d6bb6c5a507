#!/usr/bin/env bash
# Runs GPU tests one at a time until a deadline of the device call, for runner scripts: each
# TEST is a test-name filter of BIN (a test binary, run with --ignored --test-threads=1
# --nocapture), its output appended to OUT_DIR/tests.txt and "TEST exit STATUS at N s" to
# OUT_DIR/times.txt; a test that would start with under MIN_LEFT seconds (default 15)
# before UNTIL is noted "not run: TEST" instead. Times are the caller's: pass its SECONDS
# as SINCE.
#
# usage: SINCE=$SECONDS bash scripts/gpu-tests.sh BIN OUT_DIR UNTIL TEST...
#   e.g. SINCE=$SECONDS bash scripts/gpu-tests.sh gpu-run/bin/test-ivf-new /tmp/ab 450 \
#          list_major_tiles list_major_bounds_seeded
set -u
bin=${1:?usage: gpu-tests.sh BIN OUT_DIR UNTIL TEST...}
out=${2:?usage: gpu-tests.sh BIN OUT_DIR UNTIL TEST...}
until=${3:?usage: gpu-tests.sh BIN OUT_DIR UNTIL TEST...}
shift 3
since=${SINCE:-0}
mkdir -p "$out"
for t in "$@"; do
  left=$((until - since - SECONDS))
  if [[ $left -lt ${MIN_LEFT:-15} ]]; then
    echo "not run: $t" >> "$out/tests.txt"
    continue
  fi
  (timeout "$left" "$bin" --ignored --test-threads=1 --nocapture "$t") >> "$out/tests.txt" 2>&1
  echo "$t exit $? at $((since + SECONDS)) s" >> "$out/times.txt"
done
