/* What the transport's deadlines cost in MPI itself (issue 17): a request-and-reply
 * between two ranks (`mpirun -np 2 bench_mpi_receive_modes`), the reply sent and
 * received the blocking way (MPI_Send / MPI_Mrecv after a matched probe) or the
 * non-blocking way the transport uses so that a wait can be abandoned (MPI_Isend /
 * MPI_Imrecv, each polled with MPI_Test), for a 48-byte reply (eager) and a 4,130-byte
 * one (a 4 KiB read's reply: rendezvous in OpenMPI's shared-memory transport).
 * "RESULT <name> <value>" lines: the round trip in microseconds, medians of 31 samples
 * of 2,000 round trips. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "bench_mpi_pair.h"
#include "bench_timing.h"

enum { SAMPLES = 31, ROUNDS = 2000 };

/* One round trip: rank 0 asks (48 bytes), rank 1 answers with `reply` bytes. */
static void round_trip(int rank, char *buffer, int reply, int isend, int imrecv) {
  if (rank == 0) {
    MPI_Send(buffer, 48, MPI_BYTE, 1, 5, MPI_COMM_WORLD);
    MPI_Message message;
    MPI_Status status;
    int found = 0;
    while (!found) MPI_Improbe(1, 6, MPI_COMM_WORLD, &found, &message, &status);
    if (imrecv) {
      MPI_Request request;
      int done = 0;
      MPI_Imrecv(buffer, reply, MPI_BYTE, &message, &request);
      while (!done) MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    } else {
      MPI_Mrecv(buffer, reply, MPI_BYTE, &message, MPI_STATUS_IGNORE);
    }
  } else {
    MPI_Recv(buffer, 48, MPI_BYTE, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (isend) {
      MPI_Request request;
      int done = 0;
      MPI_Isend(buffer, reply, MPI_BYTE, 0, 6, MPI_COMM_WORLD, &request);
      while (!done) MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    } else {
      MPI_Send(buffer, reply, MPI_BYTE, 0, 6, MPI_COMM_WORLD);
    }
  }
}

int main(int argc, char **argv) {
  const int rank = mpi_pair_start(&argc, &argv);
  if (rank < 0) return 1;
  static char buffer[8192];
  memset(buffer, 1, sizeof buffer);
  const int replies[] = {48, 4130};
  for (int r = 0; r < 2; r++) {
    for (int mode = 0; mode < 4; mode++) {
      const int isend = mode & 1, imrecv = mode >> 1;
      double samples[SAMPLES];
      for (int s = 0; s < SAMPLES; s++) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double start = now_us();
        for (int i = 0; i < ROUNDS; i++) round_trip(rank, buffer, replies[r], isend, imrecv);
        samples[s] = (now_us() - start) / ROUNDS;
      }
      if (rank == 0)
        printf("RESULT mpi_reply%d_%s_%s_us %.4f\n", replies[r], isend ? "isend" : "send",
               imrecv ? "imrecv" : "mrecv", median(samples, SAMPLES));
    }
  }
  MPI_Finalize();
  return 0;
}
