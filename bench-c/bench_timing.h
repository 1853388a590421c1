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

/* How many batches a result is the median of. */
#define BENCH_SAMPLES 31

/* Runs `body` `batch` times per sample, BENCH_SAMPLES samples, and prints
 * "RESULT <name> <median per run, in ns / scale> <unit>". */
#define BENCH_MEDIAN(name, unit, scale, batch, body)                                       \
  do {                                                                                     \
    double samples_[BENCH_SAMPLES];                                                        \
    for (int s_ = 0; s_ < BENCH_SAMPLES; ++s_) {                                           \
      double t0_ = now_ns();                                                               \
      for (long i_ = 0; i_ < (batch); ++i_) {                                              \
        body;                                                                              \
      }                                                                                    \
      samples_[s_] = (now_ns() - t0_) / (double)(batch) / (scale);                         \
    }                                                                                      \
    printf("RESULT %s %.3f %s\n", (name), median(samples_, BENCH_SAMPLES), (unit));       \
  } while (0)

#endif
