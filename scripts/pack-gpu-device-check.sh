#!/usr/bin/env bash
# Packs what scripts/gpu-device-check.sh needs on a GPU machine that has no Rust and no
# LLVM into .dev/payload.tar.xz (git ignores .dev/ through .git/info/exclude): the
# installed package (debug info stripped), the C tests and benchmarks built against it,
# the OpenMP programs built for sm_90 (scripts/make-gpu-omp.sh), and LLVM 19's
# libomptarget with the libraries it loads (the baseline). Paths inside are relative to
# the repository root, where the check unpacks them.
#
#   scripts/pack-gpu-device-check.sh    builds what is missing, then packs
#   GPU_CHECK_BASELINE=llvm22 ...        LLVM 22.1's liboffload as the baseline instead
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

build_and_install
build_against_install "$ROOT/c-tests" "$BUILD/c-tests"
build_against_install "$ROOT/bench-c" "$BUILD/bench-c"
bash "$ROOT/scripts/make-gpu-omp.sh" "$BUILD/gpu-omp"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/build/c-tests" "$stage/build/bench-c"
cp -a "$PREFIX" "$stage/_install"
rm -f "$stage/_install/lib/liboffload.a" "$stage/_install/bin/offload-mpi-device" \
  "$stage/_install/lib/liboffload_remote_mpi.so"
find "$stage/_install" -type f \( -name '*.so*' -o -perm -u+x \) -exec strip --strip-debug {} + 2>/dev/null || true
# The C tests: their programs and ctest's files; not the packaging tests' trees.
find "$BUILD/c-tests" -maxdepth 1 -type f ! -name consumer_cmake_static -exec cp -a {} "$stage/build/c-tests/" \;
cp -a "$BUILD/c-tests/programs" "$stage/build/c-tests/"
find "$BUILD/bench-c" -maxdepth 1 -type f -perm -u+x -exec cp -a {} "$stage/build/bench-c/" \;
cp -a "$BUILD/gpu-omp" "$stage/build/gpu-omp"
rm -rf "$stage/build/gpu-omp/.cubins"
# The baselines: LLVM 19's libomptarget (.dev/llvm19) and LLVM 22.1's liboffload
# (.dev/llvm22), each with what the dynamic loader finds for it outside the C library's
# own set (the GPU machine runs another distribution). Each needs its libLLVM (150 MB),
# so one payload holds one of them: GPU_CHECK_BASELINE=llvm19 (the default) or llvm22.
copy_with_deps() { # DEST LIBRARY...
  local dest=$1 lib
  shift
  mkdir -p "$dest"
  cp -aL "$@" "$dest/"
  for lib in "$@"; do
    # (A library may need nothing outside that set: grep then finds no line.)
    ldd "$lib" | awk '$3 ~ /^\// { print $3 }' \
      | { grep -vE '/(libc|libm|libgcc_s|libstdc\+\+|ld-linux[^/]*)\.so' || true; } \
      | while read -r dep; do cp -aL "$dep" "$dest/"; done
  done
  find "$dest" -type f -exec strip --strip-debug {} + 2>/dev/null || true
}
case "${GPU_CHECK_BASELINE:-llvm19}" in
  llvm19) copy_with_deps "$stage/.dev/llvm19/lib" /usr/lib/llvm-19/lib/libomptarget.so.19.1 \
            /usr/lib/llvm-19/lib/libomp.so.5
          # LLVM's replay tool (its libraries are libomptarget's).
          mkdir -p "$stage/.dev/llvm19/bin"
          cp -aL /usr/lib/llvm-19/bin/llvm-omp-kernel-replay "$stage/.dev/llvm19/bin/" ;;
  llvm22) copy_with_deps "$stage/.dev/llvm22/lib" /usr/lib/llvm-22/lib/libLLVMOffload.so.22.1 ;;
  *) echo "GPU_CHECK_BASELINE is llvm19 or llvm22" >&2; exit 1 ;;
esac
# LLVM's own suites, where they were built into .dev/llvm-suites/<suite>/ (LLVM's sources
# are not in this repository; each suite folder lists in CARRY what its run.sh needs).
for suite in "$ROOT"/.dev/llvm-suites/*/; do
  [ -f "$suite/CARRY" ] && [ -f "$suite/run.sh" ] || continue
  name=$(basename "$suite")
  mkdir -p "$stage/.dev/llvm-suites/$name"
  # CARRY: one path per line (relative to the suite's folder), then anything; # comments.
  (cd "$suite" && grep -v '^#' CARRY | awk 'NF { print $1 }' \
    | while read -r path; do
        if [ -e "$path" ]; then cp -a --parents "$path" "$stage/.dev/llvm-suites/$name/"; fi
      done)
  cp -a "$suite/run.sh" "$stage/.dev/llvm-suites/$name/"
done
mkdir -p "$ROOT/.dev"
grep -qx '/.dev/' "$ROOT/.git/info/exclude" 2>/dev/null || echo '/.dev/' >>"$ROOT/.git/info/exclude"
log "packing"
tar -C "$stage" -cf - . | xz -T0 -6 >"$ROOT/.dev/payload.tar.xz"
log "$(du -h "$ROOT/.dev/payload.tar.xz" | cut -f1) in .dev/payload.tar.xz"
