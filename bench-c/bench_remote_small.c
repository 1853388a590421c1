/* Small remote operations, many times over: `mpirun -np 1 offload-mpi-device : -np 1
 * bench_remote_small <bench_kernels.so>`. bench_remote's 4 KiB rows are medians of 31
 * single copies of some microseconds each, which this VM's noise swamps; here each
 * sample is the mean of 200 operations, 201 samples per row. "RESULT <name> <us>"
 * lines: a 4 KiB copy host -> remote and remote -> host, an empty launch + sync, a
 * queued launch. Used to compare two servers or two builds (docs/PERFORMANCE.md).
 * BENCH_ONLY=<text> runs only the rows whose name holds the text. */
#include <offload/liboffload.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_offload_util.h"
#include "bench_timing.h"

enum { SAMPLES = 201, PER_SAMPLE = 200, SIZE = 4096 };


/* What one sample times: PER_SAMPLE operations of one kind. */
struct run {
  struct remote_and_host *f;
  void *mem, *buf;
  ol_symbol_handle_t kernel;
  ol_queue_handle_t queue;
};

static void write_4k(struct run *r) {
  check(olMemcpy(NULL, r->mem, r->f->remote, r->buf, r->f->host, SIZE), "olMemcpy");
}
static void read_4k(struct run *r) {
  check(olMemcpy(NULL, r->buf, r->f->host, r->mem, r->f->remote, SIZE), "olMemcpy");
}
static const ol_kernel_launch_size_args_t ONE = {1, {1, 1, 1}, {1, 1, 1}, 0};
static void launch_sync(struct run *r) {
  check(olLaunchKernel(NULL, r->f->remote, r->kernel, NULL, 0, &ONE), "olLaunchKernel");
}
static void launch_queued(struct run *r) {
  check(olLaunchKernel(r->queue, r->f->remote, r->kernel, NULL, 0, &ONE), "olLaunchKernel");
}

/* BENCH_ONLY=<text>: only the rows whose name holds it (to profile one kind). */
static void measure(const char *name, struct run *r, void (*op)(struct run *)) {
  const char *only = getenv("BENCH_ONLY");
  if (only != NULL && strstr(name, only) == NULL)
    return;
  double samples[SAMPLES];
  for (int i = 0; i < SAMPLES; i++) {
    double t0 = now_ns();
    for (int k = 0; k < PER_SAMPLE; k++) op(r);
    if (r->queue) check(olSyncQueue(r->queue), "olSyncQueue");
    samples[i] = (now_ns() - t0) / PER_SAMPLE / 1e3;
  }
  printf("RESULT %s %.3f\n", name, median(samples, SAMPLES));
  fflush(stdout);
}

int main(int argc, char **argv) {
  struct remote_and_host f = {0};
  int status = start_remote_bench(argc, argv, &f);
  if (status != 0) return status;
  struct run r = {.f = &f};
  r.buf = aligned_alloc(4096, SIZE);
  memset(r.buf, 1, SIZE);
  check(olMemAlloc(f.remote, OL_ALLOC_TYPE_DEVICE, SIZE, &r.mem), "olMemAlloc");
  measure("remote_small_write_4KiB_us", &r, write_4k);
  measure("remote_small_read_4KiB_us", &r, read_4k);

  size_t length = 0;
  char *bytes = read_whole_file(argv[1], &length);
  ol_program_handle_t program = NULL;
  check(olCreateProgram(f.remote, bytes, length, &program), "olCreateProgram");
  check(olGetSymbol(program, "empty", OL_SYMBOL_KIND_KERNEL, &r.kernel), "olGetSymbol");
  measure("remote_small_launch_sync_us", &r, launch_sync);
  check(olCreateQueue(f.remote, &r.queue), "olCreateQueue");
  measure("remote_small_queued_launch_us", &r, launch_queued);
  check(olDestroyQueue(r.queue), "olDestroyQueue");
  check(olDestroyProgram(program), "olDestroyProgram");
  check(olMemFree(r.mem), "olMemFree");
  free(r.buf);
  free(bytes);
  check(olShutDown(), "olShutDown");
  return 0;
}
