/* Test kernels of the liboffload host kernel ABI v2 (offload/host_kernel.h); their
 * argument structs are in host_abi.h. Written in the header's portable dialect, so the
 * same source also builds to PTX for a CUDA device (scripts/make-gpu-test-kernels.sh):
 * work-item code inside OL_HOST_FOR_EACH_ITEM, group-level side effects inside
 * OL_ONCE_PER_GROUP. What is host-only by nature is in #ifndef OL_HOST_GPU (raw_echo,
 * llvm_add). */
#include <offload/host_kernel.h>

#include "host_abi.h"

#ifndef VARIANT
#define VARIANT 1
#endif

/* y[i] = a * x[i] + y[i] for i < n (each group does its range of x once, whatever the
 * launch's dimensions). */
OL_HOST_KERNEL(saxpy, struct saxpy_args) {
  OL_HOST_FOR_EACH_INDEX(ctx, i, args->n) { args->y[i] = args->a * args->x[i] + args->y[i]; }
}

/* Each group sums its items of in[] through dynamic shared memory: partial[g] = sum.
 * A 1D kernel, like saxpy: the reduction steps use the items with ly = lz = 0. The
 * pairwise steps are the same sums, in the same order, as a loop over the group. */
OL_HOST_KERNEL(reduce, struct reduce_args) {
  unsigned long long *scratch = (unsigned long long *)ctx->dyn_shared;
  const size_t items = ctx->group_size[0];
  OL_HOST_FOR_EACH_ITEM(ctx, lx, ly, lz) {
    (void)ly;
    (void)lz;
    scratch[lx] = args->in[OL_HOST_GLOBAL_ID(ctx, 0, lx)];
  }
  OL_GROUP_BARRIER(ctx);
  for (size_t stride = 1; stride < items; stride *= 2) {
    OL_HOST_FOR_EACH_ITEM(ctx, lx, ly, lz) {
      if (ly == 0 && lz == 0 && lx % (2 * stride) == 0 && lx + stride < items)
        scratch[lx] += scratch[lx + stride];
    }
    OL_GROUP_BARRIER(ctx);
  }
  OL_ONCE_PER_GROUP(ctx) { args->partial[ctx->group_id[0]] = scratch[0]; }
}

/* out[linear global id] = record of the item's ids, for a 3D grid. */
OL_HOST_KERNEL(grid3d, struct grid3d_args) {
  const size_t sx = OL_HOST_GLOBAL_SIZE(ctx, 0), sy = OL_HOST_GLOBAL_SIZE(ctx, 1);
  OL_HOST_FOR_EACH_ITEM(ctx, lx, ly, lz) {
    const size_t x = OL_HOST_GLOBAL_ID(ctx, 0, lx);
    const size_t y = OL_HOST_GLOBAL_ID(ctx, 1, ly);
    const size_t z = OL_HOST_GLOBAL_ID(ctx, 2, lz);
    struct ids *r = &args->out[(z * sy + y) * sx + x];
    r->gx = (unsigned)x;
    r->gy = (unsigned)y;
    r->gz = (unsigned)z;
    r->group_linear = (unsigned)OL_HOST_GROUP_LINEAR_ID(ctx);
    r->dims = ctx->dimensions;
    r->aligned = ((size_t)ctx->dyn_shared % 64) == 0;
  }
}

/* Arguments of every size, by value, stored for the test to read (layout: scalars.h). */
OL_HOST_KERNEL(scalars, struct scalars_args) {
  OL_ONCE_PER_GROUP(ctx) {
    struct scalars_out *out = args->out;
    out->c = args->c;
    out->s = args->s;
    out->f = args->f;
    out->d = args->d;
    out->p = args->p;
    out->t = args->t;
  }
}

#ifndef OL_HOST_GPU
/* Takes a buffer of any size that starts with a pointer `out`, and reads it with
 * OL_HOST_ARG_AT: out[0] = the buffer's size, out[1] = its last byte (at any offset).
 * Host-only: a GPU kernel's parameters are a fixed list. */
OL_HOST_KERNEL_RAW(raw_echo) {
  if (args_size < sizeof(size_t *))
    return; /* no room for `out`: nothing to write to */
  size_t *out = OL_HOST_ARG_AT(args, 0, size_t *);
  out[0] = args_size;
  out[1] = OL_HOST_ARG_AT(args, args_size - 1, unsigned char);
}
#endif

/* A global variable of the program, written by a kernel. */
OL_HOST_GLOBAL long long counter = 100 * VARIANT;
OL_HOST_GLOBAL int variant = VARIANT;

OL_HOST_KERNEL(bump, struct bump_args) {
  OL_ONCE_PER_GROUP(ctx) { counter += args->delta; }
}

OL_HOST_KERNEL_NO_ARGS(empty) {}

/* Cooperative: every group announces itself, then waits until all have (this only
   finishes when all groups run at the same time). seen[0] counts arrivals. The wait
   reads relaxed: it only waits for the count, and nothing it reads afterwards depends
   on what the other groups wrote (clang 19's NVPTX back end has no seq_cst atomic load
   for sm_60 either). */
OL_HOST_KERNEL(all_resident, struct all_resident_args) {
  OL_ONCE_PER_GROUP(ctx) {
    int *seen = args->seen;
    const int total = (int)(ctx->num_groups[0] * ctx->num_groups[1] * ctx->num_groups[2]);
    __atomic_add_fetch(seen, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(seen, __ATOMIC_RELAXED) < total) {
    }
    seen[1 + OL_HOST_GROUP_LINEAR_ID(ctx)] = 1;
  }
}

#ifndef OL_HOST_GPU
/* A plain function without a marker: an LLVM-convention kernel (called once). Host-only:
 * that convention is the host plugin's. */
void llvm_add(void *a, void *b) {
  long *x = (long *)a;
  *x += (long)b;
}
#endif

/* A function that only exists to be asked for as a global variable. (On a GPU it is a
 * device function, not a kernel.) */
int helper_function(int v) { return v + 1; }
