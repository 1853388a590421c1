#!/usr/bin/env bash
# The host rows that use more than one core (8 and 64 MiB copies and fills, kernels over
# all cores, the OpenMP 8 MiB tofrom region and teams saxpy), each measured on an idle
# machine, beside one busy process, and beside one busy process per core (`yes`
# processes, started and killed here), all in one run. At each level, five rounds
# alternate ours and LLVM 22's libLLVMOffload.so.22.1 (the same bench_load binary), and
# fifteen shorter rounds, in swapped order every round, ours and LLVM 19's
# libomptarget.so.19.1 (the same clang-19 binary) for the OpenMP rows; the single-threaded
# way (one memcpy, one memset, the kernel as one group, a loop by hand on one pthread per
# core) runs inside bench_load, sample by sample alternating with the library's call.
# Prints medians and 90th percentiles (the median over the rounds of each), the ratios,
# for the OpenMP rows the median of the per-round ratios, and the 8 MiB region through
# the C API paired region by region with the plain way (bench_region_phases).
#
#   scripts/run-load-benchmarks.sh            builds and installs first
#   scripts/run-load-benchmarks.sh --no-build uses what scripts/run-benchmarks.sh built
# About 2.5 minutes on a 2-core machine.
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
c_rounds=5
omp_rounds=15
phases="$BUILD/bench-c/bench_region_phases"
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
  for ((round = 1; round <= c_rounds; round++)); do
    LD_LIBRARY_PATH="$PREFIX/lib" "$bench" "$program" 21 >"$out/$level.ours.$round"
    if [ -e "$llvm22/libLLVMOffload.so.22.1" ]; then
      LD_LIBRARY_PATH="$llvm22" "$bench" "$program" 21 >"$out/$level.llvm22.$round" 2>/dev/null
    fi
  done
  # The OpenMP rows compare two processes, so the machine's own drift (this VM's speed
  # moves by 2x within minutes) falls between them: more, shorter rounds, the order
  # swapped every round, and each round's pair of medians compared (paired ratios).
  # Each row runs in processes of its own, all of one row's rounds before the next row's:
  # a process that ran LLVM 19's saxpy slowed the region of the process after it
  # (LLVM's own region: ~1350 µs after one, ~940 µs after a region-only process).
  if [ -x "$omp_bench" ]; then
    for row in "tofrom 41" "saxpy 9"; do
      for ((round = 1; round <= omp_rounds; round++)); do
        ours_run() { LD_LIBRARY_PATH="$PREFIX/lib" "$omp_bench" $row >>"$out/$level.ours.$round"; }
        llvm_run() { LD_LIBRARY_PATH="$llvm19" "$omp_bench" $row >>"$out/$level.llvm19.$round"; }
        if ((round % 2)); then llvm_run; ours_run; else ours_run; llvm_run; fi
      done
    done
  fi
  # The region through the C API, each one paired with the same region done the plain
  # way (malloc, memcpy, a call, memcpy, free) right after it.
  if [ -x "$phases" ]; then
    (cd "$BUILD/bench-c" && LD_LIBRARY_PATH="$PREFIX/lib" "$phases" 201 8) >"$out/$level.phases"
  fi
  echo "$(cat /proc/loadavg)" >"$out/$level.loadavg"
  stop_busy
done

echo
echo "Host rows under load: medians (p90), the median over $c_rounds rounds ($omp_rounds for OpenMP rows), $cores cores"
echo "(idle: nothing else running; one: one busy process; all: one busy process per core)"
awk '
  function mid(list,   a, k, i, j, t) {
    k = split(list, a, " ")
    for (i = 2; i <= k; i++) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
      t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    return a[int((k + 1) / 2)]
  }
  FNR == 1 { split(FILENAME, parts, "/"); split(parts[length(parts)], f, ".")
             level = f[1]; who = f[2]; round = f[3] }
  $1 == "RESULT" {
    p90 = ($4 == "p90") ? $5 : $4
    med[level, who, $2] = med[level, who, $2] " " $3
    tail[level, who, $2] = tail[level, who, $2] " " p90
    in_round[level, who, $2, round] = $3
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
  # The median over rounds of ours / LLVM within each round, with the lowest and highest.
  function paired(level, key,   list, r, k, a, lo, hi) {
    list = ""
    for (r = 1; r <= 99; r++)
      if ((level, "ours", key, r) in in_round && (level, "llvm19", key, r) in in_round)
        list = list " " in_round[level, "ours", key, r] / in_round[level, "llvm19", key, r]
    if (list == "") return "-"
    k = split(list, a, " "); lo = a[1]; hi = a[1]
    for (r = 2; r <= k; r++) { if (a[r] < lo) lo = a[r]; if (a[r] > hi) hi = a[r] }
    return sprintf("%.2fx (%.2f-%.2f, %d rounds)", mid(list), lo, hi, k)
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
    print ""
    print "OpenMP rows, ours / LLVM 19 paired by round (median over rounds, lowest-highest):"
    for (l = 1; l <= 3; l++) {
      printf "%-24s %-5s %s\n", "OpenMP tofrom 8 MiB", levels[l], paired(levels[l], "omp_region_tofrom_8MiB_us")
      printf "%-24s %-5s %s\n", "OpenMP teams saxpy", levels[l], paired(levels[l], "omp_saxpy_2e24_ms")
    }
  }' $(ls "$out"/*.[0-9]* | sort)
echo "(LLVM: LLVM 22.1's liboffload for the C API rows, where it can do them ('-': it"
echo " crashes, its host device has no memory or programs); LLVM 19's libomptarget for the"
echo " OpenMP rows. ours/1thr and ours/LLVM: ratios of medians, below 1 means ours is faster.)"
echo
echo "The 8 MiB region through the C API against the plain way, each region paired with a"
echo "plain one right after it (bench_region_phases, 201 pairs): ours and plain in µs,"
echo "median (p90), and the per-pair ratio, median (p10-p90)"
for level in idle one all; do
  [ -e "$out/$level.phases" ] || continue
  awk -v level="$level" '
    $2 == "region_8MiB_us" { ours = sprintf("%.0f (%.0f)", $3, $5) }
    $2 == "plain_region_8MiB_us" { plain = sprintf("%.0f (%.0f)", $3, $5) }
    $2 == "region_over_plain" { ratio = sprintf("%.2fx (%.2f-%.2f)", $3, $5, $7) }
    END { printf "%-5s ours %-15s plain %-15s ours/plain %s\n", level, ours, plain, ratio }
  ' "$out/$level.phases"
done
for level in idle one all; do
  echo "load average after '$level': $(cat "$out/$level.loadavg")"
done
