/* Test kernels of the liboffload host kernel ABI v1 (offload/host_kernel.h). */
#include <offload/host_kernel.h>

#include "scalars.h"

#ifndef VARIANT
#define VARIANT 1
#endif

/* y[i] = a * x[i] + y[i] for i < n */
OL_HOST_KERNEL(saxpy, 4) {
  const float a = OL_HOST_ARG(args, 0, float);
  const float *x = OL_HOST_ARG(args, 1, const float *);
  float *y = OL_HOST_ARG(args, 2, float *);
  const size_t n = OL_HOST_ARG(args, 3, size_t);
  const size_t begin = OL_HOST_GLOBAL_ID(ctx, 0, 0);
  size_t end = begin + ctx->group_size[0];
  if (end > n)
    end = n;
  for (size_t i = begin; i < end; ++i)
    y[i] = a * x[i] + y[i];
}

/* Each group sums its items of in[] through dynamic shared memory: partial[g] = sum. */
OL_HOST_KERNEL(reduce, 2) {
  const unsigned *in = OL_HOST_ARG(args, 0, const unsigned *);
  unsigned long long *partial = OL_HOST_ARG(args, 1, unsigned long long *);
  unsigned long long *scratch = (unsigned long long *)ctx->dyn_shared;
  const size_t items = ctx->group_size[0];
  OL_HOST_FOR_EACH_ITEM(ctx, lx, ly, lz) {
    (void)ly;
    (void)lz;
    scratch[lx] = in[OL_HOST_GLOBAL_ID(ctx, 0, lx)];
  }
  for (size_t stride = 1; stride < items; stride *= 2)
    for (size_t i = 0; i + stride < items; i += 2 * stride)
      scratch[i] += scratch[i + stride];
  partial[ctx->group_id[0]] = scratch[0];
}

/* out[linear global id] = record of the item's ids, for a 3D grid. */
struct ids {
  unsigned gx, gy, gz, group_linear, dims;
  unsigned aligned; /* 1 if dyn_shared is 64-byte aligned or NULL */
};

OL_HOST_KERNEL(grid3d, 1) {
  struct ids *out = OL_HOST_ARG(args, 0, struct ids *);
  const size_t sx = OL_HOST_GLOBAL_SIZE(ctx, 0), sy = OL_HOST_GLOBAL_SIZE(ctx, 1);
  OL_HOST_FOR_EACH_ITEM(ctx, lx, ly, lz) {
    const size_t x = OL_HOST_GLOBAL_ID(ctx, 0, lx);
    const size_t y = OL_HOST_GLOBAL_ID(ctx, 1, ly);
    const size_t z = OL_HOST_GLOBAL_ID(ctx, 2, lz);
    struct ids *r = &out[(z * sy + y) * sx + x];
    r->gx = (unsigned)x;
    r->gy = (unsigned)y;
    r->gz = (unsigned)z;
    r->group_linear = (unsigned)OL_HOST_GROUP_LINEAR_ID(ctx);
    r->dims = ctx->dimensions;
    r->aligned = ((size_t)ctx->dyn_shared % 64) == 0;
  }
}

/* Arguments of every size, by value, stored for the test to read (layout: scalars.h). */
OL_HOST_KERNEL(scalars, 7) {
  struct scalars_out *out = OL_HOST_ARG(args, 0, struct scalars_out *);
  out->c = OL_HOST_ARG(args, 1, char);
  out->s = OL_HOST_ARG(args, 2, short);
  out->f = OL_HOST_ARG(args, 3, float);
  out->d = OL_HOST_ARG(args, 4, double);
  out->p = OL_HOST_ARG(args, 5, void *);
  out->t = OL_HOST_ARG(args, 6, struct triple);
}

/* A global variable of the program, written by a kernel. */
OL_HOST_GLOBAL long long counter = 100 * VARIANT;
OL_HOST_GLOBAL int variant = VARIANT;

OL_HOST_KERNEL(bump, 1) {
  counter += OL_HOST_ARG(args, 0, int);
}

OL_HOST_KERNEL(empty, 0) {}

/* Cooperative: every group announces itself, then waits until all have (this only
   finishes when all groups run at the same time). seen[0] counts arrivals. */
OL_HOST_KERNEL(all_resident, 1) {
  int *seen = OL_HOST_ARG(args, 0, int *);
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
