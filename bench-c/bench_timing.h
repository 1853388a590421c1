/* Clock and median shared by the benchmarks (liboffload's and the libomptarget baseline). */
#ifndef OFFLOAD_BENCH_TIMING_H
#define OFFLOAD_BENCH_TIMING_H

#include <stdlib.h>
#include <time.h>

static inline double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline double now_us(void) { return now_ns() / 1e3; }

static inline int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median of `values` (sorted in place). */
static inline double median(double *values, size_t n) {
  qsort(values, n, sizeof *values, compare_double);
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

#endif
