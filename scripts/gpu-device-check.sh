#!/usr/bin/env bash
# Runs on a machine with an NVIDIA GPU, from the repository root, after
# scripts/pack-gpu-device-check.sh packed .dev/payload.tar.xz here (that machine needs no
# Rust and no LLVM; its driver's libcuda.so.1 is all it takes). Checks, in one go:
#   1. offload-check on every device;
#   2. the C tests on the GPU (the _gpu twins, test_gpu_cuda, the accelerator error codes);
#   3. each OpenMP program built for sm_90 on LLVM 19's libomptarget and on ours: exit
#      status and output compared, and where each ran its regions;
#   4. benchmarks: OpenMP regions (bench_omp_gpu) on both libraries, our C API against
#      the raw driver API (bench_gpu_api, bench_cuda_raw), and the driver-level
#      alternatives of our slow paths (bench_cuda_paths);
#   5. LLVM's own suites where they were built into .dev/llvm-suites/ (the OffloadAPI
#      unit tests, the OpenMP offload tests), on ours and on LLVM's library.
# Logs go to $OUT (or .dev/out); a summary is printed last.
#
#   scripts/gpu-device-check.sh        everything (about three minutes on an H100)
#   GPU_CHECK_BENCH=0 ...              without 4
#   GPU_CHECK_SUITES=0 ...             without 5
#   scripts/gpu-device-check.sh omp    3 and 4 (and the C tests once fixed after a run),
#                                      each program's outputs kept in
#                                      $OUT/omp-outputs.tar.gz (under a minute and a half)
set -uo pipefail
MODE=${1:-all}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${OUT:-$ROOT/.dev/out}
mkdir -p "$OUT"
cd "$ROOT"
# The payload is unpacked where nothing was built (the GPU machine); here, what is built
# is newer than any payload and is used as it is.
if [ ! -e _install/lib/liboffload.so ]; then
  tar -xJf .dev/payload.tar.xz || { echo "no payload: run scripts/pack-gpu-device-check.sh"; exit 1; }
fi
# The build here holds absolute paths (RUNPATH, ctest's files) of /work/main.
if [ "$ROOT" != /work/main ]; then
  if [ -e /work/main ] && [ ! -L /work/main ]; then
    echo "/work/main exists and is not a link: the build's paths cannot be made to lead here"
    exit 1
  fi
  mkdir -p /work && ln -sfn "$ROOT" /work/main
fi
# ctest's files name the cmake and python3 that configured them (in /usr/bin here).
for tool in cmake python3; do
  if [ ! -e "/usr/bin/$tool" ] && command -v "$tool" >/dev/null; then
    ln -s "$(command -v "$tool")" "/usr/bin/$tool"
  fi
done
OURS=/work/main/_install/lib:/work/main/.dev/llvm19/lib # libomp.so.5 is LLVM's
LLVM19=/work/main/.dev/llvm19/lib
if [ ! -e "$LLVM19/libomptarget.so.19.1" ]; then # built here: the system's LLVM 19
  OURS=/work/main/_install/lib:/usr/lib/llvm-19/lib
  LLVM19=/usr/lib/llvm-19/lib
fi
# LLVM 22.1's liboffload, where the payload holds it (GPU_CHECK_BASELINE=llvm22) or
# this machine has it.
LLVM22=/work/main/.dev/llvm22/lib
[ -e "$LLVM22/libLLVMOffload.so.22.1" ] || LLVM22=/usr/lib/llvm-22/lib
has_llvm19() { [ -e "$LLVM19/libomptarget.so.19.1" ]; }
has_llvm22() { [ -e "$LLVM22/libLLVMOffload.so.22.1" ]; }
summary=()
say() { summary+=("$*"); }

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
say "GPU: $(head -1 "$OUT/gpu.txt")"

if [ "$MODE" = all ]; then
# 1. offload-check
timeout 60 /work/main/_install/bin/offload-check >"$OUT/offload-check.txt" 2>&1
say "offload-check: exit $?, $(tail -1 "$OUT/offload-check.txt")"

