#!/bin/sh
# mpirun with a session directory of its own. OpenMPI 4.1 creates one shared directory
# per user and host the first time a job starts, and two jobs starting at the same
# moment race for it ("mkdir /tmp/ompi.<host>.<uid>: File exists"): the C tests run
# MPI jobs in parallel, so each gets its own.
dir=$(mktemp -d "${TMPDIR:-/tmp}/offload-mpi.XXXXXX") || exit 1
mpirun --mca orte_tmpdir_base "$dir" "$@"
status=$?
rm -rf "$dir"
exit $status
