/* What the matrix multiply kernel (kernels/matmul.c) and its host program (matmul.c)
 * share: the block shape, which fixes the launch's grid and shared memory, and the
 * kernel's arguments as one struct passed to olLaunchKernel. */
#ifndef EXAMPLE_MATMUL_H
#define EXAMPLE_MATMUL_H

#include <stddef.h>

#define COLS 64     /* work-items of a group along x: columns of its block of C */
#define ROWS 16     /* along y: rows of its block */
#define K_SLICE 256 /* rows of B a group packs into its dynamic shared memory at once */

/* C = A * B for n x n row-major matrices. */
struct matmul_args {
  const float *a;
  const float *b;
  float *c;
  size_t n;
};

#endif
