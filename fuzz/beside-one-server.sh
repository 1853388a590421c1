#!/bin/sh
# Runs PROGRAM as the application of an MPI job on this host beside one device server of
# the package installed in PREFIX (its bin/offload-mpi-device, and its
# lib/liboffload_remote_mpi.so as the transport), with OFFLOAD_FUZZ_DEVICE=remote: the
# API fuzzers' runs on a remote device. The environment reaches both ranks.
#   fuzz/beside-one-server.sh PREFIX PROGRAM [ARGS...]
set -eu
[ $# -ge 2 ] || { echo "usage: $0 PREFIX PROGRAM [ARGS...]" >&2; exit 2; }
prefix=$1
shift
root=$(cd "$(dirname "$0")/.." && pwd)
server="$prefix/bin/offload-mpi-device"
[ -x "$server" ] || { echo "no $server: build and install first (cmake --install)" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OFFLOAD_PLATFORMS=mpi,host \
  OFFLOAD_MPI_TRANSPORT="$prefix/lib/liboffload_remote_mpi.so" OFFLOAD_FUZZ_DEVICE=remote
exec sh "$root/c-tests/mpirun_isolated.sh" --oversubscribe --bind-to none \
  -np 1 "$server" : -np 1 "$@"
