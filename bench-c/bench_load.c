/* The host rows that use more than one core, for scripts/run-load-benchmarks.sh, which
 * runs this program on an idle machine, beside one busy process and beside one busy
 * process per core. One binary for LLVM 22's libLLVMOffload.so.22.1 and ours (written
 * against LLVM's header, LD_LIBRARY_PATH picks the library), and, in the same process,
 * the single-threaded way of doing each: one memcpy, one memset, the kernel as one
 * group, and the same loop by hand on one pthread per core.
 *
 * Each case runs in a child process (LLVM 22's host device cannot allocate or load
 * programs and crashes on the call). Output, one line per row:
 *   RESULT <row> <median> <p90> <unit>  |  CRASH <case> <signal>  |  REFUSED <case> ...
 * Usage: bench_load host-program.so [samples] */
#include <offload/OffloadAPI.h>

#include "bench_cases.h"
#include "bench_file.h"
#include "bench_timing.h"
#include "kernels/bench.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *program_path;
static int samples = 31;

static void report(const char *name, double *t) {
  double med = median(t, (size_t)samples);
  printf("RESULT %s %.3f %.3f ms\n", name, med, t[(int)(0.9 * (samples - 1) + 0.5)]);
  fflush(stdout);
}

/* Times `base` (the single-threaded way) and `body` (the library's) `samples` times each,
 * alternating sample by sample so that the machine's moods fall on both alike (after one
 * untimed run of each), and prints the median and the 90th percentile of each, in ms. */
#define TIMED_PAIR(base_name, base, name, body)                                            \
  do {                                                                                     \
    double *a_ = malloc((size_t)samples * sizeof *a_);                                     \
    double *b_ = malloc((size_t)samples * sizeof *b_);                                     \
    for (int s_ = -1; s_ < samples; ++s_) {                                                \
      double t0_ = now_ns();                                                               \
      base;                                                                                \
      double t1_ = now_ns();                                                               \
      body;                                                                                \
      double t2_ = now_ns();                                                               \
      if (s_ >= 0) {                                                                       \
        a_[s_] = (t1_ - t0_) / 1e6;                                                        \
        b_[s_] = (t2_ - t1_) / 1e6;                                                        \
      }                                                                                    \
    }                                                                                      \
    report((base_name), a_);                                                               \
    report((name), b_);                                                                    \
    free(a_);                                                                              \
    free(b_);                                                                              \
  } while (0)

static unsigned char *touched(size_t size, int value) {
  unsigned char *p = malloc(size);
  if (p == NULL)
    abort();
  memset(p, value, size);
  return p;
}

/* olMemcpy between two host buffers, both named by the host device (what LLVM 22's
 * library can do), against memcpy. */
static void copies(ol_device_handle_t d) {
  static const size_t sizes[] = {8u << 20, 64u << 20};
  for (int i = 0; i < 2; ++i) {
    size_t size = sizes[i];
    unsigned char *a = touched(size, 1), *b = touched(size, 2);
    char base[64], name[64];
    snprintf(base, sizeof base, "copy_%zuMiB_memcpy", size >> 20);
    snprintf(name, sizeof name, "copy_%zuMiB_olMemcpy", size >> 20);
    TIMED_PAIR(base, memcpy(b, a, size), name,
               must(olMemcpy(NULL, b, d, a, d, size), "olMemcpy"));
    free(a);
    free(b);
  }
}

/* olMemFill of host-device memory with a 4-byte pattern, against memset (one byte: the
 * single-threaded way at its fastest). */
static void fills(ol_device_handle_t d) {
  static const size_t sizes[] = {8u << 20, 64u << 20};
  const uint32_t pattern = 0x01020304u;
  for (int i = 0; i < 2; ++i) {
    size_t size = sizes[i];
    unsigned char *host = touched(size, 0);
    char base[64], name[64];
    snprintf(base, sizeof base, "fill_%zuMiB_memset", size >> 20);
    snprintf(name, sizeof name, "fill_%zuMiB_olMemFill", size >> 20);
    void *p;
    must(olMemAlloc(d, OL_ALLOC_TYPE_DEVICE, size, &p), "olMemAlloc");
    TIMED_PAIR(base, memset(host, 3, size), name,
               must(olMemFill(NULL, p, sizeof pattern, &pattern, size), "olMemFill"));
    must(olMemFree(p), "olMemFree");
    free(host);
  }
}

/* ---- saxpy over 2^24 floats: all cores, one group, one pthread per core ---- */

struct slice {
  float a;
  const float *x;
  float *y;
  size_t begin, end;
};

static void *saxpy_slice(void *arg) {
  struct slice *s = arg;
  for (size_t i = s->begin; i < s->end; ++i)
    s->y[i] = s->a * s->x[i] + s->y[i];
  return NULL;
}

static void saxpy_pthreads(float a, const float *x, float *y, size_t n, unsigned threads) {
  pthread_t tid[64];
  struct slice slices[64];
  for (unsigned t = 0; t < threads; ++t) {
    slices[t] = (struct slice){a, x, y, n * t / threads, n * (t + 1) / threads};
    if (t > 0 && pthread_create(&tid[t], NULL, saxpy_slice, &slices[t]) != 0)
      abort();
  }
  saxpy_slice(&slices[0]);
  for (unsigned t = 1; t < threads; ++t)
    pthread_join(tid[t], NULL);
}

static void kernels(ol_device_handle_t d) {
  const size_t n = (size_t)1 << 24;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  unsigned threads = cores < 1 ? 1 : cores > 64 ? 64 : (unsigned)cores;
  float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  if (x == NULL || y == NULL)
    abort();
  for (size_t i = 0; i < n; ++i) {
    x[i] = 1.0f;
    y[i] = 0.0f;
  }
  size_t image_size;
  unsigned char *image = (unsigned char *)read_whole_file(program_path, &image_size);
  ol_program_handle_t program;
  ol_symbol_handle_t saxpy;
  must(olCreateProgram(d, image, image_size, &program), "olCreateProgram");
  must(olGetSymbol(program, "saxpy", OL_SYMBOL_KIND_KERNEL, &saxpy), "olGetSymbol");
  const struct saxpy_args args = {0.5f, x, y, n};
  const ol_kernel_launch_size_args_t all = {1, {128, 1, 1}, {256, 1, 1}, 0};
  const ol_kernel_launch_size_args_t one = {1, {1, 1, 1}, {256, 1, 1}, 0};
  TIMED_PAIR("saxpy_one_group",
             must(olLaunchKernel(NULL, d, saxpy, &args, sizeof args, &one), "olLaunchKernel"),
             "saxpy_all_cores",
             must(olLaunchKernel(NULL, d, saxpy, &args, sizeof args, &all), "olLaunchKernel"));
  TIMED_PAIR("saxpy_pthreads", saxpy_pthreads(0.5f, x, y, n, threads), "saxpy_all_cores_vs_pthreads",
             must(olLaunchKernel(NULL, d, saxpy, &args, sizeof args, &all), "olLaunchKernel"));
  must(olDestroyProgram(program), "olDestroyProgram");
  free(image);
  free(x);
  free(y);
}

static const struct bench_case cases[] = {{"copies", copies}, {"fills", fills}, {"kernels", kernels}};

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: bench_load host-program.so [samples]\n");
    return 2;
  }
  program_path = argv[1];
  if (argc > 2 && atoi(argv[2]) > 2)
    samples = atoi(argv[2]);
  return run_cases_in_children(cases, sizeof cases / sizeof cases[0]);
}
