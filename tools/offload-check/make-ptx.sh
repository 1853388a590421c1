#!/usr/bin/env bash
# Rebuilds kernels/check_kernels.ptx, the PTX offload-check embeds for CUDA devices, from
# kernels/check_kernels.c (the same source as the host program) with clang-19 alone. It
# targets sm_52 so that every GPU from Maxwell on compiles it at load time; it is
# committed, so building offload-check needs neither clang nor CUDA.
#   tools/offload-check/make-ptx.sh           rewrite the file
#   tools/offload-check/make-ptx.sh --check   compare with the committed file (exit 77
#                                             without clang-19)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
clang=${CLANG:-clang-19}
if ! command -v "$clang" >/dev/null 2>&1; then
  echo "skipped: $clang not found"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$clang" --target=nvptx64-nvidia-cuda -march=sm_52 -O2 -ffreestanding -std=c11 \
  -Wall -Wextra -Werror -pedantic -I"$root/include" \
  -S "$here/kernels/check_kernels.c" -o "$tmp/body.ptx"
{
  echo "// check_kernels.ptx: tools/offload-check/kernels/check_kernels.c for sm_52, by"
  echo "// tools/offload-check/make-ptx.sh with $("$clang" --version | head -n 1). Do not edit."
  cat "$tmp/body.ptx"
} >"$tmp/check_kernels.ptx"
if [ "${1:-}" = "--check" ]; then
  if ! cmp -s "$tmp/check_kernels.ptx" "$here/kernels/check_kernels.ptx"; then
    if ! head -n 2 "$here/kernels/check_kernels.ptx" | grep -qF "$("$clang" --version | head -n 1)"; then
      echo "skipped: the committed PTX comes from another $clang release"
      exit 77
    fi
    diff -u "$here/kernels/check_kernels.ptx" "$tmp/check_kernels.ptx" || true
    echo "kernels/check_kernels.ptx is stale: run tools/offload-check/make-ptx.sh" >&2
    exit 1
  fi
  echo "kernels/check_kernels.ptx is current"
else
  cp "$tmp/check_kernels.ptx" "$here/kernels/check_kernels.ptx"
fi
