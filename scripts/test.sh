#!/usr/bin/env bash
# Everything: Rust checks and tests, the CMake build and install, the C tests against
# the installed package, and the examples' build.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
ensure_build_tools
# clang-19 and clang-22 (and what they need): the OpenMP tests (c-tests/omp) build their
# programs with both and compare our libomptarget.so.19.1 and .22.1 with LLVM's.
ensure_omp_tools
# ld.lld-19 and clang-offload-packager-19: c-tests builds the kernels for AMD GPUs (their
# _amdgpu tests run where there is one, and skip elsewhere).
ensure_packages ld.lld-19:lld-19 clang-offload-packager-19:clang-tools-19
# ip and unshare: the remote tests across test hosts (network namespaces; c-tests/multihost).
ensure_packages ip:iproute2 unshare:util-linux
cd "$ROOT"

log "cargo fmt --check"
if ! cargo fmt --version >/dev/null 2>&1; then rustup component add rustfmt; fi
cargo fmt --check
log "cargo clippy --workspace --all-targets -- -D warnings"
if ! cargo clippy --version >/dev/null 2>&1; then rustup component add clippy; fi
cargo clippy --workspace --all-targets -- -D warnings
log "cargo test --workspace"
# The header comparison with LLVM's must run, not skip: the package is installed above.
export OFFLOAD_REQUIRE_LLVM=1
# ... and so must the HSA layout test (libhsa-runtime-dev is installed above).
export OFFLOAD_REQUIRE_HSA_HEADERS=1
results=$(mktemp)
trap 'rm -f "$results"' EXIT
cargo test --workspace 2>&1 | tee "$results"

build_and_install

log "OpenMP programs for NVIDIA GPUs (scripts/make-gpu-omp.sh)"
# clang-19 with PyPI's ptxas; c-tests/omp runs them on LLVM 19's library and on ours (on
# a GPU where there is one). Exit 77: the wheel could not be fetched, and those tests skip.
bash "$ROOT/scripts/make-gpu-omp.sh" "$BUILD/gpu-omp" || [ $? -eq 77 ]

log "C tests against the installed package"
rm -rf "$BUILD/c-tests"
build_against_install "$ROOT/c-tests" "$BUILD/c-tests"
ctest --test-dir "$BUILD/c-tests" --output-on-failure -j "$JOBS" | tee -a "$results"

# The same C tests (and the examples) with AddressSanitizer, LeakSanitizer and UBSan.
bash "$ROOT/scripts/test-sanitized.sh" | tee -a "$results"

# Runs an MPI job (the arguments, root allowed, ended after 600 s) with its output kept
# in $job_log; succeeds when a line of it matches the pattern $1, else shows the output.
mpi_job_prints() {
  pattern=$1
  shift
  job_log=$(mktemp)
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 600 "$@" > "$job_log" 2>&1 || true
  grep -qE "$pattern" "$job_log" && return 0
  cat "$job_log"
  return 1
}

log "request fuzzing of the device server (offload-mpi-fuzz, 200,000 executions)"
# Random, mutated and well-formed requests with right, empty, oversized and missing
# data: the server must answer each and go on, never crash or hang.
if mpi_job_prints '^offload-mpi-fuzz: 200000 executions.* 0 crashes, 0 hangs' \
  env OFFLOAD_MPI_TIMEOUT=2 mpirun --oversubscribe -np 1 "$PREFIX/bin/offload-mpi-device" \
  : -np 1 "$BUILD/lib/cargo/release/offload-mpi-fuzz" 200000; then
  grep '^offload-mpi-fuzz:' "$job_log"
  echo "test result: ok. 1 passed; 0 failed; 0 ignored (offload-mpi-fuzz)" >> "$results"
else
  echo "offload-mpi-fuzz failed" >&2
  exit 1
fi
rm -f "$job_log"

log "the API fuzzer on a remote device (its corpus and 1,000 inputs, under mpirun)"
# The same test binary cargo built above, as the application of a job beside one device
# server: a finding fails it, as on the host device.
api_fuzz=$(sh "$ROOT/fuzz/api-fuzzing-bin.sh")
if mpi_job_prints '^test result: ok. 1 passed' env OFFLOAD_FUZZ_INPUTS=1000 \
  sh "$ROOT/fuzz/beside-one-server.sh" "$PREFIX" "$api_fuzz" --color never; then
  grep "^test result" "$job_log" | tee -a "$results"
else
  echo "the API fuzzer on a remote device failed" >&2
  exit 1
fi
rm -f "$job_log"

log "examples against the installed package"
build_against_install "$ROOT/examples-c" "$BUILD/examples-c"
"$BUILD/examples-c/first" "$BUILD/examples-c/scale.so" >/dev/null
"$BUILD/examples-c/list_devices" >/dev/null
"$BUILD/examples-c/memory" >/dev/null
"$BUILD/examples-c/saxpy" >/dev/null
"$BUILD/examples-c/matmul" "$BUILD/examples-c/matmul_kernels.so" 256 >/dev/null
log "benchmarks build (not run; scripts/run-benchmarks.sh runs them)"
build_against_install "$ROOT/bench-c" "$BUILD/bench-c"
log "all checks passed"
# One closing line for everything: cargo's "test result" lines and ctest's summary
# (ctest counts a test that exits 77 as not run: a skip).
awk '/^test result:/ { p += $4; f += $6; s += $8 }
     / tests passed, [0-9]+ tests failed out of / { f += $4; p += $NF - $4 }
     /Test +#[0-9]+:.*\*\*\*Skipped/ { k++ }
     END { printf "tests: %d passed, %d failed, %d skipped\n", p - k, f, s + k }' "$results"
