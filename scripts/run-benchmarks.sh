#!/usr/bin/env bash
# Builds the library and bench-c/, runs the benchmarks and prints a table of medians
# (31 batches each), then bench_kernels' table (kernel launches, queues, events). The
# memory pool and validation are switched with their environment variables, so each
# comparison runs the same program twice.
#
#   scripts/run-benchmarks.sh          everything, then the host rows under load
#                                      (scripts/run-load-benchmarks.sh; about 10 minutes)
#   scripts/run-benchmarks.sh --load   only the rows under load
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
ensure_build_tools
# Always (cmake and cargo rebuild only what changed): an older install in _install/
# would measure an older library.
build_and_install
build_against_install "$ROOT/bench-c" "$BUILD/bench-c" >/dev/null
if [ "${1:-}" = "--load" ]; then
  exec bash "$ROOT/scripts/run-load-benchmarks.sh" --no-build
fi
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
# The median of a few numbers (mawk has no asort), for the awk programs below.
awk_median='
  function mid(list,   a, k, i, j, t) {
    k = split(list, a, " ")
    for (i = 2; i <= k; i++) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
      t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    return a[int((k + 1) / 2)]
  }'

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

# Our libomptarget.so.19.1 against LLVM 19's: the same clang-19 binary, LD_LIBRARY_PATH
# picks the library; three runs of each, alternating, and the median of the medians.
omp_bench="$BUILD/bench-c/bench_libomptarget"
if [ -x "$omp_bench" ] && [ -e "$PREFIX/lib/libomptarget.so.19.1" ]; then
  for round in 1 2 3; do
    LD_LIBRARY_PATH=/usr/lib/llvm-19/lib "$omp_bench" >"$out/omp_llvm$round"
    LD_LIBRARY_PATH="$PREFIX/lib" "$omp_bench" >"$out/omp_ours$round"
  done
  echo
  echo "The same OpenMP binary on LLVM 19's libomptarget and on ours (device 0), medians"
  printf '%-36s %12s %12s %9s\n' what "LLVM 19" ours ours/LLVM
  awk "$awk_median"'
    FNR == 1 { who = (FILENAME ~ /omp_ours[0-9]$/) ? "ours" : "llvm" }
    $1 == "RESULT" { v[who, $2] = v[who, $2] " " $3; if (!($2 in seen)) { seen[$2] = 1; name[++n] = $2 } }
    END {
      for (i = 1; i <= n; i++) {
        c = name[i]; l = mid(v["llvm", c]); o = mid(v["ours", c])
        printf "%-36s %12s %12s %8.2fx\n", c, l, o, (l > 0 ? o / l : 0)
      }
    }' "$out"/omp_llvm[123] "$out"/omp_ours[123]
  echo "(ours/LLVM: our time / LLVM's; below 1 means ours is faster)"
fi

