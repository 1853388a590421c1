/* The argument structs of the kernels in queue_work.c, shared with the tests that launch
 * them: olLaunchKernel's ArgumentsData is one of these, laid out by the C compiler. */
#ifndef OFFLOAD_TEST_QUEUE_WORK_H
#define OFFLOAD_TEST_QUEUE_WORK_H

#include <stddef.h>

/* add: data[i] += delta for every global id i below n. */
struct add_args {
  int *data;
  int delta;
  size_t n;
};

/* append: log[(*count)++] = tag, once per launch. */
struct append_args {
  int *log;
  unsigned *count;
  int tag;
};

/* nap: sleeps ms milliseconds. */
struct nap_args {
  unsigned ms;
};

#endif
