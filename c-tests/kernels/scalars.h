/* The layout shared by the `scalars` kernel (host_abi.c) and the test that checks what it
 * received (test_kernel_args.c): one definition, so the two cannot drift apart. */
#ifndef OFFLOAD_TEST_SCALARS_H
#define OFFLOAD_TEST_SCALARS_H

/* A 24-byte struct passed by value. */
struct triple {
  double a;
  long long b;
  int c;
  char d;
};

/* Every argument of `scalars`, as the kernel stores them. */
struct scalars_out {
  char c;
  short s;
  float f;
  double d;
  void *p;
  struct triple t;
};

#endif
