#!/usr/bin/env bash
# The host rows that use more than one core (8 and 64 MiB copies and fills, kernels over
# all cores, the OpenMP 8 MiB tofrom region and teams saxpy), each measured on an idle
# machine, beside one busy process, and beside one busy process per core (`yes`
# processes, started and killed here), all in one run. At each level, three rounds
# alternate the libraries: ours, LLVM 22's libLLVMOffload.so.22.1 (the same bench_load
# binary) and, for the OpenMP rows, LLVM 19's libomptarget.so.19.1 (the same clang-19
# binary); the single-threaded way (one memcpy, one memset, the kernel as one group, a
# loop by hand on one pthread per core) runs inside bench_load, sample by sample
# alternating with the library's call. Prints medians and 90th percentiles (the median
# over the rounds of each), and the ratios.
#
#   scripts/run-load-benchmarks.sh            builds and installs first
#   scripts/run-load-benchmarks.sh --no-build uses what scripts/run-benchmarks.sh built
# About 3 minutes on a 2-core machine.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
if [ "${1:-}" != "--no-build" ]; then
  ensure_build_tools
  build_and_install
  build_against_install "$ROOT/bench-c" "$BUILD/bench-c" >/dev/null
fi
bench="$BUILD/bench-c/bench_load"
program="$BUILD/bench-c/bench_kernels.so"
omp_bench="$BUILD/bench-c/bench_libomptarget"
llvm22=/usr/lib/llvm-22/lib
llvm19=/usr/lib/llvm-19/lib
cores=$(nproc)
out=$(mktemp -d)
busy=()
stop_busy() {
  if [ ${#busy[@]} -gt 0 ]; then
    kill "${busy[@]}" 2>/dev/null || true
    wait "${busy[@]}" 2>/dev/null || true
  fi
  busy=()
}
trap 'stop_busy; rm -rf "$out"' EXIT
trap 'exit 130' INT TERM

for level in idle one all; do
  case $level in
    idle) n=0 ;;
    one) n=1 ;;
    all) n=$cores ;;
  esac
  for ((i = 0; i < n; i++)); do
    yes >/dev/null &
    busy+=($!)
  done
  sleep 0.5
  log "load level '$level': $n busy processes; load average $(cat /proc/loadavg)"
  for round in 1 2 3; do
    LD_LIBRARY_PATH="$PREFIX/lib" "$bench" "$program" 21 >"$out/$level.ours.$round"
    if [ -e "$llvm22/libLLVMOffload.so.22.1" ]; then
      LD_LIBRARY_PATH="$llvm22" "$bench" "$program" 21 >"$out/$level.llvm22.$round" 2>/dev/null
    fi
    if [ -x "$omp_bench" ]; then
      LD_LIBRARY_PATH="$llvm19" "$omp_bench" tofrom 101 saxpy 21 >"$out/$level.llvm19.$round"
      LD_LIBRARY_PATH="$PREFIX/lib" "$omp_bench" tofrom 101 saxpy 21 >>"$out/$level.ours.$round"
    fi
  done
  echo "$(cat /proc/loadavg)" >"$out/$level.loadavg"
  stop_busy
done

echo
echo "Host rows under load: medians (p90) over three alternating rounds, $cores cores"
echo "(idle: nothing else running; one: one busy process; all: one busy process per core)"
awk '
  function mid(list,   a, k, i, j, t) {
    k = split(list, a, " ")
    for (i = 2; i <= k; i++) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
      t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    return a[int((k + 1) / 2)]
  }
  FNR == 1 { split(FILENAME, parts, "/"); split(parts[length(parts)], f, ".")
             level = f[1]; who = f[2] }
  $1 == "RESULT" {
    p90 = ($4 == "p90") ? $5 : $4
    med[level, who, $2] = med[level, who, $2] " " $3
    tail[level, who, $2] = tail[level, who, $2] " " p90
  }
  $1 == "CRASH" { crash[level, who, $2] = 1 }
  function num(v) { return v >= 100 ? sprintf("%.0f", v) : v >= 10 ? sprintf("%.1f", v) : sprintf("%.2f", v) }
  function cell(level, who, key) {
    if (!((level, who, key) in med)) return "-"
    return num(mid(med[level, who, key])) " (" num(mid(tail[level, who, key])) ")"
  }
  function ratio(level, a, ka, b, kb) {
    if (!((level, a, ka) in med) || !((level, b, kb) in med)) return "-"
    return sprintf("%.2fx", mid(med[level, a, ka]) / mid(med[level, b, kb]))
  }
  function row(label, unit, base_who, base_key, llvm_who, llvm_key, key, base_label) {
    for (l = 1; l <= 3; l++) {
      lv = levels[l]
      printf "%-24s %-5s %-13s %-17s %-17s %-17s %10s %10s\n", label, lv, base_label,
        cell(lv, base_who, base_key), cell(lv, llvm_who, llvm_key), cell(lv, "ours", key),
        ratio(lv, "ours", key, base_who, base_key), ratio(lv, "ours", key, llvm_who, llvm_key)
    }
  }
  END {
    levels[1] = "idle"; levels[2] = "one"; levels[3] = "all"
    printf "%-24s %-5s %-13s %-17s %-17s %-17s %10s %10s\n", "row (ms)", "load",
      "single-thread", "its time", "LLVM", "ours", "ours/1thr", "ours/LLVM"
    for (s = 8; s <= 64; s *= 8) {
      row("copy " s " MiB", "ms", "ours", "copy_" s "MiB_memcpy", "llvm22",
          "copy_" s "MiB_olMemcpy", "copy_" s "MiB_olMemcpy", "memcpy")
      row("fill " s " MiB", "ms", "ours", "fill_" s "MiB_memset", "llvm22",
          "fill_" s "MiB_olMemFill", "fill_" s "MiB_olMemFill", "memset")
    }
    row("saxpy 2^24, 128 groups", "ms", "ours", "saxpy_one_group", "llvm22",
        "saxpy_all_cores", "saxpy_all_cores", "one group")
    row("saxpy 2^24, 128 groups", "ms", "ours", "saxpy_pthreads", "llvm22",
        "saxpy_all_cores_vs_pthreads", "saxpy_all_cores_vs_pthreads", "pthreads")
    row("OpenMP tofrom 8 MiB (us)", "us", "none", "-", "llvm19",
        "omp_region_tofrom_8MiB_us", "omp_region_tofrom_8MiB_us", "-")
    row("OpenMP teams saxpy", "ms", "none", "-", "llvm19", "omp_saxpy_2e24_ms",
        "omp_saxpy_2e24_ms", "-")
  }' $(ls "$out"/*.[123] | sort)
echo "(LLVM: LLVM 22.1's liboffload for the C API rows, where it can do them ('-': it"
echo " crashes, its host device has no memory or programs); LLVM 19's libomptarget for the"
echo " OpenMP rows. ours/1thr and ours/LLVM: ratios of medians, below 1 means ours is faster.)"
for level in idle one all; do
  echo "load average after '$level': $(cat "$out/$level.loadavg")"
done
