#!/usr/bin/env bash
# Helpers for the device-call runner scripts of docs/gpu-runs/ (source it from the
# repository root on the GPU machine, with gpu-run/bins.tar.xz carried: the builds of
# scripts/gpu-build-variants.sh). W is the call's work folder, OUT (the device tool's) the
# folder that comes back.
#
#   runner_start W            unpack the builds into gpu-run/bin, start the clock; W starts
#                             empty (a warm machine keeps /tmp between calls, and an A/B's
#                             summary would mix in an earlier call's rounds: session 38)
#   ab_against SECONDS BUILD...
#                             scripts/gpu-ab.sh of the builds (SETS, ROUNDS from the caller's
#                             environment) for at most SECONDS, then its summary against the
#                             first build into W/summary.txt and OUT/ab-summary.txt
#   cuvs_beside UNTIL BUILD...
#                             scripts/gpu-bench-vs-cuvs.sh: the builds beside cuVS on every
#                             bench set at batch 10,000 until UNTIL − 40 s of the call, each
#                             build's summary into OUT/b10k-BUILD.md (the cuVS wheel must be
#                             in place: runner.sh's chunk calls)
#   bench_args BUILD SET LISTS PROBES
#                             one `ltokit ivf bench` of SET at batch 10,000 (its arguments)
#   timeline BUILD SET LISTS PROBES UNTIL
#                             ncu durations of every search kernel of that bench into
#                             W/timeline-SET-PROBES-BUILD.csv, unless under 25 s are left
#                             before UNTIL (seconds since runner_start)
#   full_profile NAME BUILD SKIP SET LISTS PROBES UNTIL
#                             a full ncu profile of the (SKIP+1)-th lmscan launch (or of
#                             KERNEL, a name regex, from the environment): details and
#                             SASS source counters into W/full-NAME-*
#   coarse_profile BUILD UNTIL
#                             a full ncu profile of the images × 2 bench's third 8-bit
#                             score-matrix launch (the first two are the index build's):
#                             details and SASS source counters into W/full-coarse-*
#   profile_summaries NAME... the SASS summary, regions and headline metrics of each
#                             W/full-NAME profile into OUT/sass.txt
#   env_build NAME BASE VAR=VALUE...
#                             gpu-run/bin/ltokit-NAME: build BASE run with those
#                             environment variables (a WIP knob swept by one build), its
#                             bundle copied and its A/B kernel cache shared with BASE's
#   bench_arg_build NAME BASE ARG...
#                             gpu-run/bin/ltokit-NAME: build BASE whose `ivf bench` runs
#                             take those arguments besides (e.g. --phases always), sharing
#                             BASE's bundle and cache as env_build's do
#   clock_log_start FILE / clock_log_stop
#                             the SM clock, power and throttle reasons every 20 ms into
#                             FILE (nvidia-smi, CSV) while the commands between them run
#   warm_test_cache BUILD LIMIT
#                             links the plans the IVF GPU tests use most (every plan but the
#                             list scans' of capacities other than 1, 16, 128, 1024 and of
#                             dimensions only some tests take) from BUILD's bundle into the
#                             tests' kernel cache, for at most LIMIT seconds
#   tests_of BUILD WARM UNTIL TEST...
#                             warm_test_cache BUILD WARM, then BUILD's IVF GPU tests TEST one
#                             at a time (scripts/gpu-tests.sh) until UNTIL seconds since
#                             runner_start, none started with under 20 s left
#   runner_finish             W's logs into OUT (tests, times, a tarball of the rest), then
#                             the A/B means, the tests' verdicts and each timeline printed
runner_start() {
  SECONDS=0
  W=$1
  rm -rf "$W"
  mkdir -p "$W" gpu-run/bin
  tar xJf gpu-run/bins.tar.xz -C gpu-run/bin
}

ab_against() {
  local limit=$1
  shift
  timeout "$limit" bash scripts/gpu-ab.sh "$W/ab" "$@" > "$W/ab.log" 2>&1
  echo "ab at $SECONDS s" >> "$W/times.txt"
  python3 scripts/ab-summary.py "$W/ab" "$1" > "$W/summary.txt" 2>&1
  cp "$W/summary.txt" "$OUT/ab-summary.txt"
}

cuvs_beside() {
  local until=$1 sets="images:256:2,5,10,20 lowdim-i8:1024:10,20,50 lowdim:1024:10,20,50 lowdim-f16:1024:10,20,50 wide-i8:512:10,20,50"
  shift
  # shellcheck disable=SC2086 # the sets are words
  BUILDS="$*" SCANS=auto BATCH=10000 timeout $((until - 40 - SECONDS)) bash scripts/gpu-bench-vs-cuvs.sh "$W/b10k" $sets \
    > "$W/b10k.log" 2>&1
  echo "cuvs rc $? at $SECONDS s" >> "$W/times.txt"
  for x in "$@"; do cp "$W/b10k/$x/summary.md" "$OUT/b10k-$x.md" 2>/dev/null; done
}

bench_args() {
  local d=/tmp/bench-data
  echo ivf bench --k 10 --json --cache-dir "/tmp/ab-cache-$1" --reps 1 --scan list-major \
    --lists "$3" --base "$d/$2/base.npy" --queries "$d/$2/queries.npy" --probes "$4" --batch 10000
}

timeline() {
  local left=$(($5 - SECONDS))
  if [ "$left" -lt 25 ]; then echo "no timeline: $1 $2 $4" >> "$W/times.txt"; return; fi
  # shellcheck disable=SC2046 # bench_args is a word list
  timeout "$left" ncu --metrics gpu__time_duration.sum --csv \
    -k regex:'ivf_(lmscan|lmwarp|lmseed|coarse_select|coarse_scores|group|merge)' \
    "gpu-run/bin/ltokit-$1" $(bench_args "$1" "$2" "$3" "$4") > "$W/timeline-$2-$4-$1.csv" 2> "$W/timeline-$2-$4-$1.err"
  echo "timeline $1 $2 $4 at $SECONDS s" >> "$W/times.txt"
}

