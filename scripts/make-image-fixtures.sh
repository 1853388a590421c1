#!/bin/sh
# Regenerates the device-image test fixtures under tests/fixtures/images/ from the small
# sources in tests/fixtures/images/src/, with Debian's clang-19 / lld-19 / llvm-*-19.
# The outputs are committed, so the tests never need clang; run this after changing a source.
set -eu

CLANG=${CLANG:-clang-19}
LLD=${LLD:-/usr/bin/ld.lld-19}
OBJCOPY=${OBJCOPY:-llvm-objcopy-19}
PACKAGER=${PACKAGER:-clang-offload-packager-19}

root=$(cd "$(dirname "$0")/.." && pwd)
src="$root/tests/fixtures/images/src"
out="$root/tests/fixtures/images"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Host shared objects (ET_DYN) for two machines.
$CLANG -O1 -fPIC -shared -nostdlib -fuse-ld=lld --ld-path="$LLD" \
  --target=x86_64-linux-gnu "$src/host_lib.c" -o "$out/host_x86_64.so"
$CLANG -O1 -fPIC -shared -nostdlib -fuse-ld=lld --ld-path="$LLD" \
  --target=aarch64-linux-gnu "$src/host_lib.c" -o "$out/host_aarch64.so"
# A relocatable object is not loadable: the compatibility check must say so.
$CLANG -O1 -fPIC -c --target=x86_64-linux-gnu "$src/host_lib.c" -o "$out/host_x86_64.o"

# AMDGPU code objects (code-object v5, clang-19's default) for two targets.
$CLANG -x cl -cl-std=CL2.0 -O2 --target=amdgcn-amd-amdhsa -mcpu=gfx90a:xnack+ -nogpulib -cl-kernel-arg-info \
  --ld-path="$LLD" "$src/gpu_kernels.cl" -o "$out/amdgpu_gfx90a_xnack_on.co"
$CLANG -x cl -cl-std=CL2.0 -O2 --target=amdgcn-amd-amdhsa -mcpu=gfx1030 -nogpulib -cl-kernel-arg-info \
  --ld-path="$LLD" "$src/gpu_kernels.cl" -o "$out/amdgpu_gfx1030.co"

# CUDA PTX text. A cubin (EM_CUDA ELF) needs NVIDIA's ptxas, which is not installed;
# the tests hand-craft a minimal EM_CUDA ELF instead, and likewise a fatbin.
$CLANG -x cl -cl-std=CL2.0 -O2 --target=nvptx64-nvidia-cuda -march=sm_80 -nogpulib -S \
  "$src/ptx_kernels.cl" -o "$out/cuda_sm_80.ptx"

# LLVM bitcode: must be refused (JIT-free library).
$CLANG -O1 -c -emit-llvm --target=x86_64-linux-gnu "$src/host_lib.c" -o "$out/host_lib.bc"

# OpenMP offloading: a host object with the .llvm.offloading section (new driver, -c),
# the OffloadBinary extracted from it, and a linked host shared object whose
# omp_offloading_entries section lists the target regions and declare-target globals.
$CLANG -O1 -fPIC -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu --target=x86_64-linux-gnu \
  -c "$src/omp_target.c" -o "$out/omp_x86_64_host.o"
$OBJCOPY --dump-section=.llvm.offloading="$out/omp_x86_64.offload" "$out/omp_x86_64_host.o" \
  "$tmp/ignored.o"
$CLANG -O1 -fPIC -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu --target=x86_64-linux-gnu \
  -fuse-ld=lld --ld-path="$LLD" -shared -L/usr/lib/llvm-19/lib \
  -Xoffload-linker -L/usr/lib/llvm-19/lib -Xoffload-linker -lomp \
  "$src/omp_target.c" -o "$out/omp_x86_64_host.so"

# An OffloadBinary file holding several images (the packager writes one binary per image,
# concatenated): the two AMDGPU code objects and the x86_64 shared object. The packager
# takes the image kind from the file extension, so pass them as .o files.
cp "$out/amdgpu_gfx90a_xnack_on.co" "$tmp/gfx90a.o"
cp "$out/amdgpu_gfx1030.co" "$tmp/gfx1030.o"
cp "$out/host_x86_64.so" "$tmp/host.o"
$PACKAGER -o "$out/multi.offload" \
  --image=file="$tmp/gfx90a.o",triple=amdgcn-amd-amdhsa,arch=gfx90a:xnack+,kind=openmp \
  --image=file="$tmp/gfx1030.o",triple=amdgcn-amd-amdhsa,arch=gfx1030,kind=openmp \
  --image=file="$tmp/host.o",triple=x86_64-pc-linux-gnu,arch=generic,kind=openmp

ls -l "$out"
