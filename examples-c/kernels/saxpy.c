/* y = a * x + y, as a kernel of liboffload's host device. Each work-group handles
 * group_size[0] consecutive elements; the last group stops at n. Its arguments arrive
 * as the struct the host passed (saxpy.h). */
#include <offload/host_kernel.h>

#include "saxpy.h"

OL_HOST_KERNEL(saxpy, struct saxpy_args) {
  OL_HOST_FOR_EACH_ITEM(ctx, lx, ly, lz) {
    (void)ly;
    (void)lz;
    const size_t i = OL_HOST_GLOBAL_ID(ctx, 0, lx);
    if (i < args->n)
      args->y[i] = args->a * args->x[i] + args->y[i];
  }
}
