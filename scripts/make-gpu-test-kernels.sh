#!/usr/bin/env bash
# Rebuilds the committed PTX of the C tests' kernels, c-tests/kernels/ptx/*.ptx, from the
# same C sources the host programs are built from (c-tests/kernels/*.c, written in
# offload/host_kernel.h's portable dialect), with clang-19 alone
# (--target=nvptx64-nvidia-cuda; no CUDA toolkit needed). PTX for sm_60 runs on every
# later GPU: the driver compiles it for the device at load time. The tests load these
# files on a GPU device (OFFLOAD_TEST_DEVICE=gpu, c-tests/kernel_test.h).
#
#   scripts/make-gpu-test-kernels.sh           rebuild them (installs clang-19 if missing)
#   scripts/make-gpu-test-kernels.sh --check   rebuild into a temporary folder and compare
#                                              with the committed files (a ctest); exits
#                                              77 (skipped) without clang-19, or when the
#                                              committed files come from another clang-19
#                                              release (its PTX differs in details)
#
# Host-only kernel files are not built: llvm_convention.c (LLVM's host plugin
# convention), markers.c (host ABI markers), layout.c (the host context's layout),
# unresolved.c (a dynamic-loader failure); host_abi.c's raw_echo and llvm_add are left
# out by #ifndef __NVPTX__.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

CLANG=clang-19
SOURCES="$ROOT/c-tests/kernels"
COMMITTED="$SOURCES/ptx"
# Each PTX file: its name, its source and the defines the matching host program has
# (c-tests/CMakeLists.txt builds host_abi.c twice, with VARIANT=1 and VARIANT=2).
KERNELS=(
  "host_abi_variant1 host_abi.c -DVARIANT=1"
  "host_abi_variant2 host_abi.c -DVARIANT=2"
  "queue_work queue_work.c"
)
# -ffreestanding: clang's own stddef.h and stdint.h (the C library's do not know NVPTX).
FLAGS=(--target=nvptx64-nvidia-cuda -march=sm_60 -O2 -ffreestanding -std=c11
       -Wall -Wextra -Werror -pedantic "-I$ROOT/include")

# The first two lines of each file say what built it, so that --check can tell a stale
# file from one built by another clang-19 release.
clang_version() { "$CLANG" --version | head -n 1; }

# build_all DIR: every PTX file into DIR; fails (after clang's messages) if one does not
# build. (Written for callers in an `if`, where set -e does not apply.)
build_all() {
  local entry name source defines version
  version=$(clang_version)
  for entry in "${KERNELS[@]}"; do
    read -r name source defines <<<"$entry"
    # shellcheck disable=SC2086 # defines: zero or more words
    "$CLANG" "${FLAGS[@]}" $defines -S "$SOURCES/$source" -o "$1/$name.ptx.body" || return 1
    {
      echo "// $name.ptx: c-tests/kernels/$source${defines:+ $defines} for sm_60, by"
      echo "// scripts/make-gpu-test-kernels.sh with $version. Do not edit."
      cat "$1/$name.ptx.body"
    } >"$1/$name.ptx" || return 1
    rm -f "$1/$name.ptx.body"
  done
}

if [ "${1:-}" = "--check" ]; then
  if ! command -v "$CLANG" >/dev/null 2>&1; then
    echo "skipped: $CLANG not found, so the committed PTX cannot be rebuilt to compare"
    exit 77
  fi
  version=$(clang_version)
  for entry in "${KERNELS[@]}"; do
    read -r name _ <<<"$entry"
    if [ -f "$COMMITTED/$name.ptx" ] &&
      ! sed -n 2p "$COMMITTED/$name.ptx" | grep -qF "$version"; then
      echo "skipped: $name.ptx was built by another clang-19 release than this one"
      echo "($version), whose PTX differs in details"
      exit 77
    fi
  done
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  if ! build_all "$tmp"; then
    echo "a test kernel source does not build for NVPTX (see above): fix it, then run"
    echo "scripts/make-gpu-test-kernels.sh and commit c-tests/kernels/ptx/"
    exit 1
  fi
  stale=0
  for entry in "${KERNELS[@]}"; do
    read -r name _ <<<"$entry"
    if ! cmp -s "$tmp/$name.ptx" "$COMMITTED/$name.ptx"; then
      echo "c-tests/kernels/ptx/$name.ptx is not what its source builds to now"
      stale=1
    fi
  done
  for file in "$COMMITTED"/*.ptx; do
    [ -e "$file" ] || continue
    [ -e "$tmp/$(basename "$file")" ] && continue
    echo "c-tests/kernels/ptx/$(basename "$file") is built by nothing: remove it"
    stale=1
  done
  if [ "$stale" -ne 0 ]; then
    echo "run scripts/make-gpu-test-kernels.sh and commit c-tests/kernels/ptx/"
    exit 1
  fi
  echo "the ${#KERNELS[@]} committed PTX files are current"
  exit 0
fi

ensure_packages clang-19:clang-19
# Built aside first, so that a source that fails to build leaves the committed files be.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! build_all "$tmp"; then
  echo "a test kernel source does not build for NVPTX (see above): nothing was changed" >&2
  exit 1
fi
mkdir -p "$COMMITTED"
rm -f "$COMMITTED"/*.ptx
cp "$tmp"/*.ptx "$COMMITTED"/
for entry in "${KERNELS[@]}"; do
  read -r name _ <<<"$entry"
  log "built c-tests/kernels/ptx/$name.ptx"
done