full_profile() {
  local left=$(($7 - SECONDS)) f="$W/full-$1"
  if [ "$left" -lt 30 ]; then echo "no profile: $1" >> "$W/times.txt"; return; fi
  # shellcheck disable=SC2046
  timeout "$left" ncu --set full --import-source no -k "regex:${KERNEL:-ivf_lmscan}" --launch-skip "$3" --launch-count 1 \
    -o "$f" "gpu-run/bin/ltokit-$2" $(bench_args "$2" "$4" "$5" "$6") > "$f.log" 2>&1
  ncu -i "$f.ncu-rep" --page details > "$f-details.txt" 2>&1
  ncu -i "$f.ncu-rep" --page source --csv --print-source sass > "$f-sass.csv" 2>&1
  echo "full $1 at $SECONDS s" >> "$W/times.txt"
}

coarse_profile() {
  KERNEL=ivf_coarse_scores_imma full_profile coarse "$1" 2 images 256 2 "$2"
}

profile_summaries() {
  local n f
  for n in "$@"; do
    f="$W/full-$n-sass.csv"
    [ -s "$f" ] || continue
    echo "== $n"
    python3 scripts/sass-summary.py "$f" 25 2>&1 | head -60
    python3 scripts/sass-regions.py "$f" 2>&1 | head -30
    grep -E 'Duration|Registers Per|Achieved Occ|Issue Slots|L2 Hit|DRAM Through|Memory Throughput|Waves|No Eligible' \
      "$W/full-$n-details.txt"
  done > "$OUT/sass.txt" 2>&1
}

env_build() {
  local name=$1 base=$2
  shift 2
  printf '#!/bin/sh\nexec env %s "$(dirname "$0")/ltokit-%s" "$@"\n' "$*" "$base" > "gpu-run/bin/ltokit-$name"
  share_build "$name" "$base"
}

bench_arg_build() {
  local name=$1 base=$2
  shift 2
  printf '#!/bin/sh\nif [ "$1 $2" = "ivf bench" ]; then exec "$(dirname "$0")/ltokit-%s" "$@" %s; fi\nexec "$(dirname "$0")/ltokit-%s" "$@"\n' \
    "$base" "$*" "$base" > "gpu-run/bin/ltokit-$name"
  share_build "$name" "$base"
}

# Build NAME's wrapper made runnable, with BASE's bundle and kernel cache.
share_build() {
  local b=gpu-run/bin
  chmod +x "$b/ltokit-$1"
  cp "$b/ivf-$2.ltkb" "$b/ivf-$1.ltkb"
  # The same kernels: one cache (scripts/gpu-ab.sh keeps one a build name).
  mkdir -p "/tmp/ab-cache-$2" && ln -sfn "/tmp/ab-cache-$2" "/tmp/ab-cache-$1"
}

clock_log_start() {
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
    --format=csv -lms 20 > "$1" 2>&1 &
  CLOCK_LOG_PID=$!
}

clock_log_stop() {
  [ -n "${CLOCK_LOG_PID:-}" ] && kill "$CLOCK_LOG_PID" 2>/dev/null
  CLOCK_LOG_PID=
}

warm_test_cache() {
  local b=gpu-run/bin cache=${TMPDIR:-/tmp}/ltokit-ivf-gpu-test-cache
  "$b/ltokit-$1" bundle inspect "$b/ivf-$1.ltkb" | awk '$1 == "plan" {print $2}' > "$W/all-plans.txt"
  { grep -E '^lmscan_c(1|16|128|1024)_(u8|i8)tcw?_d(512|784)_' "$W/all-plans.txt"
    grep -E '_c(1|16|128|1024)_' "$W/all-plans.txt" | grep -vE '_d(96|100|200|256|384|512|784)_'
    grep -vE '^(lmscan|lmwarp|scan)_' "$W/all-plans.txt" | grep -vE '_c(1|16|128|1024)_'; } | sort -u > "$W/test-plans.txt"
  timeout "$2" "$b/ltokit-$1" warmup --bundle "$b/ivf-$1.ltkb" --arch native --jobs 16 \
    --plans "$W/test-plans.txt" --cache-dir "$cache" > "$W/warmup.txt" 2>&1
  echo "warmup at $SECONDS s: $(tail -n 1 "$W/warmup.txt")" >> "$W/times.txt"
}

tests_of() {
  local build=$1 warm=$2 until=$3
  shift 3
  warm_test_cache "$build" "$warm"
  SINCE=$SECONDS MIN_LEFT=20 bash scripts/gpu-tests.sh "gpu-run/bin/test-ivf-$build" "$W" "$until" "$@"
}

runner_finish() {
  cp "$W/tests.txt" "$W/times.txt" "$OUT/" 2>/dev/null
  (cd "$W" && tar czf "$OUT/$(basename "$W").tgz" --exclude='*/nv' --exclude='*.ivf' --exclude='*.npy' --exclude='*.ncu-rep' .)
  sed -n '/means of the rounds/,$p' "$W/summary.txt"
  grep -E "^test |test result|panicked|not run|checked|match" "$W/tests.txt" | cut -c1-250
  for f in "$W"/timeline-*.csv; do
    [ -e "$f" ] || continue
    echo "== $f"
    grep -E '"gpu__time_duration.sum"' "$f" | awk -F'","' '{print $5, $9, $(NF)}' | grep -v "(62500\|(15625" | tail -12
  done
  cat "$W/times.txt"
}
