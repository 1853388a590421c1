/* OpenMP target regions on the default device, for GPUs (issue 20's four numbers):
 * an empty region, a region mapping 8 MiB tofrom, a teams saxpy of 2^24 floats on data
 * already mapped, and 1,000 nowait regions then a taskwait. Built for sm_90 by
 * scripts/make-gpu-omp.sh and run by scripts/gpu-device-check.sh on LLVM 19's
 * libomptarget and on ours. Prints where the regions ran, then "RESULT key value" lines
 * (medians of 31 samples, with p90 for the per-region rows), and checks every result. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_timing.h"

enum { SAMPLES = 31 };

static double p90(double *sorted, int n) { return sorted[(n * 9) / 10]; }

static void report(const char *name, double *t, int n) {
  double m = median(t, (size_t)n); /* sorts t */
  printf("RESULT %s_us %.2f p90 %.2f\n", name, m, p90(t, n));
}

int main(void) {
  int on_host = -1;
#pragma omp target map(from : on_host)
  on_host = omp_is_initial_device();
  printf("devices %d, default %d, regions run on the %s\n", omp_get_num_devices(),
         omp_get_default_device(), on_host ? "host" : "device");

  double t[SAMPLES];
  /* Empty region: 200 per sample. */
  for (int s = -1; s < SAMPLES; ++s) {
    double t0 = now_ns();
    for (int i = 0; i < 200; ++i) {
#pragma omp target
      {
      }
    }
    if (s >= 0)
      t[s] = (now_ns() - t0) / 200 / 1e3;
  }
  report("omp_gpu_empty_region", t, SAMPLES);

  /* 8 MiB tofrom, touched on the device. */
  const int n8 = (8 << 20) / (int)sizeof(float);
  float *buf = malloc((size_t)n8 * sizeof(float));
  for (int i = 0; i < n8; ++i)
    buf[i] = (float)(i % 1000);
  for (int s = -1; s < SAMPLES; ++s) {
    double t0 = now_ns();
#pragma omp target teams distribute parallel for map(tofrom : buf[0 : n8])
    for (int i = 0; i < n8; ++i)
      buf[i] += 1.0f;
    if (s >= 0)
      t[s] = (now_ns() - t0) / 1e3;
  }
  for (int i = 0; i < n8; ++i)
    if (buf[i] != (float)(i % 1000) + (float)(SAMPLES + 1)) {
      fprintf(stderr, "8 MiB region: buf[%d] = %g\n", i, buf[i]);
      return 1;
    }
  report("omp_gpu_region_tofrom_8MiB", t, SAMPLES);
  free(buf);

  /* Teams saxpy over 2^24 floats already on the device. */
  const int n = 1 << 24;
  float *x = malloc((size_t)n * sizeof(float)), *y = malloc((size_t)n * sizeof(float));
  for (int i = 0; i < n; ++i) {
    x[i] = (float)(i % 97);
    y[i] = (float)(i % 13);
  }
  const float a = 0.5f;
#pragma omp target data map(to : x[0 : n]) map(tofrom : y[0 : n])
  {
    for (int s = -1; s < SAMPLES; ++s) {
      double t0 = now_ns();
#pragma omp target teams distribute parallel for
      for (int i = 0; i < n; ++i)
        y[i] = a * x[i] + y[i];
      if (s >= 0)
        t[s] = (now_ns() - t0) / 1e3;
    }
  }
  for (int i = 0; i < n; ++i) {
    float want = (float)(i % 13) + (float)(SAMPLES + 1) * a * (float)(i % 97);
    if (fabsf(y[i] - want) > 1e-3f * fabsf(want) + 1e-3f) {
      fprintf(stderr, "saxpy: y[%d] = %g, expected %g\n", i, y[i], want);
      return 1;
    }
  }
  report("omp_gpu_teams_saxpy_2p24", t, SAMPLES);
  free(x);
  free(y);

  /* 1,000 nowait regions, each adding to its own element, then one taskwait. */
  enum { NOWAIT = 1000 };
  static int counts[NOWAIT];
  for (int s = -1; s < SAMPLES; ++s) {
    double t0 = now_ns();
#pragma omp parallel
#pragma omp single
    {
      for (int i = 0; i < NOWAIT; ++i) {
#pragma omp target nowait map(tofrom : counts[i : 1])
        counts[i] += 1;
      }
#pragma omp taskwait
    }
    if (s >= 0)
      t[s] = (now_ns() - t0) / 1e3;
  }
  for (int i = 0; i < NOWAIT; ++i)
    if (counts[i] != SAMPLES + 1) {
      fprintf(stderr, "nowait: counts[%d] = %d\n", i, counts[i]);
      return 1;
    }
  report("omp_gpu_1000_nowait_regions", t, SAMPLES);
  return 0;
}
