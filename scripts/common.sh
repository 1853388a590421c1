# Sourced by the scripts in this folder: the packages they need, and building and
# installing the library into _install/.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD="$ROOT/build"
PREFIX="$ROOT/_install"
JOBS=$(nproc 2>/dev/null || echo 2)
export DEBIAN_FRONTEND=noninteractive
# cargo installed by rustup lives here; a non-login shell may not have it on PATH.
if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
  PATH="$HOME/.cargo/bin:$PATH"
fi

log() { printf '\n==> %s\n' "$*"; }

# install_missing PACKAGE ...: installs the Debian packages (as root), or says which
# command to run (otherwise) and stops.
install_missing() {
  [ $# -eq 0 ] && return 0
  if [ "$(id -u)" -eq 0 ]; then
    log "installing $*"
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "$@" </dev/null
  else
    echo "missing packages; install them with:" >&2
    echo "  sudo apt-get install -y $*" >&2
    exit 1
  fi
}

# ensure_packages CMD:PACKAGE ...: the packages whose commands are missing.
ensure_packages() {
  local missing=() pair
  for pair in "$@"; do
    command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair#*:}")
  done
  install_missing "${missing[@]}"
}

# ensure_libraries PACKAGE ...: library packages (no command to look for), asking dpkg.
ensure_libraries() {
  local missing=() pkg
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || missing+=("$pkg")
  done
  install_missing "${missing[@]}"
}

# What building and testing the C side needs (libffi: calling LLVM-convention host
# kernels, whose signatures are known only at run time).
ensure_build_tools() {
  ensure_packages cmake:cmake make:make pkg-config:pkg-config gcc:gcc g++:g++ \
    readelf:binutils nm:binutils
  # liboffload-22-dev: LLVM 22's liboffload, whose header, library and
  # llvm-offload-device-info-22 the compatibility tests compare ours with.
  ensure_libraries libffi-dev liboffload-22-dev
  # Remote devices over MPI (remote-mpi/): OpenMPI to build and run them, and libclang
  # for the mpi crate's bindings.
  ensure_packages mpirun:openmpi-bin
  # libucx0: OpenMPI's UCX layer, which the fault matrix over TCP runs through
  # (libopenmpi3 depends on it; named here because the tests need it).
  ensure_libraries libopenmpi-dev libclang-19-dev libucx0
  # AMD GPUs: libhsa-runtime-dev, the HSA headers the AMDGPU backend's declarations are
  # checked against (tests/amdgpu_hsa_layout.rs), and the runtime itself
  # (libhsa-runtime64-1), whose failing hsa_init on a machine without /dev/kfd is tested.
  ensure_libraries libhsa-runtime-dev
  export LIBCLANG_PATH="${LIBCLANG_PATH:-/usr/lib/llvm-19/lib}"
  if ! command -v cargo >/dev/null 2>&1; then
    echo "cargo is missing: install Rust (https://rustup.rs), then run this again" >&2
    exit 1
  fi
}

# What the OpenMP tests need. clang-19 and libomp-19-dev: clang-19 builds the programs,
# and LLVM 19's libomptarget.so.19.1 is what ours is compared with. clang-22 with
# clang-tools-22 (clang-linker-wrapper) and llvm-22 (llvm-offload-binary): the new
# offload driver builds them again; liboffload-22 (from ensure_build_tools) holds LLVM
# 22's libomptarget.so.22.1. clang-22 also needs libomp-22-dev's omp.h and libomp.so,
# but that package conflicts with libomp-19-dev, so it is unpacked into _deps/ instead
# (fetch_libomp22), where c-tests/omp finds it.
ensure_omp_tools() {
  ensure_packages clang-19:clang-19 clang-22:clang-22 \
    clang-linker-wrapper-22:clang-tools-22 llvm-offload-binary-22:llvm-22
  ensure_libraries libomp-19-dev liboffload-22
  fetch_libomp22
}

# Unpacks libomp-22-dev into $ROOT/_deps/libomp-22-dev (once). Debian's libomp.so there
# leads to ../../x86_64-linux-gnu/libomp.so.5, the system's libomp.so.5 (libomp5-19, on
# which libomp-22-dev depends); that last link is added inside the private tree.
fetch_libomp22() {
  local dest="$ROOT/_deps/libomp-22-dev" tmp
  [ -e "$dest/usr/lib/llvm-22/lib/clang/22/include/omp.h" ] \
    && [ -e "$dest/usr/lib/llvm-22/lib/libomp.so" ] && return 0
  log "fetching libomp-22-dev into $dest (not installed: it conflicts with libomp-19-dev)"
  tmp=$(mktemp -d)
  # apt-get download needs no root (it writes into the current folder), but it needs
  # the package lists, which only root can refresh.
  if ! (cd "$tmp" && apt-get download libomp-22-dev); then
    if [ "$(id -u)" -ne 0 ]; then
      echo "cannot download libomp-22-dev; refresh the package lists: sudo apt-get update" >&2
      exit 1
    fi
    apt-get update -qq
    (cd "$tmp" && apt-get download libomp-22-dev)
  fi
  rm -rf "$dest"
  mkdir -p "$dest"
  dpkg-deb -x "$tmp"/libomp-22-dev_*.deb "$dest"
  rm -rf "$tmp"
  mkdir -p "$dest/usr/lib/x86_64-linux-gnu"
  ln -sf /usr/lib/x86_64-linux-gnu/libomp.so.5 "$dest/usr/lib/x86_64-linux-gnu/libomp.so.5"
  [ -e "$dest/usr/lib/llvm-22/lib/libomp.so" ] || {
    echo "libomp-22-dev unpacked, but its libomp.so leads nowhere" >&2
    exit 1
  }
}

# Builds the library with CMake (which drives cargo) and installs it into _install/.
build_and_install() {
  log "building liboffload (cmake drives cargo)"
  cmake -S "$ROOT" -B "$BUILD/lib" -DCMAKE_BUILD_TYPE=Release
  cmake --build "$BUILD/lib" -j "$JOBS"
  log "installing into $PREFIX"
  rm -rf "$PREFIX"
  cmake --install "$BUILD/lib" --prefix "$PREFIX"
}

# build_against_install SOURCE_DIR BUILD_DIR: configures and builds a consumer project.
build_against_install() {
  cmake -S "$1" -B "$2" -DCMAKE_PREFIX_PATH="$PREFIX" --no-warn-unused-cli
  cmake --build "$2" -j "$JOBS"
}
