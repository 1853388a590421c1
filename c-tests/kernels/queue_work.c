/* Kernels of the queue and event tests (host kernel ABI v1). */
#include <offload/host_kernel.h>

#include <time.h>

/* data[i] += delta for every global id i below n. */
OL_HOST_KERNEL(add, 3) {
  int *data = OL_HOST_ARG(args, 0, int *);
  const int delta = OL_HOST_ARG(args, 1, int);
  const size_t n = OL_HOST_ARG(args, 2, size_t);
  OL_HOST_FOR_EACH_ITEM(ctx, lx, ly, lz) {
    (void)ly;
    (void)lz;
    const size_t i = OL_HOST_GLOBAL_ID(ctx, 0, lx);
    if (i < n)
      data[i] += delta;
  }
}

/* log[(*count)++] = tag, once per launch (group 0, first item). */
OL_HOST_KERNEL(append, 3) {
  int *log = OL_HOST_ARG(args, 0, int *);
  unsigned *count = OL_HOST_ARG(args, 1, unsigned *);
  const int tag = OL_HOST_ARG(args, 2, int);
  if (OL_HOST_GROUP_LINEAR_ID(ctx) == 0)
    log[(*count)++] = tag;
}

/* Sleeps the given milliseconds (one group should be launched). */
OL_HOST_KERNEL(nap, 1) {
  const unsigned ms = OL_HOST_ARG(args, 0, unsigned);
  struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}
