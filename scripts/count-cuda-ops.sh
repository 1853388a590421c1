#!/usr/bin/env bash
# Instructions of our own code per hot CUDA operation, without a GPU (issue 34): the
# release build of tests/cuda_call_counts.rs runs each operation of its table 20 times
# against the stand-in driver under callgrind, which counts only inside the test's
# `counted_rounds` (the caller's thread). The stand-in's own instructions (the inclusive
# cost of every cu* entry point called in there, which callgrind names ???:cu* since
# the stand-in has no debug information) are subtracted; what is left is ours:
# the C API, the runtime, the backend, and the C library calls they make.
# Needs valgrind. Prints one line per operation: ours, the stand-in's, per operation.
#
#   scripts/count-cuda-ops.sh [OPERATION ...]    (default: every row of the table)
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
ensure_packages valgrind:valgrind callgrind_annotate:valgrind
cd "$ROOT"
bin=$(cargo test --release --test cuda_call_counts --no-run 2>&1 \
  | grep -oE '\(([^ ]*/)?release/deps/cuda_call_counts-[0-9a-f]+\)' | tail -1 | tr -d '()')
[ -x "$bin" ] || { echo "the test binary was not built" >&2; exit 1; }
rounds=$(grep -o 'const ROUNDS: i64 = [0-9]*' tests/cuda_call_counts.rs | grep -o '[0-9]*$')
if [ $# -eq 0 ]; then
  mapfile -t operations < <(grep -oE '^ *\(?"[a-z +]+",( &\[\]\),)?$' tests/cuda_call_counts.rs \
    | sed -E 's/^ *\(?"//; s/",.*$//')
else
  operations=("$@")
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%-40s %12s %12s\n' operation "ours/op" "stand-in/op"
for op in "${operations[@]}"; do
  out="$work/cg.out"
  # The test's verdict does not matter here (an older build may exceed today's table).
  OFFLOAD_COUNT_ONLY="$op" valgrind --tool=callgrind --callgrind-out-file="$out" \
    --collect-atstart=no --toggle-collect=counted_rounds "$bin" --test-threads=1 \
    >"$work/log" 2>&1 || true
  [ -s "$out" ] || { echo "$op: no profile (see below)"; tail -20 "$work/log"; continue; }
  callgrind_annotate --inclusive=yes --threshold=100 "$out" >"$work/ann" 2>/dev/null
  total=$(awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }' "$work/ann")
  # The stand-in's entry points, inclusive (none calls another that we call).
  standin=$(awk '/\?\?\?:cu[A-Z][A-Za-z0-9_]* \[.*libcuda\.so/ { gsub(",", "", $1); s += $1 } END { print s + 0 }' "$work/ann")
  printf '%-40s %12d %12d\n' "$op" $(( (total - standin) / rounds )) $(( standin / rounds ))
done