# Remote devices against plain MPI between the same two ranks (loopback): one server and
# the benchmark in one MPI job, and MPI's own ping-pong.
if command -v mpirun >/dev/null && [ -x "$PREFIX/bin/offload-mpi-device" ] &&
   [ -x "$BUILD/bench-c/bench_mpi_pingpong" ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  mpirun --oversubscribe -np 2 "$BUILD/bench-c/bench_mpi_pingpong" >"$out/mpi"
  mpirun --oversubscribe -np 1 "$PREFIX/bin/offload-mpi-device" : -np 1 \
    "$BUILD/bench-c/bench_remote" "$BUILD/bench-c/bench_kernels.so" >"$out/remote"
  echo
  echo "A remote host device (offload-mpi-device, loopback) against plain MPI, medians"
  printf '%-34s %12s %12s %9s\n' what "plain MPI" remote remote/MPI
  for size in 4KiB 1MiB 64MiB 1GiB; do
    for dir in to_remote from_remote; do
      m=$(value mpi "mpi_${dir}_${size}_GBps"); r=$(value remote "remote_${dir}_${size}_GBps")
      printf '%-34s %12s %12s %8.2fx\n' "$dir $size (GB/s)" "$m" "$r" "$(awk "BEGIN { print $r / $m }")"
    done
  done
  printf '%-34s %12s %12s\n' "round trip / empty launch+sync (us)" "$(value mpi mpi_round_trip_us)" \
    "$(value remote remote_empty_launch_sync_us)"
  printf '%-34s %12s %12s\n' "queued launch, each (us)" "-" "$(value remote remote_queued_launch_us)"
fi

# LLVM 22's libLLVMOffload.so.22.1 against ours: one binary, written for LLVM's header and
# linked against libLLVMOffload.so.22.1; LD_LIBRARY_PATH picks the library. Three runs of
# each, alternating, and the median of the three medians.
llvm_lib=/usr/lib/llvm-22/lib
if [ -e "$llvm_lib/libLLVMOffload.so.22.1" ]; then
  api="$BUILD/bench-c/bench_llvm_api"
  program="$BUILD/bench-c/bench_kernels.so"
  for round in 1 2 3; do
    LD_LIBRARY_PATH="$PREFIX/lib" "$api" "$program" >"$out/ours$round"
    LD_LIBRARY_PATH="$llvm_lib" "$api" "$program" >"$out/llvm$round" 2>/dev/null
  done
  echo
  echo "The same binary on LLVM 22.1's libLLVMOffload.so.22.1 and on ours (host device), medians"
  printf '%-44s %14s %30s %9s\n' call liboffload "LLVM 22.1" "LLVM/ours"
  awk "$awk_median"'
    FNR == 1 { who = (FILENAME ~ /ours[0-9]$/) ? "ours" : "llvm" }
    function note(c) { if (!(c in seen)) { seen[c] = 1; name[++n] = c } }
    $1 == "RESULT" { v[who, $2] = v[who, $2] " " $3; unit[$2] = $4; note($2) }
    $1 == "CRASH" { bad[who, $2] = "crashes (" $3 " " $4 ")"; note($2) }
    $1 == "REFUSED" { msg = ""; for (i = 4; i <= NF; i++) msg = msg " " $i
                      bad[who, $2] = "refuses:" msg; note($2) }
    END {
      for (i = 1; i <= n; i++) {
        c = name[i]
        o = (("ours", c) in v) ? sprintf("%.1f %s", mid(v["ours", c]), unit[c]) : bad["ours", c]
        l = (("llvm", c) in v) ? sprintf("%.1f %s", mid(v["llvm", c]), unit[c]) : bad["llvm", c]
        r = (("ours", c) in v && ("llvm", c) in v && mid(v["ours", c]) > 0) ? \
            sprintf("%.2fx", mid(v["llvm", c]) / mid(v["ours", c])) : "-"
        printf "%-44s %14s %30s %9s\n", c, o, substr(l, 1, 30), r
      }
    }' "$out"/ours[123] "$out"/llvm[123]
  echo "(LLVM/ours: LLVM's time / ours; above 1 means ours is faster. over_10us: how many"
  echo " of 100,000 create+sync pairs took over 10 us.)"
else
  echo
  echo "LLVM 22's libLLVMOffload.so.22.1 not found (install liboffload-22-dev): no comparison"
fi

# The GPU: the CUDA driver API alone, LLVM 22's library and ours, the same cases (one
# binary for the two libraries). Each says so and measures nothing without a GPU.
ptx="$ROOT/bench-c/kernels/gpu/empty.ptx"
"$BUILD/bench-c/bench_cuda_raw" "$ptx" >"$out/gpu_raw"
LD_LIBRARY_PATH="$PREFIX/lib" "$BUILD/bench-c/bench_gpu_api" "$ptx" >"$out/gpu_ours"
if [ -e "$llvm_lib/libLLVMOffload.so.22.1" ]; then
  LD_LIBRARY_PATH="$llvm_lib" "$BUILD/bench-c/bench_gpu_api" "$ptx" >"$out/gpu_llvm" 2>&1
else
  echo "skipped: LLVM 22's library not installed" >"$out/gpu_llvm"
fi
echo
if ! grep -q '^RESULT' "$out/gpu_ours"; then
  echo "GPU benchmarks: $(head -1 "$out/gpu_ours") (driver API: $(head -1 "$out/gpu_raw"))"
else
  echo "The GPU (first GPU device), medians: the CUDA driver API alone, LLVM 22.1, liboffload"
  printf '%-26s %12s %12s %12s %10s\n' case "driver API" "LLVM 22.1" liboffload "ours/raw"
  for key in $(awk '$1 == "RESULT" { print $2 }' "$out/gpu_ours"); do
    raw=$(value gpu_raw "$key") ours=$(value gpu_ours "$key") llvm=$(value gpu_llvm "$key")
    printf '%-26s %12s %12s %12s %10s\n' "$key" "${raw:--}" "${llvm:-refused}" "$ours" \
      "$(awk -v o="$ours" -v r="$raw" 'BEGIN { if (r > 0) printf "%.2fx", o / r; else print "-" }')"
  done
  grep '^REFUSED' "$out/gpu_llvm" | sed 's/^/LLVM 22.1: /' || true
  echo "(us: lower is better; GB/s: higher is better)"
fi

# The host rows that use every core, idle and under load (issue 21).
bash "$ROOT/scripts/run-load-benchmarks.sh" --no-build
