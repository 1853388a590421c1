/* The baseline: the same operations through LLVM 19's libomptarget (its x86_64 host
 * plugin, device 0), built with clang-19 -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu.
 * Prints "RESULT key value" lines for scripts/run-benchmarks.sh, medians of 31 batches. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_timing.h"

enum { BATCHES = 31 };

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

int main(void) {
  if (omp_get_num_devices() < 1) {
    fprintf(stderr, "libomptarget found no device\n");
    return 77;
  }
  bench_alloc(0);
  bench_memcpy(0);
  bench_launch(0);
  return 0;
}
