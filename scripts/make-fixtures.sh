#!/usr/bin/env bash
# Makes the nvcc-built fixtures of tests/fixtures/ (run on the GPU machine, which has
# nvcc 13.0 and cuobjdump) into the folder given as $1, with their cuobjdump listings.
set -euo pipefail
out=$(realpath -m "${1:?usage: make-fixtures.sh OUT_DIR}")
scripts_dir=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
work=$(mktemp -d)
cd "$work"
cat > small.cu <<'CU'
extern "C" __global__ void k(float* a){ a[threadIdx.x] += 1.f; }
CU
# A kernel large enough that nvcc's compressor bothers to compress it.
cat > big.cu <<'CU'
extern "C" __global__ void big(float* a, int n){
  float x = a[threadIdx.x];
#pragma unroll
  for (int i = 0; i < 600; ++i) { x = __sinf(x * 1.0001f + i) + __cosf(x - 0.5f * i); }
  a[threadIdx.x] = x;
}
CU
nv=/usr/local/cuda/bin/nvcc
$nv -fatbin -gencode arch=compute_90a,code=sm_90a -gencode arch=compute_100f,code=sm_100f \
    -gencode arch=compute_90,code=compute_90 --compress-mode=none small.cu -o "$out/mixed_a_f_ptx.fatbin"
$nv -fatbin -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90 \
    --compress-mode=speed big.cu -o "$out/big_speed.fatbin"
$nv -fatbin -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90 \
    --compress-mode=size big.cu -o "$out/big_size.fatbin"
$nv -c -Xcompiler -fPIC -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=compute_90 \
    small.cu -o "$out/host_object.o"
$nv -c -rdc=true -Xcompiler -fPIC -gencode arch=compute_90,code=sm_90 small.cu -o "$out/host_rdc.o"
$nv -shared -Xcompiler -fPIC -gencode arch=compute_75,code=sm_75 -gencode arch=compute_90,code=sm_90 \
    -gencode arch=compute_90,code=compute_90 small.cu -o "$out/libsmall.so"
$nv -cubin -arch=sm_90 small.cu -o "$out/small_sm90.cubin"
"$scripts_dir/list-cuobjdump.sh" "$out" > "$out/cuobjdump_listings.txt"
$nv --version > "$out/nvcc_version.txt"
ls -l "$out"
