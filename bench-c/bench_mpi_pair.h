/* The start of the plain-MPI benchmarks: MPI with every thread allowed to call it (as
 * the transport asks for), and exactly two ranks. */
#ifndef OFFLOAD_BENCH_MPI_PAIR_H
#define OFFLOAD_BENCH_MPI_PAIR_H

#include <mpi.h>
#include <stdio.h>

/* This rank (0 or 1), or -1 (MPI finalised again) when the job does not have two. */
static inline int mpi_pair_start(int *argc, char ***argv) {
  int provided = 0, rank = 0, size = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "run with mpirun -np 2\n");
    MPI_Finalize();
    return -1;
  }
  return rank;
}

#endif
