/* The arguments of the saxpy kernel (kernels/saxpy.c), as the host program passes them
 * to olLaunchKernel: one struct, laid out by the C compiler the same way on both sides. */
#ifndef EXAMPLE_SAXPY_H
#define EXAMPLE_SAXPY_H

#include <stddef.h>

struct saxpy_args {
  float a;
  const float *x;
  float *y;
  size_t n;
};

#endif
