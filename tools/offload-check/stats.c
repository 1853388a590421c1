/* Medians and percentiles of timing samples. */
#include "stats.h"

#include <stdlib.h>
#include <time.h>

double now_seconds(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The sample at fraction q of the sorted set, by the nearest rank. */
static double quantile(const double *sorted, size_t count, double q) {
  size_t rank = (size_t)(q * (double)count + 0.999999);
  if (rank == 0)
    rank = 1;
  if (rank > count)
    rank = count;
  return sorted[rank - 1];
}

void summarise(double *samples, size_t count, measure_t *out) {
  if (count == 0) {
    out->valid = false;
    return;
  }
  qsort(samples, count, sizeof *samples, by_value);
  out->valid = true;
  out->samples = count;
  out->median = count % 2 == 1 ? samples[count / 2]
                               : (samples[count / 2 - 1] + samples[count / 2]) / 2.0;
  out->p90 = quantile(samples, count, 0.9);
}

void summarise_bandwidth(double *samples, size_t count, measure_t *out) {
  summarise(samples, count, out);
  if (out->valid) /* the slow tail: 90% of the copies were at least this fast */
    out->p90 = quantile(samples, count, 0.1);
}
