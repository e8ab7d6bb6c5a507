#!/usr/bin/env bash
# Installs the CUDA 13.0 compiler libraries (NVRTC, nvJitLink, nvFatbin) and the CUDA
# headers NVRTC needs from PyPI wheels into the project-local prefix .cuda/pip, where
# ltokit finds them by itself. No GPU and no CUDA toolkit are needed. Idempotent: a
# stamp file records the pinned set, and nothing is downloaded when it matches.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
prefix="$root/.cuda/pip"
# LTO-IR is produced by the oldest NVRTC ltokit supports (13.0); nvJitLink must be at
# least as new, same major.
wheels=(
  nvidia-cuda-nvrtc==13.0.88
  nvidia-nvjitlink==13.0.88
  nvidia-nvfatbin==13.0.85
  nvidia-cuda-runtime==13.0.96
  nvidia-cuda-crt==13.0.88
  nvidia-cuda-cccl==13.0.85
)
stamp="$prefix/.ltokit-wheels"
if [[ -f "$stamp" && "$(cat "$stamp")" == "${wheels[*]}" && -f "$prefix/nvidia/cu13/lib/libnvJitLink.so.13" ]]; then
  exit 0
fi
python=${PYTHON:-python3}
command -v "$python" >/dev/null || { echo "setup-cuda: $python not found; install Python 3 with pip" >&2; exit 1; }
echo "setup-cuda: installing ${wheels[*]} into $prefix" >&2
rm -rf "$prefix"
mkdir -p "$prefix"
"$python" -m pip install --quiet --disable-pip-version-check --no-cache-dir --no-deps --no-compile --target "$prefix" "${wheels[@]}"
for lib in libnvrtc.so.13 libnvrtc-builtins.so.13.0 libnvJitLink.so.13 libnvfatbin.so.13; do
  [[ -f "$prefix/nvidia/cu13/lib/$lib" ]] || { echo "setup-cuda: $lib missing after install" >&2; exit 1; }
done
[[ -f "$prefix/nvidia/cu13/include/cuda_fp16.h" ]] || { echo "setup-cuda: CUDA headers missing after install" >&2; exit 1; }
echo "${wheels[*]}" > "$stamp"
