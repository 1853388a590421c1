/* Kernels of bench_kernels.c (host kernel ABI v1). */
#include <offload/host_kernel.h>

OL_HOST_KERNEL(empty, 0) {}

/* y = a * x + y over n floats. The launch's groups split [0, n) into equal contiguous
 * ranges, one per group, whatever the group size: the same kernel runs as one group
 * (one core) or as many (all cores). */
OL_HOST_KERNEL(saxpy, 4) {
  const float a = OL_HOST_ARG(args, 0, float);
  const float *x = OL_HOST_ARG(args, 1, const float *);
  float *y = OL_HOST_ARG(args, 2, float *);
  const size_t n = OL_HOST_ARG(args, 3, size_t);
  const size_t groups = (size_t)ctx->num_groups[0] * ctx->num_groups[1] * ctx->num_groups[2];
  const size_t g = OL_HOST_GROUP_LINEAR_ID(ctx);
  const size_t begin = n / groups * g + (g < n % groups ? g : n % groups);
  const size_t end = begin + n / groups + (g < n % groups ? 1 : 0);
  for (size_t i = begin; i < end; ++i)
    y[i] = a * x[i] + y[i];
}
