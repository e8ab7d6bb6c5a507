#!/usr/bin/env bash
# One device call's closing grid: cuVS 26.10 and ltokit side by side on the same files
# (scripts/gpu-bench-vs-cuvs.sh, auto scan) at batches 10,000 and 1,000 on the sets of
# BENCHMARKS.md and the two wide ones (f16 x 256, i8 x 512), then ltokit's GPU tests named in TESTS (test-name filters of the IVF GPU
# test binary, run one by one until DEADLINE seconds into the call), the logs under OUT_DIR
# and a summary on stdout. Run on the GPU machine from the repository root with gpu-run/
# carried (bin/ltokit, bin/test-ltokit-ivf-gpu-test, and the last cuVS chunk as
# gpu-run/cuvs-LAST, the others sent before to /root/cuvs/: scripts/fetch-cuvs.sh).
#
# With a variant's binaries as bin/ltokit (scripts/gpu-build-variants.sh), set
# BENCH_BUNDLE=gpu-run/bin/ivf-NAME.ltkb so that the index builds find their plans
# (scripts/cold-cache.sh; session 17's first grid timed links inside its builds).
#
# usage: TESTS="large_batches every_variant" DEADLINE=450 bash scripts/gpu-grid.sh OUT_DIR
set -u
out=${1:?usage: gpu-grid.sh OUT_DIR}
w=/tmp/grid
mkdir -p "$w" /root/cuvs
for c in gpu-run/cuvs-*; do [[ -f $c ]] && cp "$c" "/root/cuvs/${c#gpu-run/cuvs-}"; done
ls /root/cuvs > "$w/chunks.txt"
SCANS=auto BATCH=10000 timeout 300 bash scripts/gpu-bench-vs-cuvs.sh "$w/b10k" \
  lowdim:1024:5,10,20,30,50,100 lowdim-f16:1024:10,20,50 lowdim-i8:1024:10,20,50 images:256:2,5,10,20 \
  wide-f16:512:10,20,50 wide-i8:512:10,20,50 > "$w/b10k.log" 2>&1
echo "10k at $SECONDS s" >> "$w/times.txt"
SCANS=auto BATCH=1000 timeout 150 bash scripts/gpu-bench-vs-cuvs.sh "$w/b1k" \
  lowdim:1024:5,10,20,50 lowdim-f16:1024:10,20 lowdim-i8:1024:10,20 images:256:2,5,10 \
  wide-f16:512:10,20 wide-i8:512:10,20 > "$w/b1k.log" 2>&1
echo "1k at $SECONDS s" >> "$w/times.txt"
# shellcheck disable=SC2086 # TESTS is a list of names
SINCE=$SECONDS bash scripts/gpu-tests.sh gpu-run/bin/test-ltokit-ivf-gpu-test "$w" "${DEADLINE:-450}" ${TESTS:-}
(cd "$w" && tar czf "$out/grid.tgz" --exclude='*/nv' --exclude='*.ivf' .)
for b in b10k b1k; do echo "== $b"; cut -c1-240 "$w/$b/summary.md" 2>/dev/null; tail -3 "$w/$b.log"; done
grep -E "^test |test result|panicked|not run" "$w/tests.txt" 2>/dev/null | cut -c1-200
cat "$w/times.txt"