# 2. The C tests on the GPU.
(cd build/c-tests && timeout 150 ctest --timeout 40 -R '_gpu$|test_gpu_cuda|accelerator[0-9]|offload_check_(table|json|bench)' \
  >"$OUT/ctest-gpu.txt" 2>&1 --output-on-failure)
say "ctest on the GPU: $(grep -E 'tests passed|tests failed' "$OUT/ctest-gpu.txt")"
while read -r line; do say "  $line"; done < <(grep -E '\*\*\*Failed|\*\*\*Timeout|Not Run|Exception' "$OUT/ctest-gpu.txt")
fi

# 3. OpenMP programs, LLVM 19 against ours (a hang costs 15 s; past the deadline, the
# rest are not run, so the whole check fits a short lease). Only where the payload holds
# LLVM 19 (the default baseline).
OMP_DEADLINE=${OMP_DEADLINE:-$((SECONDS + 70))}
has_llvm19 || OMP_DEADLINE=0
mkdir -p /tmp/omp-outputs
{
  for exe in build/gpu-omp/omp_*; do
    [ -x "$exe" ] || continue
    name=$(basename "$exe")
    # Self-checking programs of what LLVM does not offer: run on ours alone, below.
    case "$name" in omp_ompt_trace) continue;; esac
    if [ "$SECONDS" -gt "$OMP_DEADLINE" ]; then
      echo "== $name: not run (past ${OMP_DEADLINE} s)"
      continue
    fi
    args=()
    [ "$name" = omp_failures ] && args=(present-region)
    LD_LIBRARY_PATH=$LLVM19 timeout 8 "$exe" "${args[@]}" >"/tmp/omp-outputs/$name.llvm.out" 2>"/tmp/omp-outputs/$name.llvm.err"
    llvm_rc=$?
    LD_LIBRARY_PATH=$OURS timeout 8 "$exe" "${args[@]}" >"/tmp/omp-outputs/$name.ours.out" 2>"/tmp/omp-outputs/$name.ours.err"
    ours_rc=$?
    same=differ
    cmp -s "/tmp/omp-outputs/$name.llvm.out" "/tmp/omp-outputs/$name.ours.out" && [ $llvm_rc = $ours_rc ] && same=same
    echo "== $name: LLVM 19 exit $llvm_rc, ours exit $ours_rc, stdout $same"
    if [ $same = differ ]; then
      diff "/tmp/omp-outputs/$name.llvm.out" "/tmp/omp-outputs/$name.ours.out" | head -20
      echo "-- LLVM stderr"; head -c 1500 "/tmp/omp-outputs/$name.llvm.err"
      echo "-- our stderr"; head -c 1500 "/tmp/omp-outputs/$name.ours.err"
    fi
  done
} >"$OUT/omp.txt" 2>&1
say "OpenMP programs: $(grep -c ' stdout same' "$OUT/omp.txt") same, $(grep -c ' stdout differ' "$OUT/omp.txt") differ, $(grep -c 'not run' "$OUT/omp.txt") not run"
while read -r line; do say "  $line"; done < <(grep ' stdout differ' "$OUT/omp.txt")
# OMPT device tracing on the GPU (ours only: LLVM offers none): a tool checking what it
# gets, times from CUDA events.
if [ -x build/gpu-omp/omp_ompt_trace ]; then
  LD_LIBRARY_PATH=$OURS timeout 30 build/gpu-omp/omp_ompt_trace >/tmp/omp-outputs/omp_ompt_trace.out 2>&1
  say "omp_ompt_trace on the GPU: exit $?, $(grep -c '^FAIL' /tmp/omp-outputs/omp_ompt_trace.out) failed checks, $(tail -1 /tmp/omp-outputs/omp_ompt_trace.out)"
fi
# Record and replay on the GPU (issue 33): an OpenMP program recorded on ours and each
# kernel replayed and verified by LLVM 19's llvm-omp-kernel-replay on ours (memory placed
# at the recorded addresses through the driver's virtual memory management); and a C API
# program's launches recorded with OFFLOAD_RECORD and replayed by offload-replay --verify.
if [ -x build/gpu-omp/omp_record_replay ] && [ -x .dev/llvm19/bin/llvm-omp-kernel-replay ]; then
  timeout 60 cmake -DPROGRAM=/work/main/build/gpu-omp/omp_record_replay -DOURS=/work/main/_install/lib \
    "-DLIBDIRS=$LLVM19" -DTOOL=/work/main/.dev/llvm19/bin/llvm-omp-kernel-replay \
    -DWORK=/tmp/omp-rr-gpu -DKERNELS=3 -P c-tests/omp/record_replay.cmake >"$OUT/omp-record-replay.txt" 2>&1
  say "OpenMP record + LLVM 19's replay on the GPU: exit $?, $(grep -c 'verified, also' "$OUT/omp-record-replay.txt") kernels verified"
