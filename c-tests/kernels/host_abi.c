/* Test kernels of the liboffload host kernel ABI v2 (offload/host_kernel.h); their
 * argument structs are in host_abi.h. */
#include <offload/host_kernel.h>

#include "host_abi.h"

#ifndef VARIANT
#define VARIANT 1
#endif

/* y[i] = a * x[i] + y[i] for i < n */
OL_HOST_KERNEL(saxpy, struct saxpy_args) {
  const size_t begin = OL_HOST_GLOBAL_ID(ctx, 0, 0);
  size_t end = begin + ctx->group_size[0];
  if (end > args->n)
    end = args->n;
  for (size_t i = begin; i < end; ++i)
    args->y[i] = args->a * args->x[i] + args->y[i];
}

/* Each group sums its items of in[] through dynamic shared memory: partial[g] = sum. */
OL_HOST_KERNEL(reduce, struct reduce_args) {
  unsigned long long *scratch = (unsigned long long *)ctx->dyn_shared;
  const size_t items = ctx->group_size[0];
  OL_HOST_FOR_EACH_ITEM(ctx, lx, ly, lz) {
    (void)ly;
    (void)lz;
    scratch[lx] = args->in[OL_HOST_GLOBAL_ID(ctx, 0, lx)];
  }
  for (size_t stride = 1; stride < items; stride *= 2)
    for (size_t i = 0; i + stride < items; i += 2 * stride)
      scratch[i] += scratch[i + stride];
  args->partial[ctx->group_id[0]] = scratch[0];
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
  struct scalars_out *out = args->out;
  out->c = args->c;
  out->s = args->s;
  out->f = args->f;
  out->d = args->d;
  out->p = args->p;
  out->t = args->t;
}

/* Takes a buffer of any size that starts with a pointer `out`, and reads it with
 * OL_HOST_ARG_AT: out[0] = the buffer's size, out[1] = its last byte (at any offset). */
OL_HOST_KERNEL_RAW(raw_echo) {
  if (args_size < sizeof(size_t *))
    return; /* no room for `out`: nothing to write to */
  size_t *out = OL_HOST_ARG_AT(args, 0, size_t *);
  out[0] = args_size;
  out[1] = OL_HOST_ARG_AT(args, args_size - 1, unsigned char);
}

/* A global variable of the program, written by a kernel. */
OL_HOST_GLOBAL long long counter = 100 * VARIANT;
OL_HOST_GLOBAL int variant = VARIANT;

OL_HOST_KERNEL(bump, struct bump_args) {
  counter += args->delta;
}

OL_HOST_KERNEL_NO_ARGS(empty) {}

/* Cooperative: every group announces itself, then waits until all have (this only
   finishes when all groups run at the same time). seen[0] counts arrivals. */
OL_HOST_KERNEL(all_resident, struct all_resident_args) {
  int *seen = args->seen;
  const int total = (int)(ctx->num_groups[0] * ctx->num_groups[1] * ctx->num_groups[2]);
  __atomic_add_fetch(seen, 1, __ATOMIC_SEQ_CST);
  while (__atomic_load_n(seen, __ATOMIC_SEQ_CST) < total) {
  }
  seen[1 + OL_HOST_GROUP_LINEAR_ID(ctx)] = 1;
}

/* A plain function without a marker: an LLVM-convention kernel (called once). */
void llvm_add(void *a, void *b) {
  long *x = (long *)a;
  *x += (long)b;
}

/* A function that only exists to be asked for as a global variable. */
int helper_function(int v) { return v + 1; }
