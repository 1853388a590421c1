#!/bin/sh
# Long runs of the ol* API fuzzer (fuzz/fuzz_targets/api_sequence.rs, the generator and
# model of tests/api_fuzz) under libFuzzer with AddressSanitizer (LeakSanitizer at exit,
# after every input cleaned up), nightly Rust, on the host device or a remote device.
#   fuzz/run-api-fuzz.sh host RUNS [SECONDS]     RUNS executions at most, SECONDS at most
#   fuzz/run-api-fuzz.sh remote RUNS [SECONDS]   the same in an MPI job beside a device
#                                                server (_install/bin/offload-mpi-device)
# The corpus grows in fuzz/corpus/api_sequence (seeded from tests/api_fuzz_corpus);
# findings land in fuzz/artifacts/api_sequence/; the last lines are libFuzzer's totals.
set -eu
where=${1:-host}
runs=${2:-1000000}
secs=${3:-36000}
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$here/target}
triple=$(rustc -vV | sed -n 's/^host: //p')
RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks \
-Zsanitizer=address" \
  cargo +nightly build --manifest-path "$here/Cargo.toml" --release --bin api_sequence --target "$triple"
bin="$CARGO_TARGET_DIR/$triple/release/api_sequence"
corpus="$here/corpus/api_sequence"
artifacts="$here/artifacts/api_sequence"
mkdir -p "$corpus" "$artifacts"
# Inputs of up to 256 bytes (about 30 calls); a call past 20 s is a finding of the
# harness's own watchdog, an input past 60 s libFuzzer's.
set -- "$corpus" "$root/tests/api_fuzz_corpus" -runs="$runs" -max_total_time="$secs" \
  -max_len=256 -timeout=60 -rss_limit_mb=4096 -artifact_prefix="$artifacts/" \
  -print_final_stats=1 -print_coverage=0
case "$where" in
  host) OFFLOAD_PLATFORMS=host "$bin" "$@" ;;
  remote)
    # The fuzzer has liboffload built in: the transport is the installed one. OpenMPI
    # keeps allocations of its start until exit: leaks are looked for at exit only, its
    # own suppressed (c-tests/sanitizer/lsan.supp), not after every input. Suppressing
    # them needs their whole stacks: with the fast unwinder they end in one unnamed frame.
    set -- "$@" -detect_leaks=0
    ASAN_OPTIONS="${ASAN_OPTIONS:-fast_unwind_on_malloc=0}" \
      LSAN_OPTIONS="suppressions=$root/c-tests/sanitizer/lsan.supp" \
      OMPI_MCA_mca_base_component_disable_dlclose=1 \
      sh "$here/beside-one-server.sh" "$root/_install" "$bin" "$@" ;;
  *) echo "usage: $0 host|remote RUNS [SECONDS]"; exit 2 ;;
esac
