#!/bin/sh
# Builds every fuzz target with nightly Rust and libFuzzer's coverage instrumentation (the
# flags cargo-fuzz passes; cargo-fuzz itself is not needed) and runs each for a while.
# Usage: fuzz/run-all.sh [seconds per target, default 60]. Crashes land in fuzz/artifacts/.
# With cargo-fuzz installed, `cargo +nightly fuzz run <target>` works as well.
set -eu
secs=${1:-60}
here=$(cd "$(dirname "$0")" && pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$here/target}
triple=$(rustc -vV | sed -n 's/^host: //p')
RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks" \
  cargo +nightly build --manifest-path "$here/Cargo.toml" --release --bins --target "$triple"

seeds="$here/corpus/seeds"
IMAGE_FUZZ_SEEDS="$seeds" cargo test --manifest-path "$here/../Cargo.toml" --test image_robustness \
  write_fuzz_seeds -- --ignored --quiet >/dev/null

for t in identify select_for host_elf amdgpu amdgpu_metadata cuda_ptx cubin fatbin offload_binary; do
  mkdir -p "$here/corpus/$t" "$here/artifacts/$t"
  # Inputs up to 64 KiB; a single allocation over 64 MiB counts as a failure (unbounded
  # allocation), as does using more than 1 GiB in all.
  "$CARGO_TARGET_DIR/$triple/release/$t" "$here/corpus/$t" "$seeds" \
    -max_total_time="$secs" -max_len=65536 -malloc_limit_mb=64 -rss_limit_mb=1024 -timeout=10 \
    -artifact_prefix="$here/artifacts/$t/" -print_final_stats=1 2>&1 |
    grep -E "stat::number_of_executed_units|stat::new_units_added|ERROR|panicked|Done" | sed "s/^/$t: /"
done
