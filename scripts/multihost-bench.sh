#!/usr/bin/env bash
# Remote devices across test hosts against plain MPI between the same hosts
# (c-tests/multihost/across_hosts.sh: the application on one network namespace, the
# device server on another behind the link emulator, MPI over TCP), with no added delay
# and with 1 ms and 10 ms on the link each way: bench-c/bench_remote against
# bench-c/bench_mpi_pingpong, one after the other for each delay. Prints a table
# (medians; remote / MPI as the ratio of times, so below 1 is faster than MPI).
#   scripts/multihost-bench.sh [DELAYS...]     default: 0 1 10
# Needs root; builds and installs what is missing.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$ROOT"
[ -x "$PREFIX/bin/offload-mpi-device" ] || build_and_install
[ -x "$BUILD/bench-c/bench_remote" ] || build_against_install "$ROOT/bench-c" "$BUILD/bench-c"
[ -x "$BUILD/c-tests/link_emulator" ] || build_against_install "$ROOT/c-tests" "$BUILD/c-tests"
export OFFLOAD_LINK_EMULATOR="$BUILD/c-tests/link_emulator"
delays=("$@")
[ ${#delays[@]} -eq 0 ] && delays=(0 1 10)
hosts="$ROOT/c-tests/multihost/across_hosts.sh"
bench="$BUILD/bench-c"
value() { sed -n "s/^RESULT $1 //p" "$2"; }
printf '| link delay | what | plain MPI | remote device | remote / MPI (time) |\n|---|---|---|---|---|\n'
for d in "${delays[@]}"; do
  mpi=$(mktemp) ours=$(mktemp)
  OFFLOAD_MPI_SERVER="$bench/bench_mpi_pingpong" bash "$hosts" 60 1 --delay "$d" -- \
    "$bench/bench_mpi_pingpong" > "$mpi" 2>&1
  OFFLOAD_MPI_SERVER="$PREFIX/bin/offload-mpi-device" bash "$hosts" 61 1 --delay "$d" -- \
    "$bench/bench_remote" "$bench/bench_kernels.so" > "$ours" 2>&1
  for size in 4KiB 1MiB 64MiB 1GiB; do
    for dir in to from; do
      m=$(value "mpi_${dir}_remote_${size}_GBps" "$mpi")
      o=$(value "remote_${dir}_remote_${size}_GBps" "$ours")
      arrow=$([ $dir = to ] && echo "host → remote" || echo "remote → host")
      awk -v d="$d" -v w="$arrow, $size" -v m="$m" -v o="$o" 'BEGIN {
        printf "| %s ms | %s | %.3f GB/s | %.3f GB/s | %.2fx |\n", d, w, m, o, (o > 0 ? m / o : 0) }'
    done
  done
  m=$(value mpi_round_trip_us "$mpi")
  o=$(value remote_empty_launch_sync_us "$ours")
  q=$(value remote_queued_launch_us "$ours")
  awk -v d="$d" -v m="$m" -v o="$o" -v q="$q" 'BEGIN {
    printf "| %s ms | round trip / empty launch + sync | %.1f µs | %.1f µs | %.2fx |\n", d, m, o, (m > 0 ? o / m : 0)
    printf "| %s ms | queued launch (10,000, per launch) | | %.2f µs | |\n", d, q }'
  rm -f "$mpi" "$ours"
done
