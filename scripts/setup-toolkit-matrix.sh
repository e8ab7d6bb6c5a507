#!/usr/bin/env bash
# Installs NVRTC and nvJitLink of several CUDA 13 releases, each in its own folder
# .cuda/matrix/<version>/ (project-local; kept between runs: a stamp per folder), for the
# toolkit matrix test (crates/ltokit-cli/tests/toolkit_matrix.rs): the oldest and the
# newest CUDA 13 releases PyPI serves, and one in between.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
releases=(13.0.88 13.3.33 13.5.37)
python=${PYTHON:-python3}
for v in "${releases[@]}"; do
  dir="$root/.cuda/matrix/$v"
  stamp="$dir/.ltokit-wheels"
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$v" && -f "$dir/nvidia/cu13/lib/libnvJitLink.so.13" ]]; then
    continue
  fi
  echo "setup-toolkit-matrix: installing NVRTC and nvJitLink $v into $dir" >&2
  rm -rf "$dir"
  mkdir -p "$dir"
  "$python" -m pip install --quiet --disable-pip-version-check --no-cache-dir --no-deps --no-compile --target "$dir" \
    "nvidia-cuda-nvrtc==$v" "nvidia-nvjitlink==$v"
  [[ -f "$dir/nvidia/cu13/lib/libnvrtc.so.13" && -f "$dir/nvidia/cu13/lib/libnvJitLink.so.13" ]] \
    || { echo "setup-toolkit-matrix: $v is incomplete after install" >&2; exit 1; }
  echo "$v" > "$stamp"
done
