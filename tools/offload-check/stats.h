/* Timing samples: a monotonic clock, and the median and 90th percentile of a set. */
#ifndef OFFLOAD_CHECK_STATS_H
#define OFFLOAD_CHECK_STATS_H

#include <stdbool.h>
#include <stddef.h>

double now_seconds(void);

/* One measured operation: its median and p90 over the repetitions, in the unit of its
 * benchmark; or why it was not measured. */
typedef struct {
  bool valid;
  double median;
  double p90;
  size_t samples;
  char why[400];
} measure_t;

/* Sorts `samples` (times) and summarises them into `out`: p90 is the time 90% of the
 * samples stayed within. */
void summarise(double *samples, size_t count, measure_t *out);

/* The same for bandwidths: p90 is still the slow tail, the bandwidth 90% of the samples
 * reached (the 10th percentile of the bandwidths, the 90th of the copies' times). */
void summarise_bandwidth(double *samples, size_t count, measure_t *out);

#endif
