/* offload-check's kernels, in offload/host_kernel.h's portable dialect: the same source
 * builds the host device's program (an ELF shared object), the AMDGPU code objects
 * (clang-19, at build time, where it can) and, once, the committed PTX
 * (check_kernels.ptx, see make-ptx.sh). Work-item code sits inside
 * OL_HOST_FOR_EACH_ITEM / OL_HOST_FOR_EACH_INDEX, group-level stores inside
 * OL_ONCE_PER_GROUP, as the header's rule for portable kernels asks. */
#include <offload/host_kernel.h>

#include "check_kernels.h"

/* A global variable of the program: read, written and bumped by the global check. */
OL_HOST_GLOBAL uint64_t check_counter = 1234;

OL_HOST_KERNEL_NO_ARGS(empty) {}

OL_HOST_KERNEL(write_sequence, struct write_sequence_args) {
  OL_HOST_FOR_EACH_INDEX(ctx, i, args->n) {
    args->out[i] = (uint32_t)i * args->scale + (uint32_t)args->offset;
  }
}

OL_HOST_KERNEL(bump_counter, struct bump_counter_args) {
  OL_ONCE_PER_GROUP(ctx) {
    if (OL_HOST_GROUP_LINEAR_ID(ctx) == 0)
      check_counter += args->delta;
  }
}

OL_HOST_KERNEL(reverse_in_groups, struct reverse_in_groups_args) {
  uint32_t *shared = (uint32_t *)ctx->dyn_shared;
  const uint32_t size = ctx->group_size[0];
  const int usable = shared != 0 && ctx->dyn_shared_size >= (size_t)size * sizeof(uint32_t);
  OL_HOST_FOR_EACH_ITEM(ctx, lx, ly, lz) {
    (void)ly;
    (void)lz;
    if (usable)
      shared[lx] = args->in[OL_HOST_GLOBAL_ID(ctx, 0, lx)];
  }
  OL_GROUP_BARRIER(ctx);
  OL_HOST_FOR_EACH_ITEM(ctx, lx, ly, lz) {
    (void)ly;
    (void)lz;
    if (usable)
      args->out[OL_HOST_GLOBAL_ID(ctx, 0, lx)] = shared[size - 1 - lx];
  }
  OL_ONCE_PER_GROUP(ctx) {
    if (!usable)
      __atomic_add_fetch(args->bad, 1u, __ATOMIC_RELAXED);
  }
}

OL_HOST_KERNEL(all_resident, struct all_resident_args) {
  OL_ONCE_PER_GROUP(ctx) {
    uint32_t *seen = args->seen;
    const uint32_t total = ctx->num_groups[0] * ctx->num_groups[1] * ctx->num_groups[2];
    __atomic_add_fetch(seen, 1u, __ATOMIC_SEQ_CST);
    uint64_t polls = 0;
    /* Bounded, so that groups that are not all resident end the kernel (and fail the
     * check) instead of hanging it. */
    while (__atomic_load_n(seen, __ATOMIC_RELAXED) < total && polls < args->spins)
      ++polls;
    seen[1 + OL_HOST_GROUP_LINEAR_ID(ctx)] =
        __atomic_load_n(seen, __ATOMIC_RELAXED) >= total ? 1u : 2u;
  }
}

OL_HOST_KERNEL(store_to, struct store_to_args) {
  OL_ONCE_PER_GROUP(ctx) { *(volatile uint32_t *)args->target = 1u; }
}
