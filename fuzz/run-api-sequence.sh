#!/bin/sh
# Long runs of the API fuzzer's pseudo-random sequence (tests/api_fuzzing.rs): COUNT
# inputs from input FIRST, on the host device or on a remote device (one device server
# beside it under mpirun, from _install), with a progress line every 50,000 inputs and
# the totals at the end. The seed corpus runs first, as in the test command.
#   fuzz/run-api-sequence.sh host|remote FIRST COUNT            the release test binary
#   fuzz/run-api-sequence.sh --asan host|remote FIRST COUNT     built with AddressSanitizer
#                                                               (LeakSanitizer at exit; nightly Rust)
# Runs of one sequence can be shared out (FIRST); each prints "input K failed; its
# bytes: ..." for a finding. Under --asan on a remote device, LeakSanitizer needs whole
# stacks to tell OpenMPI's own allocations (c-tests/sanitizer/lsan.supp) from ours: that
# run unwinds every allocation's stack the slow way, about three times slower
# (ASAN_OPTIONS=detect_leaks=0 in the environment: as fast as on the host, no leak check).
set -eu
asan=0
if [ "${1:-}" = "--asan" ]; then asan=1; shift; fi
where=${1:-}
first=${2:-}
count=${3:-}
case "$where" in host | remote) ;; *) echo "usage: $0 [--asan] host|remote FIRST COUNT"; exit 2 ;; esac
[ -n "$first" ] && [ -n "$count" ] || { echo "usage: $0 [--asan] host|remote FIRST COUNT"; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
cd "$root"
triple=$(rustc -vV | sed -n 's/^host: //p')
if [ "$asan" = 1 ]; then
  bin=$(CARGO_TARGET_DIR="$here/target-asan" RUSTFLAGS="-Zsanitizer=address -Cdebug-assertions -Coverflow-checks" \
    sh "$here/api-fuzzing-bin.sh" +nightly --release --target "$triple")
else
  bin=$(sh "$here/api-fuzzing-bin.sh" --release)
fi
export OFFLOAD_FUZZ_FIRST="$first" OFFLOAD_FUZZ_INPUTS="$count" OFFLOAD_FUZZ_PROGRESS=50000
case "$where" in
  host) OFFLOAD_PLATFORMS=host "$bin" --nocapture --color never ;;
  remote)
    if [ "$asan" = 1 ]; then
      export ASAN_OPTIONS="${ASAN_OPTIONS:-fast_unwind_on_malloc=0}" OMPI_MCA_mca_base_component_disable_dlclose=1 \
        LSAN_OPTIONS="suppressions=$root/c-tests/sanitizer/lsan.supp:print_suppressions=0"
    fi
    sh "$here/beside-one-server.sh" "$root/_install" "$bin" --nocapture --color never ;;
esac
