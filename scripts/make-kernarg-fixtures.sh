#!/bin/sh
# Regenerates the AMDGPU code objects under tests/fixtures/kernarg/ (read by
# tests/amdgpu_kernarg.rs and tests/amdgpu_targets.rs) from tests/fixtures/kernarg/src/,
# with Debian's clang-19 and lld-19. The outputs are committed, so the tests never need
# clang; run this after changing a source. File names: <target>_v<code-object version>.co
# (':' of a target id written as '_', '+' as 'on', '-' as 'off').
set -eu

CLANG=${CLANG:-clang-19}
LLD=${LLD:-/usr/bin/ld.lld-19}

root=$(cd "$(dirname "$0")/.." && pwd)
src="$root/tests/fixtures/kernarg/src"
out="$root/tests/fixtures/kernarg"

# OpenCL C kernels: target id, code-object version (generic targets need v6; v6 is
# "in development" in clang 19, which warns, and is what generic code objects use).
for spec in gfx803:5 gfx900:4 gfx900:5 gfx90a:4 gfx90a:xnack+:5 gfx90a:6 gfx1030:5 \
  gfx1100:5 gfx1100:6 gfx9-generic:6 gfx10-3-generic:6 gfx11-generic:6 gfx12-generic:6; do
  target=${spec%:*}
  version=${spec##*:}
  name=$(echo "$target" | sed -e 's/:/_/g' -e 's/+/on/g' -e 's/-$/off/')
  $CLANG -x cl -cl-std=CL2.0 -O1 --target=amdgcn-amd-amdhsa -mcpu="$target" \
    -mcode-object-version="$version" -nogpulib -cl-kernel-arg-info \
    -Wno-unknown-warning-option --ld-path="$LLD" "$src/kernels.cl" \
    -o "$out/${name}_v$version.co" 2>&1 | grep -v 'code object v6 is still in development' || true
  test -s "$out/${name}_v$version.co"
done

# HIP kernel with dynamic LDS, device code only, no HIP headers or libraries.
for spec in gfx90a:5 gfx11-generic:6; do
  target=${spec%:*}
  version=${spec##*:}
  $CLANG -x hip --cuda-device-only --no-gpu-bundle-output -nogpuinc -nogpulib -O1 \
    --offload-arch="$target" -mcode-object-version="$version" --ld-path="$LLD" \
    "$src/dyn_lds.hip" -o "$out/dyn_lds_${target}_v$version.co" 2>&1 \
    | grep -v 'code object v6 is still in development' || true
  test -s "$out/dyn_lds_${target}_v$version.co"
done

ls -l "$out"
