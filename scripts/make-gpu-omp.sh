#!/usr/bin/env bash
# Builds OpenMP offload programs for NVIDIA GPUs (sm_90) with clang-19, without a CUDA
# toolkit package: PyPI's nvidia-cuda-nvcc-cu12 wheel gives ptxas and libdevice
# (unpacked into _deps/cuda-nvcc), Debian's libomp-19-dev the device runtime bitcode,
# and scripts/cuda-stand-ins/ stands in for nvlink (see the two files there): device
# code is built with -foffload-lto, so it is one PTX module, which ptxas can compile to
# the executable cubin that nvlink would have made.
#
#   scripts/make-gpu-omp.sh [OUTDIR]    builds into OUTDIR (default build/gpu-omp):
#     omp_<name>         each clang-19 program of c-tests/omp, for sm_90
#     bench_omp_gpu      bench-c/bench_omp_gpu.c
#     cuda_via_llvm      c-tests/omp/cuda_via_llvm.cu (clang-22 -foffload-via-llvm)
#     amdgpu/omp_<name>  each program for AMD's gfx90a (clang-19 and lld-19 alone: the
#                        device runtime comes from libomptarget.devicertl.a, so no ROCm
#                        device library is needed; -nogpulib keeps clang from asking for one)
#   Exits 77 (skipped) when the wheel cannot be fetched (after the AMD programs).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
ensure_omp_tools
ensure_packages ld.lld-19:lld-19

OUTDIR=${1:-$BUILD/gpu-omp}
ARCH=${OFFLOAD_GPU_ARCH:-sm_90}
WHEEL_DIR="$ROOT/_deps/cuda-nvcc"
REAL_CUDA="$WHEEL_DIR/nvidia/cuda_nvcc"

fetch_cuda_wheel() {
  [ -x "$REAL_CUDA/bin/ptxas" ] && [ -e "$REAL_CUDA/nvvm/libdevice/libdevice.10.bc" ] && return 0
  log "fetching PyPI's nvidia-cuda-nvcc-cu12 (ptxas, libdevice) into $WHEEL_DIR"
  python3 -m pip --version >/dev/null 2>&1 || install_missing python3-pip
  local tmp
  tmp=$(mktemp -d)
  if ! python3 -m pip download -q --no-deps --only-binary=:all: -d "$tmp" \
      nvidia-cuda-nvcc-cu12 >&2; then
    echo "skipped: cannot fetch nvidia-cuda-nvcc-cu12 from PyPI (ptxas is needed)"
    exit 77
  fi
  rm -rf "$WHEEL_DIR"
  mkdir -p "$WHEEL_DIR"
  python3 -m zipfile -e "$tmp"/nvidia_cuda_nvcc_cu12-*.whl "$WHEEL_DIR"
  chmod +x "$REAL_CUDA/bin/ptxas"
  rm -rf "$tmp"
}

# A CUDA root for clang's --cuda-path: the wheel's libdevice and headers, and the
# stand-ins for ptxas (which calls the wheel's) and nvlink.
make_cuda_root() {
  local root="$ROOT/_deps/cuda-stand-in-root"
  rm -rf "$root"
  mkdir -p "$root/bin"
  ln -s "$REAL_CUDA/nvvm" "$root/nvvm"
  ln -s "$REAL_CUDA/include" "$root/include"
  ln -s "$ROOT/scripts/cuda-stand-ins/ptxas" "$root/bin/ptxas"
  ln -s "$ROOT/scripts/cuda-stand-ins/nvlink" "$root/bin/nvlink"
  echo "$root"
}

# The programs of c-tests/omp that clang-19 builds.
omp_sources() {
  local src
  for src in "$ROOT"/c-tests/omp/omp_*.c "$ROOT"/c-tests/omp/omp_*.cpp; do
    [ "$(basename "${src%.*}")" = omp_device_uid ] && continue # OpenMP 6.0: clang-22 only
    # An OMPT tool in the program (dladdr in host code): not run on GPUs yet.
    [ "$(basename "${src%.*}")" = omp_ompt_callbacks ] && continue
    # Kernel record and replay: the host device's for now (GPU memory placement to come).
    [ "$(basename "${src%.*}")" = omp_record_replay ] && continue
    [ "$(basename "${src%.*}")" = omp_replay_errors ] && continue
    echo "$src"
  done
}

