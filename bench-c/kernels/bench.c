/* Kernels of bench_kernels.c (host kernel ABI v2; the arguments are in bench.h). */
#include <offload/host_kernel.h>

#include "bench.h"

OL_HOST_KERNEL_NO_ARGS(empty) {}

/* y = a * x + y over n floats. The launch's groups split [0, n) into equal contiguous
 * ranges, one per group, whatever the group size: the same kernel runs as one group
 * (one core) or as many (all cores). */
/* This group's share [*begin, *end) of n items. */
static void group_range(const ol_host_kernel_context_t *ctx, size_t n, size_t *begin,
                        size_t *end) {
  const size_t groups = (size_t)ctx->num_groups[0] * ctx->num_groups[1] * ctx->num_groups[2];
  const size_t g = OL_HOST_GROUP_LINEAR_ID(ctx);
  *begin = n / groups * g + (g < n % groups ? g : n % groups);
  *end = *begin + n / groups + (g < n % groups ? 1 : 0);
}

OL_HOST_KERNEL(saxpy, struct saxpy_args) {
  const float a = args->a;
  const float *x = args->x;
  float *y = args->y;
  size_t begin, end;
  group_range(ctx, args->n, &begin, &end);
  for (size_t i = begin; i < end; ++i)
    y[i] = a * x[i] + y[i];
}

/* y = a * x + y, then 64 more multiply-adds per element on registers: the same memory
 * traffic as saxpy with 65 times the arithmetic, so compute, not memory, bounds it. */
OL_HOST_KERNEL(saxpy_heavy, struct saxpy_args) {
  const float a = args->a;
  const float *x = args->x;
  float *y = args->y;
  size_t begin, end;
  group_range(ctx, args->n, &begin, &end);
  for (size_t i = begin; i < end; ++i) {
    float v = a * x[i] + y[i];
    for (int k = 0; k < 64; ++k)
      v = v * 0.999f + a;
    y[i] = v;
  }
}