fi
rm -rf /tmp/ol-rr-gpu
(cd build/c-tests && OFFLOAD_RECORD=/tmp/ol-rr-gpu timeout 30 ctest -R '^test_kernel_saxpy_gpu$' >/dev/null 2>&1)
timeout 60 _install/bin/offload-replay --verify --repeat 5 /tmp/ol-rr-gpu >"$OUT/ol-record-replay.txt" 2>&1
say "OFFLOAD_RECORD + offload-replay --verify on the GPU: exit $?, $(grep -c ': verified' "$OUT/ol-record-replay.txt") launches verified, $(grep -c 'differs\|error\|cannot' "$OUT/ol-record-replay.txt") not"
# CUDA source through the kernel-language API (ours only: it is LLVM 22's API).
if [ -x build/gpu-omp/cuda_via_llvm ]; then
  LD_LIBRARY_PATH=$OURS timeout 20 build/gpu-omp/cuda_via_llvm gpu >/tmp/omp-outputs/cuda_via_llvm.out 2>&1
  say "cuda_via_llvm on the GPU: exit $?, $(tail -1 /tmp/omp-outputs/cuda_via_llvm.out)"
fi
tar -C /tmp -czf "$OUT/omp-outputs.tar.gz" omp-outputs
# Where LLVM 19 ran the regions (LIBOMPTARGET_INFO shows the device's launches).
LD_LIBRARY_PATH=$LLVM19 LIBOMPTARGET_INFO=-1 timeout 60 build/gpu-omp/omp_map_kinds \
  >"$OUT/omp-info-llvm.txt" 2>&1
LD_LIBRARY_PATH=$OURS LIBOMPTARGET_INFO=-1 timeout 60 build/gpu-omp/omp_map_kinds \
  >"$OUT/omp-info-ours.txt" 2>&1

if [ "$MODE" = omp ]; then
  # The C tests the first runs on a GPU failed (fixed since).
  (cd build/c-tests && timeout 60 ctest --timeout 30 -R 'test_queue_events_gpu|test_llvm_error_codes_gpu' \
    --output-on-failure >"$OUT/ctest-gpu.txt" 2>&1)
  say "ctest (fixed GPU tests): $(grep -E 'tests passed|tests failed' "$OUT/ctest-gpu.txt")"
fi