# build COMPILER-FLAGS-NAME OUTPUT SOURCE [FLAGS...]: clang-19 (clang++-19 for .cpp,
# clang++-22 for .cu) with the flags array named first.
build() {
  local -n flags=$1
  local out=$2 src=$3 compiler=clang-19
  shift 3
  [[ $src == *.cpp ]] && compiler=clang++-19
  [[ $src == *.cu ]] && compiler=clang++-22
  "$compiler" "${flags[@]}" "$@" "$src" -o "$out" 2>"$out.log" || {
    grep -v '^ptxas info\|^    ' "$out.log" >&2
    echo "failed to build $out from $src" >&2
    return 1
  }
  rm -f "$out.log"
}

AMD_ARCH=${OFFLOAD_GPU_AMD_ARCH:-gfx90a}
AMD_FLAGS=(-fopenmp "--offload-arch=$AMD_ARCH" -nogpulib -O1 -L/usr/lib/llvm-19/lib
           -lomptarget.devicertl)
mkdir -p "$OUTDIR/amdgpu"
failed=0
while read -r src; do
  # printf on AMD GPUs goes through LLVM's GPU libc (an RPC to the host), which Debian's
  # LLVM 19 does not package.
  [ "$(basename "${src%.*}")" = omp_device_printf ] && continue
  build AMD_FLAGS "$OUTDIR/amdgpu/$(basename "${src%.*}")" "$src" || failed=1
done < <(omp_sources)
[ "$failed" = 0 ] || exit 1
log "built $(ls "$OUTDIR/amdgpu" | wc -l) programs for $AMD_ARCH in $OUTDIR/amdgpu"

fetch_cuda_wheel
CUDA_ROOT=$(make_cuda_root)
export REAL_PTXAS="$REAL_CUDA/bin/ptxas"
export CUDA_STAND_IN_CACHE="$OUTDIR/.cubins"
export PATH="$CUDA_ROOT/bin:$PATH"
mkdir -p "$OUTDIR"

# The GPU's image alone, as `clang -fopenmp --offload-arch=sm_90` builds it. (With a host
# image too, LLVM numbers the devices in the binary's image order: the host's four
# OpenMP devices would come first and take the regions.)
FLAGS=(-fopenmp "--offload-arch=$ARCH" -foffload-lto -O1
       "--cuda-path=$CUDA_ROOT" "--libomptarget-nvptx-bc-path=/usr/lib/llvm-19/lib")

while read -r src; do
  build FLAGS "$OUTDIR/$(basename "${src%.*}")" "$src" || failed=1
done < <(omp_sources)
build FLAGS "$OUTDIR/bench_omp_gpu" "$ROOT/bench-c/bench_omp_gpu.c" "-I$ROOT/bench-c" -O2 -lm || failed=1
# CUDA source through libomptarget's kernel-language API (clang-22 -foffload-via-llvm;
# -nogpulib: Debian has no LLVM 22 device runtime for NVIDIA, and these kernels need none).
CUDA_FLAGS=(-x cuda -foffload-via-llvm "--offload-arch=$ARCH" "--cuda-path=$CUDA_ROOT"
            -foffload-lto -nogpulib -O1 -L/usr/lib/llvm-22/lib)
if command -v clang++-22 >/dev/null 2>&1; then
  build CUDA_FLAGS "$OUTDIR/cuda_via_llvm" "$ROOT/c-tests/omp/cuda_via_llvm.cu" || failed=1
fi
[ "$failed" = 0 ] || exit 1
log "built $(find "$OUTDIR" -maxdepth 1 -type f -executable | wc -l) programs for $ARCH in $OUTDIR"
