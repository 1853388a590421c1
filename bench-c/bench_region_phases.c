/* What one OpenMP `map(tofrom)` region does on the host device, phase by phase, through
 * the liboffload C API (the calls our libomptarget makes): olMemAlloc of the device copy,
 * olMemcpy in, an empty kernel launch, olMemcpy out, olMemFree. Times each phase of each
 * region and counts the process's minor page faults and involuntary context switches in
 * it (getrusage), so a slow region shows where its time went.
 *
 *   bench_region_phases [regions [MiB]]     (defaults: 300 regions of 8 MiB)
 *
 * Each region is followed by the same region done the plain way, as LLVM 19's host
 * plugin does it (malloc, memcpy, a call, memcpy, free), so the two meet the same moment
 * of a busy machine: their per-pair ratio says what the library adds, scheduling aside.
 *
 * Prints, per phase, "PHASE <name> median <us> p90 <us> max <us> faults <per region>
 * nivcsw <per region>", "RESULT region_<MiB>MiB_us <median> p90 <p90>", the same for
 * the plain region, and the median (p10, p90) of the per-pair ratio. */
#include <offload/liboffload.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "bench_offload_util.h"
#include "bench_timing.h"

#ifndef BENCH_PROGRAM
#define BENCH_PROGRAM "bench_kernels.so"
#endif

enum { PHASES = 6 };
static const char *const phase_names[PHASES] = {"alloc", "copy_in", "launch",
                                                "copy_out", "free", "region"};

static void usage_now(long *faults, long *nivcsw) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  *faults = u.ru_minflt;
  *nivcsw = u.ru_nivcsw;
}

/* The plain region's kernel, called through a pointer the compiler cannot see through. */
static void touch_first(unsigned char *p) { p[0] += 1; }
static void (*volatile plain_kernel)(unsigned char *) = touch_first;

/* One region the plain way; its time in µs. */
static double plain_region(unsigned char *data, size_t size) {
  double start = now_ns();
  unsigned char *dev = malloc(size);
  if (dev == NULL)
    exit(1);
  memcpy(dev, data, size);
  plain_kernel(dev);
  memcpy(data, dev, size);
  free(dev);
  return (now_ns() - start) / 1e3;
}

static double percentile(double *v, int n, double p) {
  qsort(v, (size_t)n, sizeof *v, compare_double);
  int i = (int)(p * (n - 1) + 0.5);
  return v[i];
}

int main(int argc, char **argv) {
  int regions = argc > 1 ? atoi(argv[1]) : 300;
  size_t size = (size_t)(argc > 2 ? atoi(argv[2]) : 8) << 20;
  if (regions < 2)
    regions = 2;
  check(olInit(), "olInit");
  ol_device_handle_t host = NULL;
  check(olIterateDevices(find_host, &host), "olIterateDevices");
  size_t image_size;
  unsigned char *image = (unsigned char *)read_whole_file(BENCH_PROGRAM, &image_size);
  ol_program_handle_t program;
  check(olCreateProgram(host, image, image_size, &program), "olCreateProgram");
  ol_symbol_handle_t empty;
  check(olGetSymbol(program, "empty", OL_SYMBOL_KIND_KERNEL, &empty), "olGetSymbol");
  static const ol_kernel_launch_size_args_t one = {1, {1, 1, 1}, {1, 1, 1}, 0};

  unsigned char *data = malloc(size);
  if (data == NULL)
    return 1;
  memset(data, 1, size);
  double *plain = calloc((size_t)regions, sizeof(double));
  double *pair = calloc((size_t)regions, sizeof(double));
  double *t[PHASES];
  double faults[PHASES] = {0}, switches[PHASES] = {0};
  for (int p = 0; p < PHASES; ++p)
    t[p] = calloc((size_t)regions, sizeof(double));
  for (int r = -1; r < regions; ++r) {
    double at[PHASES + 1];
    long f[PHASES + 1], s[PHASES + 1];
    void *dev = NULL;
    usage_now(&f[0], &s[0]);
    at[0] = now_ns();
    check(olMemAlloc(host, OL_ALLOC_TYPE_DEVICE, size, &dev), "olMemAlloc");
    at[1] = now_ns();
    usage_now(&f[1], &s[1]);
    check(olMemcpy(NULL, dev, host, data, host, size), "olMemcpy in");
    at[2] = now_ns();
    usage_now(&f[2], &s[2]);
    check(olLaunchKernel(NULL, host, empty, NULL, 0, &one), "olLaunchKernel");
    at[3] = now_ns();
    usage_now(&f[3], &s[3]);
    check(olMemcpy(NULL, data, host, dev, host, size), "olMemcpy out");
    at[4] = now_ns();
    usage_now(&f[4], &s[4]);
    check(olMemFree(dev), "olMemFree");
    at[5] = now_ns();
    usage_now(&f[5], &s[5]);
    double plain_us = plain_region(data, size);
    if (r < 0)
      continue; /* the first region warms up */
    plain[r] = plain_us;
    pair[r] = (at[5] - at[0]) / 1e3 / plain_us;
    for (int p = 0; p < PHASES - 1; ++p) {
      t[p][r] = (at[p + 1] - at[p]) / 1e3;
      faults[p] += (double)(f[p + 1] - f[p]);
      switches[p] += (double)(s[p + 1] - s[p]);
    }
    t[PHASES - 1][r] = (at[5] - at[0]) / 1e3;
    faults[PHASES - 1] += (double)(f[5] - f[0]);
    switches[PHASES - 1] += (double)(s[5] - s[0]);
  }
  for (int p = 0; p < PHASES; ++p) {
    double med = percentile(t[p], regions, 0.5), p90 = percentile(t[p], regions, 0.9);
    printf("PHASE %-8s median %9.1f p90 %9.1f max %9.1f faults %8.1f nivcsw %6.2f\n",
           phase_names[p], med, p90, t[p][regions - 1], faults[p] / regions,
           switches[p] / regions);
  }
  printf("RESULT region_%zuMiB_us %.1f p90 %.1f\n", size >> 20,
         percentile(t[PHASES - 1], regions, 0.5), percentile(t[PHASES - 1], regions, 0.9));
  printf("RESULT plain_region_%zuMiB_us %.1f p90 %.1f\n", size >> 20,
         percentile(plain, regions, 0.5), percentile(plain, regions, 0.9));
  printf("RESULT region_over_plain %.2f p10 %.2f p90 %.2f\n", percentile(pair, regions, 0.5),
         percentile(pair, regions, 0.1), percentile(pair, regions, 0.9));
  check(olDestroyProgram(program), "olDestroyProgram");
  check(olShutDown(), "olShutDown");
  return 0;
}
