/* The arguments of the saxpy kernels (kernels/bench.c), as bench_kernels.c passes them
 * to olLaunchKernel: one struct, laid out by the C compiler the same way on both sides. */
#ifndef OFFLOAD_BENCH_KERNELS_H
#define OFFLOAD_BENCH_KERNELS_H

#include <stddef.h>

struct saxpy_args {
  float a;
  const float *x;
  float *y;
  size_t n;
};

#endif
