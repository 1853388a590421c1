#!/bin/sh
# Builds the API fuzzer's test binary (tests/api_fuzzing.rs) and prints its path:
# `cargo [+TOOLCHAIN] test --test api_fuzzing --no-run [CARGO_ARGS...]`, in the caller's
# environment (CARGO_TARGET_DIR, RUSTFLAGS).
#   fuzz/api-fuzzing-bin.sh [+TOOLCHAIN] [CARGO_ARGS...]      e.g. --release
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
toolchain=
case "${1:-}" in +*) toolchain=$1; shift ;; esac
# shellcheck disable=SC2086 # no toolchain: no word at all
bin=$(cd "$root" && cargo $toolchain test --test api_fuzzing --no-run "$@" 2>&1 |
  sed -n 's/.*Executable tests\/api_fuzzing.rs (\(.*\))/\1/p')
[ -n "$bin" ] || { echo "api-fuzzing-bin.sh: the API fuzzer's test binary did not build" >&2; exit 1; }
case "$bin" in /*) ;; *) bin=$root/$bin ;; esac
echo "$bin"
