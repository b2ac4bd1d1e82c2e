#!/usr/bin/env bash
# Compile every CUDA kernel for sm_80 and sm_90, so a syntax error never lands (no GPU needed).
# Files declare their instantiations under AUTOGRAD_GPU_COMPILE_CHECK (see kernels/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v nvcc >/dev/null || { echo "nvcc not found: kernels not compiled" >&2; exit 1; }
out=$(mktemp -d)
for f in kernels/*.cu; do
  for arch in 80 90; do
    nvcc -std=c++17 -DAUTOGRAD_GPU_COMPILE_CHECK -arch=sm_${arch} -cubin -o "$out/$(basename "$f" .cu)_sm${arch}.cubin" "$f"
  done
  echo "compiled $f for sm_80 and sm_90"
done
