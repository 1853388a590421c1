/* OpenMP offloading through libomptarget (device 0), built with clang-19 -fopenmp
 * -fopenmp-targets=x86_64-pc-linux-gnu: the baseline of liboffload's own benchmarks on
 * LLVM 19's library, and, the same binary with LD_LIBRARY_PATH at our lib/, the
 * benchmark of our libomptarget.so.19.1 against it. Prints "RESULT key value" lines for
 * scripts/run-benchmarks.sh, medians of 31 batches. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_timing.h"

enum { BATCHES = 31 };

/* Samples of the rows that move data (tofrom, saxpy): 31, or the number given after
 * the row's name on the command line (scripts/run-load-benchmarks.sh asks for more). */
static int data_samples = BATCHES;

/* The 90th percentile of `values` (sorted in place). */
static double p90(double *values, int n) {
  qsort(values, (size_t)n, sizeof *values, compare_double);
  return values[(int)(0.9 * (n - 1) + 0.5)];
}

static void bench_alloc(int device) {
  static const size_t sizes[] = {64, 4096, 1u << 20};
  static const char *const names[] = {"64B", "4KiB", "1MiB"};
  for (int s = 0; s < 3; ++s) {
    double t[BATCHES];
    for (int b = -1; b < BATCHES; ++b) {
      double start = now_ns();
      for (int i = 0; i < 2000; ++i) {
        void *p = omp_target_alloc(sizes[s], device);
        if (p == NULL) {
          fprintf(stderr, "omp_target_alloc failed\n");
          exit(1);
        }
        omp_target_free(p, device);
      }
      if (b >= 0)
        t[b] = (now_ns() - start) / 2000;
    }
    printf("RESULT omp_alloc_free_%s %.1f\n", names[s], median(t, BATCHES));
  }
}

static void bench_memcpy(int device) {
  const size_t size = (size_t)64 << 20;
  unsigned char *host = malloc(size);
  void *dev = omp_target_alloc(size, device);
  if (host == NULL || dev == NULL)
    exit(1);
  memset(host, 1, size);
  double t[BATCHES];
  for (int b = -1; b < BATCHES; ++b) {
    double start = now_ns();
    omp_target_memcpy(dev, host, size, 0, 0, device, omp_get_initial_device());
    if (b >= 0)
      t[b] = now_ns() - start;
  }
  printf("RESULT omp_memcpy64MiB_host_to_device %.0f\n", median(t, BATCHES));
  omp_target_free(dev, device);
  free(host);
}

static void bench_launch(int device) {
  double t[BATCHES];
  for (int b = -1; b < BATCHES; ++b) {
    double start = now_ns();
    for (int i = 0; i < 2000; ++i) {
#pragma omp target device(device)
      {
      }
    }
    if (b >= 0)
      t[b] = (now_ns() - start) / 2000;
  }
  printf("RESULT omp_empty_target_us %.3f\n", median(t, BATCHES) / 1e3);
}

/* A region mapping 8 MiB tofrom (copied in and out each time) that touches it. */
static void bench_tofrom(int device) {
  const size_t n = (size_t)8 << 20;
  unsigned char *data = malloc(n);
  double *t = malloc((size_t)data_samples * sizeof *t);
  if (data == NULL || t == NULL)
    exit(1);
  memset(data, 1, n);
  for (int b = -1; b < data_samples; ++b) {
    double start = now_ns();
#pragma omp target device(device) map(tofrom : data[0 : n])
    { data[0] += 1; }
    if (b >= 0)
      t[b] = now_ns() - start;
  }
  double med = median(t, (size_t)data_samples);
  printf("RESULT omp_region_tofrom_8MiB_us %.1f p90 %.1f\n", med / 1e3,
         p90(t, data_samples) / 1e3);
  free(t);
  free(data);
}

/* Inside one target data region, 1,000 target updates of 4 KiB. */
static void bench_updates(int device) {
  enum { N = 4096, UPDATES = 1000 };
  static unsigned char buffer[N];
  double t[BATCHES];
#pragma omp target data device(device) map(tofrom : buffer[0 : N])
  for (int b = -1; b < BATCHES; ++b) {
    double start = now_ns();
    for (int i = 0; i < UPDATES; ++i) {
#pragma omp target update device(device) to(buffer[0 : N])
    }
    if (b >= 0)
      t[b] = (now_ns() - start) / UPDATES;
  }
  printf("RESULT omp_target_update_4KiB_us %.3f\n", median(t, BATCHES) / 1e3);
}

/* saxpy over 2^24 floats on the device, data already there. */
static void bench_saxpy(int device) {
  const int n = 1 << 24;
  float *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
  double *t = malloc((size_t)data_samples * sizeof *t);
  if (x == NULL || y == NULL || t == NULL)
    exit(1);
  for (int i = 0; i < n; ++i) {
    x[i] = 1.0f;
    y[i] = 2.0f;
  }
#pragma omp target data device(device) map(to : x[0 : n]) map(tofrom : y[0 : n])
  for (int b = -1; b < data_samples; ++b) {
    double start = now_ns();
#pragma omp target teams distribute parallel for device(device)
    for (int i = 0; i < n; ++i)
      y[i] = 2.0f * x[i] + y[i];
    if (b >= 0)
      t[b] = now_ns() - start;
  }
  double med = median(t, (size_t)data_samples);
  printf("RESULT omp_saxpy_2e24_ms %.3f p90 %.3f\n", med / 1e6, p90(t, data_samples) / 1e6);
  free(t);
  free(x);
  free(y);
}

/* With no arguments, every row; otherwise the rows named ("tofrom", "saxpy", ...),
 * each optionally followed by its number of samples. */
int main(int argc, char **argv) {
  if (omp_get_num_devices() < 1) {
    fprintf(stderr, "libomptarget found no device\n");
    return 77;
  }
  static const struct {
    const char *name;
    void (*run)(int);
  } rows[] = {{"alloc", bench_alloc},   {"memcpy", bench_memcpy}, {"launch", bench_launch},
              {"tofrom", bench_tofrom}, {"update", bench_updates}, {"saxpy", bench_saxpy}};
  enum { ROWS = sizeof rows / sizeof rows[0] };
  for (int r = 0; r < ROWS && argc == 1; ++r)
    rows[r].run(0);
  for (int a = 1; a < argc; ++a) {
    int r = 0;
    while (r < ROWS && strcmp(rows[r].name, argv[a]) != 0)
      ++r;
    if (r == ROWS) {
      fprintf(stderr, "unknown row %s\n", argv[a]);
      return 2;
    }
    data_samples = BATCHES;
    if (a + 1 < argc && atoi(argv[a + 1]) > 0)
      data_samples = atoi(argv[++a]);
    rows[r].run(0);
  }
  return 0;
}
