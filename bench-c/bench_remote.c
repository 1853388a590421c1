/* Remote devices against plain MPI (bench_mpi_pingpong): run as `mpirun -np 1
 * offload-mpi-device : -np 1 bench_remote <bench_kernels.so>`. Copy bandwidth host ->
 * remote and remote -> host at 4 KiB, 1 MiB, 64 MiB, 1 GiB; an empty kernel launch +
 * sync on the remote device; 10,000 queued launches and a sync, per launch. "RESULT
 * <name> <value>" lines, medians of 31 samples (7 at 1 GiB). */
#include <offload/liboffload.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_offload_util.h"
#include "bench_timing.h"


static void report_n(const char *name, double *samples, int n, double scale) {
  printf("RESULT %s %.4f\n", name, median(samples, (size_t)n) / scale);
  fflush(stdout);
}

static void report(const char *name, double *samples, double scale) {
  report_n(name, samples, BENCH_SAMPLES, scale);
  fflush(stdout);
}

int main(int argc, char **argv) {
  struct remote_and_host f = {0};
  int status = start_remote_bench(argc, argv, &f);
  if (status != 0) return status;
  const size_t sizes[] = {4096, 1 << 20, 64 << 20, (size_t)1 << 30};
  /* 1 GiB takes a quarter second a copy: fewer samples. */
  const int counts[] = {BENCH_SAMPLES, BENCH_SAMPLES, BENCH_SAMPLES, 7};
  const char *names[] = {"4KiB", "1MiB", "64MiB", "1GiB"};
  /* Page-aligned, as device memory is: a copy between buffers at different offsets
   * within their pages runs at half speed in the kernel's cross-process copy (CMA)
   * that MPI uses on one node, in plain MPI alike (docs/PERFORMANCE.md). */
  char *buf = aligned_alloc(4096, (size_t)1 << 30);
  memset(buf, 1, (size_t)1 << 30);
  void *mem = NULL;
  check(olMemAlloc(f.remote, OL_ALLOC_TYPE_DEVICE, (size_t)1 << 30, &mem), "olMemAlloc");
  double samples[BENCH_SAMPLES];
  for (int s = 0; s < 4; s++) {
    for (int dir = 0; dir < 2; dir++) {
      for (int i = 0; i < counts[s]; i++) {
        double t0 = now_ns();
        if (dir == 0)
          check(olMemcpy(NULL, mem, f.remote, buf, f.host, sizes[s]), "olMemcpy");
        else
          check(olMemcpy(NULL, buf, f.host, mem, f.remote, sizes[s]), "olMemcpy");
        samples[i] = (double)sizes[s] / (now_ns() - t0);
      }
      char name[64];
      snprintf(name, sizeof name, "remote_%s_%s_GBps", dir == 0 ? "to_remote" : "from_remote",
               names[s]);
      report_n(name, samples, counts[s], 1.0);
    }
  }
  size_t length = 0;
  char *bytes = read_whole_file(argv[1], &length);
  ol_program_handle_t program = NULL;
  check(olCreateProgram(f.remote, bytes, length, &program), "olCreateProgram");
  ol_symbol_handle_t empty = NULL;
  check(olGetSymbol(program, "empty", OL_SYMBOL_KIND_KERNEL, &empty), "olGetSymbol");
  ol_kernel_launch_size_args_t one = {1, {1, 1, 1}, {1, 1, 1}, 0};
  for (int i = 0; i < BENCH_SAMPLES; i++) {
    double t0 = now_ns();
    for (int k = 0; k < 100; k++)
      check(olLaunchKernel(NULL, f.remote, empty, NULL, 0, &one), "olLaunchKernel");
    samples[i] = (now_ns() - t0) / 100.0;
  }
  report("remote_empty_launch_sync_us", samples, 1e3);
  ol_queue_handle_t queue = NULL;
  check(olCreateQueue(f.remote, &queue), "olCreateQueue");
  for (int i = 0; i < BENCH_SAMPLES; i++) {
    double t0 = now_ns();
    for (int k = 0; k < 10000; k++)
      check(olLaunchKernel(queue, f.remote, empty, NULL, 0, &one), "olLaunchKernel");
    check(olSyncQueue(queue), "olSyncQueue");
    samples[i] = (now_ns() - t0) / 10000.0;
  }
  report("remote_queued_launch_us", samples, 1e3);
  check(olDestroyQueue(queue), "olDestroyQueue");
  check(olDestroyProgram(program), "olDestroyProgram");
  check(olMemFree(mem), "olMemFree");
  check(olShutDown(), "olShutDown");
  free(buf);
  free(bytes);
  return 0;
}
