#!/usr/bin/env bash
# Time per queued launch without a GPU (issue 34): `bench_gpu_api` (our C API) against
# `bench_cuda_raw` (the driver API alone), both on the stand-in CUDA driver in its
# benchmark mode (tests/cuda_support/stand_in_libcuda.c, STAND_IN_CUDA_LAUNCH_COST):
#   warm  a launch of the empty kernel returns at once: the time is the caller's side;
#   cold  the same, after 48 KiB of the driver's code and 48 KiB of its data per launch,
#         which push the caller's code and data out of the core's first-level caches as
#         a real driver's microseconds of work in the call would.
# Ours minus the driver's is what our code costs per launch, warm and cold. Alternating
# processes, ROUNDS each (default 5); prints the medians.
#
#   scripts/launch-cost.sh [ROUNDS]
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
ensure_build_tools
build_and_install
build_against_install "$ROOT/bench-c" "$BUILD/bench-c" >/dev/null
rounds=${1:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -shared -fPIC -O1 -std=gnu11 -pthread -o "$work/libcuda.so.1" \
  "$ROOT/tests/cuda_support/stand_in_libcuda.c"
ptx="$ROOT/bench-c/kernels/gpu/empty.ptx"
queued() { awk '$1 == "RESULT" && $2 == "queued_launch_us" { print $3 }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

printf '%-6s %14s %14s %14s\n' mode "driver, us" "ours, us" "ours - driver"
for mode in warm cold; do
  : >"$work/raw" && : >"$work/ours"
  for _ in $(seq "$rounds"); do
    STAND_IN_CUDA_LAUNCH_COST=$mode LD_LIBRARY_PATH=$work \
      "$BUILD/bench-c/bench_cuda_raw" "$ptx" | queued >>"$work/raw"
    STAND_IN_CUDA_LAUNCH_COST=$mode OFFLOAD_CUDA_LIBRARY=$work/libcuda.so.1 \
      OFFLOAD_PLATFORMS=cuda LD_LIBRARY_PATH="$PREFIX/lib" \
      "$BUILD/bench-c/bench_gpu_api" "$ptx" | queued >>"$work/ours"
  done
  raw=$(median <"$work/raw") ours=$(median <"$work/ours")
  [ -n "$raw" ] && [ -n "$ours" ] || { echo "no queued_launch_us in the output" >&2; exit 1; }
  printf '%-6s %14.3f %14.3f %14.3f\n' "$mode" "$raw" "$ours" \
    "$(awk -v a="$ours" -v b="$raw" 'BEGIN { print a - b }')"
done
