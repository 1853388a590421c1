#!/usr/bin/env bash
# Instructions of our own code per hot operation of a GPU backend, without a GPU (issue
# 34): the release build of tests/<backend>_call_counts.rs runs each operation of its
# table 20 times against the stand-in vendor library under callgrind, which counts only
# inside the test's `<backend>_counted_rounds` (the caller's thread; work on other threads,
# the backend's or the stand-in's, is not counted). The stand-in's own instructions (the
# inclusive cost of every entry point of it called in there, which callgrind names
# ???:<function> since the stand-in has no debug information) are subtracted; what is
# left is ours: the C API, the runtime, the backend, and the C library calls they make.
# Needs valgrind. Prints one line per operation: ours, the stand-in's, per operation, and
# the 64-byte lines of our code that an operation runs: what it reloads when the vendor's
# own calls evicted it from the core's instruction cache between two of ours (the test
# harness's functions and the C library's are not counted).
#
#   scripts/count-ops.sh cuda|amdgpu [OPERATION ...]   (default: every row of the table)
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
ensure_packages valgrind:valgrind callgrind_annotate:valgrind
cd "$ROOT"
backend=${1:?usage: count-ops.sh cuda|amdgpu [OPERATION ...]}
shift
case "$backend" in
  # The stand-in's functions as callgrind names them (the HSA one's mock_hold control too).
  cuda) standin_functions='cu[A-Z][A-Za-z0-9_]*' standin_library='libcuda\.so' ;;
  amdgpu) standin_functions='(hsa_[a-z0-9_]+|mock_hold)' standin_library='libhsa-runtime64\.so' ;;
  *) echo "count-ops.sh: no backend '$backend' (cuda or amdgpu)" >&2; exit 2 ;;
esac
test_file=tests/${backend}_call_counts.rs
bin=$(cargo test --release --test "${backend}_call_counts" --no-run 2>&1 \
  | grep -oE "\\(([^ ]*/)?release/deps/${backend}_call_counts-[0-9a-f]+\\)" | tail -1 | tr -d '()')
[ -x "$bin" ] || { echo "the test binary was not built" >&2; exit 1; }
rounds=$(grep -o 'const ROUNDS: i64 = [0-9]*' "$test_file" | grep -o '[0-9]*$')
if [ $# -eq 0 ]; then
  mapfile -t operations < <(grep -oE '^ *\(?"[a-z0-9 +()]+",( &\[\]\),)?$' "$test_file" \
    | sed -E 's/^ *\(?"//; s/",.*$//')
else
  operations=("$@")
fi
# Distinct 64-byte lines of code run in OBJECT (the test binary: our library is linked into
# it), but not in functions whose name HARNESS matches at its start, in a profile made with
# --dump-instr=yes --compress-strings=no --compress-pos=no. The cost line after a
# `calls=` line is the callee's, at the call's address: not counted as run here.
code_lines() {
  python3 - "$@" <<'PY'
import re, sys
profile, obj, harness = sys.argv[1:4]
lines, ob, fn, after_call = set(), "", "", False
for text in open(profile):
    if text.startswith("ob="):
        ob = text[3:].strip()
    elif text.startswith("fn="):
        fn = text[3:].strip()
    elif text.startswith("calls="):
        after_call = True
    else:
        cost = re.match(r"0x([0-9a-f]+) ", text)
        if cost and after_call:
            after_call = False
        elif cost and ob.endswith(obj) and not re.match(harness, fn):
            lines.add(int(cost.group(1), 16) >> 6)
print(len(lines))
PY
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%-40s %12s %12s %12s\n' operation "ours/op" "stand-in/op" "code lines"
for op in "${operations[@]}"; do
  out="$work/cg.out"
  # The test's verdict does not matter here (an older build may exceed today's table).
  OFFLOAD_COUNT_ONLY="$op" valgrind --tool=callgrind --callgrind-out-file="$out" \
    --dump-instr=yes --compress-strings=no --compress-pos=no --collect-atstart=no \
    --toggle-collect="${backend}_counted_rounds" "$bin" --test-threads=1 \
    >"$work/log" 2>&1 || true
  [ -s "$out" ] || { echo "$op: no profile (see below)"; tail -20 "$work/log"; continue; }
  callgrind_annotate --inclusive=yes --threshold=100 "$out" >"$work/ann" 2>/dev/null
  total=$(awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }' "$work/ann")
  # The stand-in's entry points, inclusive (none calls another that we call).
  standin=$(awk -v pattern="\\\\?\\\\?\\\\?:${standin_functions} \\\\[.*${standin_library}" \
    '$0 ~ pattern { gsub(",", "", $1); s += $1 } END { print s + 0 }' "$work/ann")
  lines=$(code_lines "$out" "$(basename "$bin")" "${backend}_(call_counts::|counted_rounds)")
  printf '%-40s %12d %12d %12d\n' "$op" $(( (total - standin) / rounds )) $(( standin / rounds )) \
    "$lines"
done
