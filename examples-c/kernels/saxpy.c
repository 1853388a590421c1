/* y = a * x + y, as a kernel of liboffload's host device. Each work-group handles
 * group_size[0] consecutive elements; the last group stops at n. */
#include <offload/host_kernel.h>

OL_HOST_KERNEL(saxpy, 4) {
  const float a = OL_HOST_ARG(args, 0, float);
  const float *x = OL_HOST_ARG(args, 1, const float *);
  float *y = OL_HOST_ARG(args, 2, float *);
  const size_t n = OL_HOST_ARG(args, 3, size_t);
  OL_HOST_FOR_EACH_ITEM(ctx, lx, ly, lz) {
    (void)ly;
    (void)lz;
    const size_t i = OL_HOST_GLOBAL_ID(ctx, 0, lx);
    if (i < n)
      y[i] = a * x[i] + y[i];
  }
}
