#!/usr/bin/env bash
# The README's code (or a docs/ page's), checked against the installed package so that it
# cannot rot:
#   check_readme.sh MARKDOWN PREFIX WORKDIR SOURCE_ROOT
# - every ```c block compiles as C11 and as C++17, every ```cpp block as C++17 (-Wall
#   -Wextra -Werror); a block without an #include is a fragment, compiled inside a
#   function that has the first program's variables (fragment_prelude.h);
# - every ```cmake block configures and builds, with examples-c/first.c as its app.c;
# - a block after `<!-- test: file PATH -->` is PATH's text exactly (PATH from SOURCE_ROOT);
# - a block after `<!-- test: run -->` runs as printed, with bash, /opt/offload replaced by
#   PREFIX, in a scratch folder holding examples-c/first.c and kernels/scale.c, and must
#   succeed; after `<!-- test: run, prints TEXT -->` its output must hold TEXT too. Blocks
#   that start device servers run only where mpirun and offload-mpi-device are there,
#   blocks that build GPU kernels only where clang-19 and ld.lld-19 are.
set -euo pipefail
readme=$1 prefix=$2 work=$3 root=$4
here=$(cd "$(dirname "$0")" && pwd)
name=$(basename "$readme")
rm -rf "$work"
mkdir -p "$work/blocks" "$work/run"
blocks=$work/blocks
awk -v out="$blocks" '
  /^```/ {
    if (inside) { inside = 0; close(file); next }
    inside = 1; lang = substr($0, 4); if (lang == "") lang = "txt"; n++
    file = sprintf("%s/%03d.%s", out, n, lang)
    printf "" > file
    printf "%03d %s %d %s %s\n", n, lang, NR + 1, (mark == "" ? "-" : mark),
           (arg == "" ? "-" : arg) > (out "/index")
    mark = ""; arg = ""; next
  }
  inside { print > file; next }
  /^<!-- test: run -->/ { mark = "run"; next }
  /^<!-- test: run, prints .* -->/ {
    mark = "run"; arg = $0; sub(/^<!-- test: run, prints /, "", arg); sub(/ -->$/, "", arg)
    next
  }
  /^<!-- test: file [^ ]+ -->/ { mark = "file"; arg = $4; next }
  NF { mark = ""; arg = "" }
' "$readme"

failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }
cflags=(-I"$prefix/include" -Wall -Wextra -Werror -fsyntax-only)
fragment_flags=(-Wno-unused-variable -Wno-unused-but-set-variable -include "$here/fragment_prelude.h")
compiled=0 ran=0 compared=0

# A fragment's lines, as the body of a function; #line keeps the page's line numbers.
wrap() { # block line
  printf 'void readme_fragment(void);\nvoid readme_fragment(void) {\n#line %d "%s"\n' "$2" "$name"
  cat "$1"
  printf '}\n'
}

compile() { # block line language(c|c++)
  local block=$1 line=$2 lang=$3 src std
  if [ "$lang" = c ]; then std=-std=c11; else std=-std=c++17; fi
  if grep -q '^#include' "$block"; then
    src=$work/unit.$lang
    { printf '#line %d "%s"\n' "$line" "$name"; cat "$block"; } > "$src"
    if [ "$lang" = c ]; then
      cc $std -pedantic "${cflags[@]}" -x c "$src" || fail "$name:$line as C"
    else
      c++ $std -pedantic "${cflags[@]}" -x c++ "$src" || fail "$name:$line as C++"
    fi
  else
    src=$work/fragment.$lang
    wrap "$block" "$line" > "$src"
    if [ "$lang" = c ]; then
      cc $std "${cflags[@]}" "${fragment_flags[@]}" -x c "$src" || fail "$name:$line (a fragment) as C"
    else
      c++ $std "${cflags[@]}" "${fragment_flags[@]}" -x c++ "$src" || fail "$name:$line (a fragment) as C++"
    fi
  fi
  compiled=$((compiled + 1))
}

have_servers() { command -v mpirun >/dev/null && [ -x "$prefix/bin/offload-mpi-device" ]; }

# (The list comes in on fd 3: what the blocks run, mpirun above all, may read stdin.)
while read -r n lang line mark arg <&3; do
  block="$blocks/$n.$lang"
  if [ "$mark" = file ]; then
    if diff -u "$root/$arg" "$block"; then compared=$((compared + 1))
    else fail "$name:$line is not $arg"; fi
  fi
  case "$lang" in
    c) compile "$block" "$line" c; compile "$block" "$line" c++ ;;
    cpp|c++) compile "$block" "$line" c++ ;;
    cmake)
      dir=$work/cmake$n
      mkdir -p "$dir"
      cp "$root/examples-c/first.c" "$dir/app.c"
      { echo 'cmake_minimum_required(VERSION 3.20)'; echo 'project(readme C)'; cat "$block"; } > "$dir/CMakeLists.txt"
      if cmake -S "$dir" -B "$dir/build" -DCMAKE_PREFIX_PATH="$prefix" >"$dir/log" 2>&1 &&
         cmake --build "$dir/build" >>"$dir/log" 2>&1; then
        compiled=$((compiled + 1))
      else
        cat "$dir/log"; fail "$name:$line (cmake) does not build"
      fi ;;
  esac
  if [ "$mark" = run ]; then
    if grep -q offload-mpi-device "$block" && ! have_servers; then
      echo "$name:$line not run: no mpirun or offload-mpi-device here"
      continue
    fi
    if grep -q clang-19 "$block" && ! { command -v clang-19 && command -v ld.lld-19; } >/dev/null; then
      echo "$name:$line not run: no clang-19 and ld.lld-19 here"
      continue
    fi
    cp "$root/examples-c/first.c" "$root/examples-c/kernels/scale.c" "$work/run/"
    sed "s#/opt/offload#$prefix#g" "$block" > "$work/run/block$n.sh"
    echo "--- $name:$line, run as printed:"
    cat "$work/run/block$n.sh"
    mpi_dir=$(mktemp -d "${TMPDIR:-/tmp}/offload-readme.XXXXXX")
    # As root, mpirun wants --allow-run-as-root (the README says so); this says it once.
    out=$work/run/block$n.out
    if (cd "$work/run" && OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
        OMPI_MCA_orte_tmpdir_base="$mpi_dir" bash -eo pipefail "block$n.sh" </dev/null) > "$out" 2>&1; then
      cat "$out"
      # (`read` gives the last field the rest of the line: the text, spaces and all.)
      if [ "$arg" != - ] && ! grep -qF -- "$arg" "$out"; then
        fail "$name:$line ran but did not print: $arg"
      else
        ran=$((ran + 1))
      fi
    else
      cat "$out"
      fail "$name:$line does not run as printed"
    fi
    rm -rf "$mpi_dir"
  fi
done 3< "$blocks/index"

echo "$name: $compiled compilations, $compared blocks equal to their files, $ran blocks run; $failures failed"
[ "$failures" -eq 0 ] && [ "$compiled" -gt 0 ]
