/* The baseline of the remote-device benchmarks: plain MPI between the same two ranks
 * (run as `mpirun -np 2 bench_mpi_pingpong`): how fast bytes go to the other rank (which
 * answers with a 1-byte message, as a device's write is answered) and come from it
 * (asked for with a 1-byte message, as a device's read is), timed on rank 1, the
 * application's place; and the round trip of a 1-byte message. "RESULT <name> <value>" lines, medians of 31 samples. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_mpi_pair.h"
#include "bench_timing.h"

static void report(const char *name, double *samples, int n, double scale) {
  printf("RESULT %s %.4f\n", name, median(samples, (size_t)n) / scale);
  fflush(stdout);
}

int main(int argc, char **argv) {
  const int rank = mpi_pair_start(&argc, &argv);
  if (rank < 0) return 1;
  const size_t sizes[] = {4096, 1 << 20, 64 << 20, (size_t)1 << 30};
  /* 1 GiB takes a quarter second a copy: fewer samples. */
  const int counts[] = {BENCH_SAMPLES, BENCH_SAMPLES, BENCH_SAMPLES, 7};
  const char *names[] = {"4KiB", "1MiB", "64MiB", "1GiB"};
  /* Page-aligned on both ranks, as in bench_remote (device memory is). */
  char *buf = aligned_alloc(4096, (size_t)1 << 30), ack = 0;
  memset(buf, 1, (size_t)1 << 30);
  double samples[BENCH_SAMPLES];
  for (int s = 0; s < 4; s++) {
    /* To the remote rank (answered), then from it (asked for). */
    for (int dir = 0; dir < 2; dir++) {
      int sender = dir == 0 ? 1 : 0;
      for (int i = 0; i < counts[s]; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = now_ns();
        if (dir == 1 && rank == 1) {
          /* A read, as the application makes it of a device: ask, then receive. */
          MPI_Send(&ack, 1, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
          MPI_Recv(buf, (int)sizes[s], MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (dir == 1) {
          MPI_Recv(&ack, 1, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          MPI_Send(buf, (int)sizes[s], MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        } else if (rank == sender) {
          MPI_Send(buf, (int)sizes[s], MPI_BYTE, 1 - rank, 0, MPI_COMM_WORLD);
          MPI_Recv(&ack, 1, MPI_BYTE, 1 - rank, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
          MPI_Recv(buf, (int)sizes[s], MPI_BYTE, sender, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          MPI_Send(&ack, 1, MPI_BYTE, sender, 1, MPI_COMM_WORLD);
        }
        samples[i] = now_ns() - t0;
      }
      if (rank == 1) {
        /* GB/s: bytes per ns. */
        for (int i = 0; i < counts[s]; i++) samples[i] = (double)sizes[s] / samples[i];
        char name[64];
        snprintf(name, sizeof name, "mpi_%s_%s_GBps", dir == 0 ? "to_remote" : "from_remote",
                 names[s]);
        report(name, samples, counts[s], 1.0);
      }
    }
  }
  for (int i = 0; i < BENCH_SAMPLES; i++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now_ns();
    for (int k = 0; k < 100; k++) {
      if (rank == 1) {
        MPI_Send(&ack, 1, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
        MPI_Recv(&ack, 1, MPI_BYTE, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(&ack, 1, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&ack, 1, MPI_BYTE, 1, 3, MPI_COMM_WORLD);
      }
    }
    samples[i] = (now_ns() - t0) / 100.0;
  }
  if (rank == 1) report("mpi_round_trip_us", samples, BENCH_SAMPLES, 1e3);
  free(buf);
  MPI_Finalize();
  return 0;
}
