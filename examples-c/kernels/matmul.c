/* C = A * B for n x n row-major float matrices, as a kernel of liboffload's host device.
 *
 * The launch is a 2D grid of work-groups of COLS x ROWS work-items (64 x 16), one per
 * ROWS x COLS block of C (x runs along the columns). A group computes its whole block at
 * once, walking k in slices of K_SLICE:
 *  - it first packs the slice's K_SLICE x COLS panel of B into its dynamic shared memory
 *    (DynSharedMemory = K_SLICE * COLS * sizeof(float) = 64 KiB), so that the inner loops
 *    read one contiguous, cache-resident block instead of K_SLICE rows 4 KiB apart;
 *  - then, for each row of the block and each half of it, it keeps CHUNK sums in local
 *    variables (registers, once vectorised) across the whole slice.
 * n must be a multiple of COLS (and so of ROWS). */
#include <offload/host_kernel.h>

#include <string.h>

#include "matmul.h" /* COLS, ROWS, K_SLICE and the arguments */

#define CHUNK 32

OL_HOST_KERNEL(matmul, struct matmul_args) {
  const float *a = args->a;
  const float *b = args->b;
  float *c = args->c;
  const size_t n = args->n;
  float(*panel)[COLS] = (float(*)[COLS])ctx->dyn_shared;
  if (ctx->group_size[0] != COLS || ctx->group_size[1] != ROWS ||
      ctx->dyn_shared_size < sizeof(float[K_SLICE][COLS]))
    return; /* launched with another shape: nothing sensible to do */
  const size_t col0 = (size_t)ctx->group_id[0] * COLS;
  const size_t row0 = (size_t)ctx->group_id[1] * ROWS;
  float block[ROWS][COLS];
  memset(block, 0, sizeof block);
  for (size_t k0 = 0; k0 < n; k0 += K_SLICE) {
    const size_t depth = k0 + K_SLICE < n ? K_SLICE : n - k0;
    for (size_t k = 0; k < depth; ++k)
      memcpy(panel[k], b + (k0 + k) * n + col0, sizeof panel[k]);
    for (size_t i = 0; i < ROWS; ++i) {
      const float *a_row = a + (row0 + i) * n + k0;
      for (size_t j0 = 0; j0 < COLS; j0 += CHUNK) {
        float sum[CHUNK];
        memcpy(sum, &block[i][j0], sizeof sum);
        for (size_t k = 0; k < depth; ++k) {
          const float aik = a_row[k];
          const float *p = &panel[k][j0];
          for (size_t j = 0; j < CHUNK; ++j)
            sum[j] += aik * p[j];
        }
        memcpy(&block[i][j0], sum, sizeof sum);
      }
    }
  }
  for (size_t i = 0; i < ROWS; ++i)
    memcpy(c + (row0 + i) * n + col0, block[i], sizeof block[i]);
}
