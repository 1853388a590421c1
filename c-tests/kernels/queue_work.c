/* Kernels of the queue and event tests (host kernel ABI v2); their argument structs are
 * in queue_work.h. Written in offload/host_kernel.h's portable dialect, so the same
 * source also builds to PTX for a CUDA device (scripts/make-gpu-test-kernels.sh). */
#include <offload/host_kernel.h>

#ifndef OL_HOST_GPU
#include <time.h> /* nanosleep; a GPU has no C library */
#endif

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
  OL_ONCE_PER_GROUP(ctx) {
    if (OL_HOST_GROUP_LINEAR_ID(ctx) == 0)
      args->log[(*args->count)++] = args->tag;
  }
}

/* Sleeps the given milliseconds (one group should be launched). On a GPU, where there is
 * no sleep, the group's first item spins on a clock (%globaltimer, the AMD steady counter). */
OL_HOST_KERNEL(nap, struct nap_args) {
  OL_ONCE_PER_GROUP(ctx) {
    const unsigned ms = args->ms;
#ifndef OL_HOST_GPU
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
#elif defined(__NVPTX__)
    const unsigned long long end =
        (unsigned long long)__nvvm_read_ptx_sreg_globaltimer() + ms * 1000000ull;
    while ((unsigned long long)__nvvm_read_ptx_sreg_globaltimer() < end) {
    }
#else
    /* AMD GPUs' steady counter runs at 100 MHz (the "realtime" clock). */
    const unsigned long long end =
        (unsigned long long)__builtin_readsteadycounter() + ms * 100000ull;
    while ((unsigned long long)__builtin_readsteadycounter() < end) {
    }
#endif
  }
}
