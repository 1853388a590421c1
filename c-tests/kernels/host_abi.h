/* The argument structs of the kernels in host_abi.c, shared with the tests that launch
 * them: olLaunchKernel's ArgumentsData is one of these, laid out by the C compiler. */
#ifndef OFFLOAD_TEST_HOST_ABI_H
#define OFFLOAD_TEST_HOST_ABI_H

#include <stddef.h>

#include "scalars.h"

/* saxpy: y[i] = a * x[i] + y[i] for i < n. */
struct saxpy_args {
  float a;
  const float *x;
  float *y;
  size_t n;
};

/* reduce: partial[g] = the sum of group g's items of in[]. */
struct reduce_args {
  const unsigned *in;
  unsigned long long *partial;
};

/* What grid3d records for each work-item. */
struct ids {
  unsigned gx, gy, gz, group_linear, dims;
  unsigned aligned; /* 1 if dyn_shared is 64-byte aligned or NULL */
};

/* grid3d: out[linear global id] = the item's ids. */
struct grid3d_args {
  struct ids *out;
};

/* bump: counter += delta. */
struct bump_args {
  int delta;
};

/* all_resident: seen[0] counts the groups, seen[1 + g] = 1 for each group g. */
struct all_resident_args {
  int *seen;
};

#endif
