/* The arguments of the `scalars` kernel (host_abi.c), shared with the test that sends
 * them and checks what it received (test_kernel_args.c): one definition, so the two
 * cannot drift apart. */
#ifndef OFFLOAD_TEST_SCALARS_H
#define OFFLOAD_TEST_SCALARS_H

/* A 24-byte struct passed by value. */
struct triple {
  double a;
  long long b;
  int c;
  char d;
};

/* Every argument value of `scalars` but `out`, as the kernel stores them. */
struct scalars_out {
  char c;
  short s;
  float f;
  double d;
  void *p;
  struct triple t;
};

/* The argument buffer of `scalars`: where to store the values, then values of every
 * size, with the padding a C compiler puts between them (the layout olLaunchKernel's
 * ArgumentsData has for a kernel taking these parameters). */
struct scalars_args {
  struct scalars_out *out;
  char c;
  short s;
  float f;
  double d;
  void *p;
  struct triple t;
};

#endif
