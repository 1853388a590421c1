#!/usr/bin/env bash
# Builds the library and bench-c/, runs the benchmarks and prints a table of medians
# (31 batches each), then bench_kernels' table (kernel launches, queues, events). The
# memory pool and validation are switched with their environment variables, so each
# comparison runs the same program twice.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
ensure_build_tools
if [ ! -f "$PREFIX/lib/cmake/LLVMOffload/LLVMOffloadConfig.cmake" ] || [ "${REBUILD:-0}" = 1 ]; then
  build_and_install
fi
build_against_install "$ROOT/bench-c" "$BUILD/bench-c" >/dev/null
bench="$BUILD/bench-c/bench_offload"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

log "running (a few seconds); load average: $(cat /proc/loadavg)"
env -u OFFLOAD_MEMORY_POOL_THRESHOLD -u LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD \
  "$bench" alloc >"$out/pool_on"
OFFLOAD_MEMORY_POOL_THRESHOLD=0 "$bench" alloc >"$out/pool_off"
env -u OFFLOAD_DISABLE_VALIDATION "$bench" info >"$out/validated"
OFFLOAD_DISABLE_VALIDATION=1 "$bench" info >"$out/unvalidated"
"$bench" memcpy >"$out/memcpy"
"$BUILD/bench-c/bench_kernels" >"$out/kernels"

value() { awk -v k="$2" '$1 == "RESULT" && $2 == k { print $3 }' "$out/$1"; }

echo
echo "olMemAlloc + olMemFree pair (DEVICE memory of the host device), median ns per pair"
printf '%-10s %-8s %12s %12s %10s\n' size threads "pool on" "pool off" "off/on"
for size in 64B 4KiB 1MiB; do
  for threads in 1 2; do
    key="alloc_free_${size}_${threads}thread"
    on=$(value pool_on "$key") off=$(value pool_off "$key")
    printf '%-10s %-8s %12.1f %12.1f %9.2fx\n' "$size" "$threads" "$on" "$off" \
      "$(awk -v a="$off" -v b="$on" 'BEGIN { print a / b }')"
  done
done

echo
echo "olGetDeviceInfo(NUM_COMPUTE_UNITS), median ns per call"
on=$(value validated device_info_num_compute_units)
off=$(value unvalidated device_info_num_compute_units)
printf '%-32s %10.1f\n' "validation on (default)" "$on"
printf '%-32s %10.1f\n' "OFFLOAD_DISABLE_VALIDATION=1" "$off"

echo
echo "64 MiB copy, host <-> host-device memory, median ms per copy"
printf '%-16s %12s %12s %12s\n' direction olMemcpy memcpy "% of memcpy"
for dir in host_to_device device_to_host; do
  ol=$(value memcpy "memcpy64MiB_olMemcpy_$dir") libc=$(value memcpy "memcpy64MiB_libc_$dir")
  awk -v d="$dir" -v o="$ol" -v l="$libc" \
    'BEGIN { printf "%-16s %12.2f %12.2f %11.0f%%\n", d, o / 1e6, l / 1e6, 100 * l / o }'
done
echo
echo "(% of memcpy: memcpy's time / olMemCpy's time, so 100% means as fast as memcpy)"
echo
sed -n '/^kernels on the host device/,$p' "$out/kernels"

# The baseline: LLVM 19's libomptarget, same machine, same run (built only when clang-19
# and libomp-19-dev are installed).
if [ -x "$BUILD/bench-c/bench_libomptarget" ]; then
  "$BUILD/bench-c/bench_libomptarget" >"$out/omp"
  echo
  echo "liboffload vs LLVM 19 libomptarget (x86_64 host plugin, device 0), medians"
  printf '%-44s %12s %14s %8s\n' what liboffload libomptarget ratio
  compare() { # label, ours, theirs, unit
    awk -v w="$1" -v o="$2" -v t="$3" -v u="$4" \
      'BEGIN { printf "%-44s %10.3f %s %12.3f %s %7.2fx\n", w, o, u, t, u, t / o }'
  }
  for size in 64B 4KiB 1MiB; do
    compare "alloc+free pair, $size (ns)" "$(value pool_on "alloc_free_${size}_1thread")" \
      "$(value omp "omp_alloc_free_$size")" ns
  done
  compare "64 MiB copy host->device (ms)" \
    "$(awk '{ print $1 / 1e6 }' <<<"$(value memcpy memcpy64MiB_olMemcpy_host_to_device)")" \
    "$(awk '{ print $1 / 1e6 }' <<<"$(value omp omp_memcpy64MiB_host_to_device)")" ms
  compare "empty kernel, synchronous launch (us)" "$(value kernels launch_sync_us)" \
    "$(value omp omp_empty_target_us)" us
  echo "(ratio: libomptarget's time / liboffload's; above 1 means liboffload is faster)"
fi
