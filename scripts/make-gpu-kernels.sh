#!/usr/bin/env bash
# Rebuilds the committed PTX of the GPU benchmark kernels from their C sources with
# clang-19 (--target=nvptx64-nvidia-cuda; no CUDA toolkit needed). PTX for sm_60 runs on
# every later GPU: the driver compiles it for the device at load time.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
ensure_packages clang-19:clang-19
for source in "$ROOT"/bench-c/kernels/gpu/*.c; do
  clang-19 --target=nvptx64-nvidia-cuda -march=sm_60 -O2 -S "$source" -o "${source%.c}.ptx"
  log "built ${source%.c}.ptx"
done
