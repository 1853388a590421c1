#!/usr/bin/env bash
# Builds liboffload, installs it into _install/, then builds and runs the C examples.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
ensure_build_tools
build_and_install
log "building the examples against $PREFIX"
build_against_install "$ROOT/examples-c" "$BUILD/examples-c"
log "examples-c/first (the README's first program) with examples-c/kernels/scale.c"
"$BUILD/examples-c/first" "$BUILD/examples-c/scale.so"
log "examples-c/list_devices"
"$BUILD/examples-c/list_devices"
log "examples-c/memory"
"$BUILD/examples-c/memory"
log "examples-c/saxpy (a kernel from examples-c/kernels/saxpy.c, built into a host program)"
"$BUILD/examples-c/saxpy"
log "examples-c/matmul (1024 x 1024 floats, examples-c/kernels/matmul.c)"
"$BUILD/examples-c/matmul"
log "done: the library is installed in $PREFIX"
