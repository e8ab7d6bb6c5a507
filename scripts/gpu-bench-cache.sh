#!/usr/bin/env bash
# Cache benchmarks on the GPU machine (run by gpu-run.sh; needs gpu-run/ from gpu-build.sh).
# Writes JSON lines and a summary into the folder $1. Every measuring process is fresh.
#   warm-up of the whole demo bundle for sm_90 (all cores, and one core)
#   cold: empty cache, nvJitLink load and first link timed apart, then the request;
#         again with CUDA_CACHE_DISABLE=1 (nvJitLink may use the driver's JIT cache)
#   warm: L2 hit in a fresh process under LTOKIT_JIT=off (strict: zero links possible)
# Each request launches the kernel and checks it against the CPU reference (--check).
set -uo pipefail
out=${1:?usage: gpu-bench-cache.sh OUT_DIR}
mkdir -p "$out"
L=gpu-run/bin/ltokit
B=tests/fixtures/ltk-demo.ltkb
plan=demo_abs_x2_O3
runs=${BENCH_RUNS:-30}
# Warm-up with the driver's JIT cache off, so that every link is a real one.
for jobs in 0 1; do
  rm -rf /tmp/ltk-warm-$jobs
  CUDA_CACHE_DISABLE=1 $L warmup --bundle $B --arch sm_90 --jobs $jobs --json --cache-dir /tmp/ltk-warm-$jobs > "$out/warmup-jobs$jobs.json"
done
: > "$out/cold.jsonl"
for i in $(seq 10); do
  rm -rf /tmp/ltk-cold
  $L bench cache --bundle $B --plan $plan --cold --check --json --cache-dir /tmp/ltk-cold >> "$out/cold.jsonl"
done
: > "$out/cold-nodrivercache.jsonl"
for i in $(seq 10); do
  rm -rf /tmp/ltk-cold
  CUDA_CACHE_DISABLE=1 $L bench cache --bundle $B --plan $plan --cold --check --json --cache-dir /tmp/ltk-cold >> "$out/cold-nodrivercache.jsonl"
done
rm -rf /tmp/ltk-hot
$L warmup --bundle $B --arch sm_90 --json --cache-dir /tmp/ltk-hot > /dev/null
: > "$out/warm.jsonl"
for i in $(seq "$runs"); do
  LTOKIT_JIT=off $L bench cache --bundle $B --plan $plan --check --json --iters 10000 --cache-dir /tmp/ltk-hot >> "$out/warm.jsonl"
done
$L cache stats --json --cache-dir /tmp/ltk-hot > "$out/hot-cache-stats.json"
python3 - "$out" <<'PY'
import json, statistics, sys, pathlib
out = pathlib.Path(sys.argv[1])
def rows(name): return [json.loads(l) for l in (out / name).read_text().splitlines() if l.strip()]
class NA(float):
    def __format__(self, spec): return "n/a"
def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else NA()
def p95(xs):
    xs = sorted(x for x in xs if x is not None)
    return xs[min(len(xs) - 1, int(len(xs) * 0.95))] if xs else NA()
cold, warm, cold_nc = rows("cold.jsonl"), rows("warm.jsonl"), rows("cold-nodrivercache.jsonl")
w0 = json.loads((out / "warmup-jobs0.json").read_text()); w1 = json.loads((out / "warmup-jobs1.json").read_text())
stats = json.loads((out / "hot-cache-stats.json").read_text())
lines = [
 "| measurement | median | p95 | runs |", "|---|---|---|---|",
 f"| context creation (fresh process) | {med([r['context_ms'] for r in warm]):.1f} ms | {p95([r['context_ms'] for r in warm]):.1f} ms | {len(warm)} |",
 f"| fresh process, L2 hit → kernel ready (LTOKIT_JIT=off) | {med([r['request_to_ready_ms'] for r in warm]):.3f} ms | {p95([r['request_to_ready_ms'] for r in warm]):.3f} ms | {len(warm)} |",
 f"| L1 hit | {med([r['l1_hit_median_us'] for r in warm]):.2f} µs | {med([r['l1_hit_p95_us'] for r in warm]):.2f} µs (median of per-process p95) | {len(warm)} × 10000 |",
 f"| fresh process, nvJitLink load (dlopen + symbols) | {med([r['linker_load_ms'] for r in cold]):.1f} ms | {p95([r['linker_load_ms'] for r in cold]):.1f} ms | {len(cold)} |",
 f"| fresh process, first link (nvJitLink start-up + link of another plan) | {med([r['first_link_other_plan_ms'] for r in cold]):.1f} ms | {p95([r['first_link_other_plan_ms'] for r in cold]):.1f} ms | {len(cold)} |",
 f"| fresh process, cold request after that (link + publish + load) | {med([r['request_to_ready_ms'] for r in cold]):.1f} ms | {p95([r['request_to_ready_ms'] for r in cold]):.1f} ms | {len(cold)} |",
 f"| same three, CUDA_CACHE_DISABLE=1: nvJitLink load | {med([r['linker_load_ms'] for r in cold_nc]):.1f} ms | {p95([r['linker_load_ms'] for r in cold_nc]):.1f} ms | {len(cold_nc)} |",
 f"| same, first link | {med([r['first_link_other_plan_ms'] for r in cold_nc]):.1f} ms | {p95([r['first_link_other_plan_ms'] for r in cold_nc]):.1f} ms | {len(cold_nc)} |",
 f"| same, cold request | {med([r['request_to_ready_ms'] for r in cold_nc]):.1f} ms | {p95([r['request_to_ready_ms'] for r in cold_nc]):.1f} ms | {len(cold_nc)} |",
 f"| warm-up (CUDA_CACHE_DISABLE=1), {w0['plans']} plans, all cores | {w0['seconds']:.2f} s ({w0['plans_per_second']:.0f} plans/s) | | 1 |",
 f"| warm-up (CUDA_CACHE_DISABLE=1), {w1['plans']} plans, one core | {w1['seconds']:.2f} s ({w1['plans_per_second']:.0f} plans/s) | | 1 |",
]
levels = sorted({r['level'] for r in warm}); loaded = any(r['nvjitlink_loaded'] for r in warm)
mism = sum((r.get('check_mismatches') or 0) for r in warm + cold + cold_nc); checked = sum(1 for r in warm + cold if r.get('check_mismatches') is not None)
lines.append("")
lines.append(f"warm runs served from: {levels}; nvJitLink loaded in any warm run: {loaded}; links recorded by the warm cache: {stats['counters']['links']} (all by the warm-up)")
lines.append(f"kernel checks vs CPU reference: {checked} runs, {mism} mismatching elements in total; cold levels: {sorted({r['level'] for r in cold})}")
(out / "summary.md").write_text("\n".join(lines) + "\n")
print("\n".join(lines))
PY