# 4. Benchmarks (GPU_CHECK_BENCH=0 leaves them out).
[ "${GPU_CHECK_BENCH:-1}" = 1 ] && {
  for lib in LLVM19 OURS; do
    echo "== bench_omp_gpu on $lib"
    LD_LIBRARY_PATH=${!lib} timeout 30 build/gpu-omp/bench_omp_gpu 2>&1
  done
  if [ "$MODE" = all ]; then
    ptx=bench-c/kernels/gpu/empty.ptx
    # Our C API against the driver API, in alternating processes (a process's placement
    # on the host moves a row by more than 10%): each row's median over the rounds, and
    # the median of the rounds' ratios.
    rounds=${GPU_CHECK_ROUNDS:-5}
    pairs=$(mktemp -d)
    for round in $(seq 1 "$rounds"); do
      echo "== bench_cuda_raw, round $round"
      timeout 60 build/bench-c/bench_cuda_raw "$ptx" 2>&1 | tee "$pairs/raw.$round"
      echo "== bench_gpu_api on ours, round $round"
      LD_LIBRARY_PATH=$OURS timeout 60 build/bench-c/bench_gpu_api "$ptx" 2>&1 | tee "$pairs/ours.$round"
    done
    echo "== ours against the driver API over $rounds rounds (medians; ratio: median of the rounds')"
    cat "$pairs"/raw.* "$pairs"/ours.* | awk -v rounds="$rounds" '
      /^RESULT/ && $2 == "launch_sync_us" { file++ }
      /^RESULT/ { side = file <= rounds ? "raw" : "ours"; k = (file - 1) % rounds
                  v[side, $2, k] = $3; unit[$2] = $4; rows[$2] = 1 }
      function med(a, n,   i, j, t) {
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
      END { for (row in rows) {
          n = 0; delete r; delete o; delete q
          for (k = 0; k < rounds; k++) if ((("raw", row, k) in v) && (("ours", row, k) in v)) {
            n++; r[n] = v["raw", row, k]; o[n] = v["ours", row, k]
            q[n] = unit[row] == "GB/s" ? r[n] / o[n] : o[n] / r[n] }
          if (n) printf "PAIR %-22s driver %9.3f  ours %9.3f %-4s  ours/driver %.2fx%s\n", row,
            med(r, n), med(o, n), unit[row], med(q, n), unit[row] == "GB/s" ? " the time" : "" } }' \
      | sort
    rm -rf "$pairs"
    if has_llvm22; then
      echo "== bench_gpu_api on LLVM 22.1"
      LD_LIBRARY_PATH=$LLVM22 timeout 60 build/bench-c/bench_gpu_api "$ptx" 2>&1
    fi
    # The driver-level alternatives of our slow paths (issue 34).
    echo "== bench_cuda_paths"; timeout 90 build/bench-c/bench_cuda_paths "$ptx" 2>&1
  fi
} >"$OUT/bench.txt" 2>&1
[ -e "$OUT/bench.txt" ] && grep -E '^== (bench_omp|ours against|bench_gpu_api on LLVM)|omp_gpu|^PAIR|^PROBE|no_context|devices|rror' "$OUT/bench.txt" | head -80

# 5. LLVM's own suites (built here into .dev/llvm-suites/ where LLVM's sources were at
# hand; not part of this repository): each suite's run.sh LIBDIR OUT, on ours and on
# the LLVM library it is measured against: the OffloadAPI unit tests against LLVM
# 22.1's liboffload, the OpenMP offload tests against LLVM 19's libomptarget.
if [ "${GPU_CHECK_SUITES:-1}" = 1 ]; then
  for suite in .dev/llvm-suites/*/; do
    [ -f "$suite/run.sh" ] || continue
    name=$(basename "$suite")
    case "$name" in
      offloadapi) libs=("ours:/work/main/_install/lib"); has_llvm22 && libs+=("llvm22:$LLVM22") ;;
      # Ours runs OpenMP programs with LLVM 19's libomp.so.5, carried with LLVM 19.
      omp) has_llvm19 || continue; libs=("ours:$OURS" "llvm19:$LLVM19") ;;
      *) continue ;;
    esac
    for entry in "${libs[@]}"; do
      lib=${entry%%:*}
      dir="$OUT/$name-$lib"
      mkdir -p "$dir"
      # The unit tests write one file, the OpenMP tests a folder.
      out=$dir
      [ "$name" = offloadapi ] && out=$dir/gtest.txt
      OFFLOADAPI_LABEL=$lib timeout 150 bash "$suite/run.sh" "${entry#*:}" "$out" \
        >"$dir.txt" 2>&1
      say "LLVM's $name suite on $lib: exit $?, $(tail -1 "$dir.txt")"
    done
    # One file per suite and library comes back (the folders are packed).
    tar -C "$OUT" -czf "$OUT/$name-results.tar.gz" $(cd "$OUT" && ls -d "$name"-*/ 2>/dev/null) \
      && rm -rf "$OUT/$name"-*/
  done
fi

# A lent GPU machine sends back at most eight files: every log goes into one archive,
# beside the summary.
(cd "$OUT" && mapfile -t logs < <(ls -A | grep -vx 'logs.tar.gz') \
  && [ ${#logs[@]} -gt 0 ] && tar -czf logs.tar.gz "${logs[@]}" && rm -rf "${logs[@]}")
printf '%s\n' "${summary[@]}" >"$OUT/summary.txt"
echo
echo "==== summary"
printf '%s\n' "${summary[@]}"
