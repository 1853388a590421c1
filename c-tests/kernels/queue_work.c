/* Kernels of the queue and event tests (host kernel ABI v2); their argument structs are
 * in queue_work.h. */
#include <offload/host_kernel.h>

#include <time.h>

#include "queue_work.h"

/* data[i] += delta for every global id i below n. */
OL_HOST_KERNEL(add, struct add_args) {
  OL_HOST_FOR_EACH_ITEM(ctx, lx, ly, lz) {
    (void)ly;
    (void)lz;
    const size_t i = OL_HOST_GLOBAL_ID(ctx, 0, lx);
    if (i < args->n)
      args->data[i] += args->delta;
  }
}

/* log[(*count)++] = tag, once per launch (group 0, first item). */
OL_HOST_KERNEL(append, struct append_args) {
  if (OL_HOST_GROUP_LINEAR_ID(ctx) == 0)
    args->log[(*args->count)++] = args->tag;
}

/* Sleeps the given milliseconds (one group should be launched). */
OL_HOST_KERNEL(nap, struct nap_args) {
  const unsigned ms = args->ms;
  struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}
