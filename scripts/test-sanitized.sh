#!/usr/bin/env bash
# The C tests and the examples built with AddressSanitizer (LeakSanitizer on) and
# UndefinedBehaviorSanitizer against the installed package, and run: any report fails.
# The test command (scripts/test.sh) calls it after the plain C tests; alone it needs the
# package installed first (scripts/test.sh or build_and_install).
#   - Kernel images stay plain (c-tests' OFFLOAD_SANITIZE builds only the programs): a
#     device server or offload-replay, which are not sanitized, loads them too.
#   - OpenMPI 4.1 keeps memory until exit: c-tests/sanitizer/lsan.supp names its libraries,
#     and OMPI_MCA_mca_base_component_disable_dlclose=1 keeps its components loaded so
#     that their frames have names.
#   - The remote fault matrix (test_remote_mpi_fault_*) runs with leak checking off: its
#     cells end with a server killed or stopped, and LeakSanitizer's thread stopper
#     crashes on OpenMPI's transport threads caught mid-teardown ("Tracer caught signal
#     11"); AddressSanitizer and UBSan still watch those programs.
#   - The OpenMP programs are built by clang's own custom commands, unsanitized.
#   - The Rust library itself is not sanitized here (stable Rust has no sanitizers); the
#     API fuzzer's long runs build it with AddressSanitizer on nightly (fuzz/run-api-fuzz.sh).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$ROOT"
sanitizers=address,undefined
flags="-fsanitize=$sanitizers -fno-omit-frame-pointer -fno-sanitize-recover=all"
export ASAN_OPTIONS=detect_leaks=1:fast_unwind_on_malloc=0:abort_on_error=0
export LSAN_OPTIONS="suppressions=$ROOT/c-tests/sanitizer/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export OMPI_MCA_mca_base_component_disable_dlclose=1

log "C tests built with -fsanitize=$sanitizers"
rm -rf "$BUILD/c-tests-sanitized"
cmake -S "$ROOT/c-tests" -B "$BUILD/c-tests-sanitized" -DCMAKE_PREFIX_PATH="$PREFIX" \
  -DOFFLOAD_SANITIZE="$sanitizers" --no-warn-unused-cli >/dev/null
cmake --build "$BUILD/c-tests-sanitized" -j "$JOBS" >/dev/null
ctest --test-dir "$BUILD/c-tests-sanitized" --output-on-failure -j "$JOBS" -E '_fault_'
ASAN_OPTIONS=detect_leaks=0:abort_on_error=0 \
  ctest --test-dir "$BUILD/c-tests-sanitized" --output-on-failure -j "$JOBS" -R '_fault_'

log "examples built with -fsanitize=$sanitizers"
rm -rf "$BUILD/examples-c-sanitized"
CFLAGS="$flags" LDFLAGS="-fsanitize=$sanitizers" \
  cmake -S "$ROOT/examples-c" -B "$BUILD/examples-c-sanitized" -DCMAKE_PREFIX_PATH="$PREFIX" \
  --no-warn-unused-cli >/dev/null
cmake --build "$BUILD/examples-c-sanitized" -j "$JOBS" >/dev/null
"$BUILD/examples-c-sanitized/first" "$BUILD/examples-c-sanitized/scale.so" >/dev/null
"$BUILD/examples-c-sanitized/list_devices" >/dev/null
"$BUILD/examples-c-sanitized/memory" >/dev/null
"$BUILD/examples-c-sanitized/saxpy" >/dev/null
"$BUILD/examples-c-sanitized/matmul" "$BUILD/examples-c-sanitized/matmul_kernels.so" 128 >/dev/null
echo "sanitized examples: 5 ran, no reports"
