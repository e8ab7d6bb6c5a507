#!/usr/bin/env bash
# Kernel parity on the GPU machine: the IVF scan for (f32, 16-byte loads, l2, no filter,
# capacity 16 = k 10) compiled whole-program by nvcc -arch=sm_90 vs assembled by ltokit
# from fragments with nvJitLink. The nvcc cubin is imported into a kernel cache under the
# plan's key (`ltokit cache import`), so the same search code runs either kernel.
# Alternates the two three times; writes JSON into $1.
set -uo pipefail
out=${1:?usage: gpu-parity.sh OUT_DIR}
mkdir -p "$out"
K=crates/ltokit-ivf/kernels
L=gpu-run/bin/ltokit
cat > /tmp/ivf_whole.cu <<'CU'
#define IVF_CAPACITY 16
#define IVF_DTYPE_f32 1
#define IVF_VEC_max 1
#define IVF_METRIC_l2 1
#define IVF_FILTER_none 1
#include "dist.cu"
#include "metric.cu"
#include "filter.cu"
#include "scan.cu"
CU
/usr/local/cuda/bin/nvcc -cubin -arch=sm_90 -O3 -I"$K" /tmp/ivf_whole.cu -o "$out/scan_nvcc.cubin" || exit 1
rm -rf /tmp/par-jit /tmp/par-nvcc
$L cache import --bundle gpu-run/ivf.ltkb --plan scan_c16_f32_vmax_l2_none --arch native "$out/scan_nvcc.cubin" --cache-dir /tmp/par-nvcc
args="--base synthetic:1000000:128:f32 --queries synthetic:10000 --lists 1024 --probes 10,20,50 --k 10 --batch 10000 --reps 7 --json"
for round in 1 2 3; do
  $L ivf bench $args --cache-dir /tmp/par-jit > "$out/jit-$round.json"
  $L ivf bench $args --cache-dir /tmp/par-nvcc > "$out/nvcc-$round.json"
done
python3 - "$out" <<'PY'
import json, pathlib, statistics, sys
out = pathlib.Path(sys.argv[1])
def load(kind):
    runs = [json.loads((out / f"{kind}-{r}.json").read_text()) for r in (1, 2, 3)]
    return {p: statistics.median(x["median_ms"] for run in runs for x in run["results"] if x["n_probes"] == p) for p in (10, 20, 50)}
jit, nvcc = load("jit"), load("nvcc")
print("| n_probes | nvcc whole-program | ltokit JIT-LTO | ratio (nvcc time / ltokit time) |")
print("|---|---|---|---|")
for p in (10, 20, 50):
    print(f"| {p} | {nvcc[p]:.2f} ms | {jit[p]:.2f} ms | {nvcc[p] / jit[p]:.3f} |")
PY
