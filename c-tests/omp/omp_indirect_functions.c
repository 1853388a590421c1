/* Functions declared `indirect` (OpenMP 5.1): a host function pointer that reaches a
 * region, as a value or called through, stands for the device's copy of the function;
 * the device's own `&function` is that copy's address too. */
#include <stdio.h>

int cube(int x);
int negate(int x);
int cube(int x) { return x * x * x; }
int negate(int x) { return -x; }
#pragma omp declare target indirect to(cube, negate)

typedef int (*op_t)(int);

int main(void) {
  op_t on_device = NULL;
#pragma omp target map(from : on_device)
  on_device = &cube;
  printf("the device's &cube differs from the host's: %d\n", on_device != &cube);

  op_t host_fp = cube, passed = NULL;
#pragma omp target map(from : passed)
  passed = host_fp;
  printf("a host pointer in a region is the device's function: %d\n", passed == on_device);

  op_t ops[2] = {cube, negate};
  int results[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    op_t op = ops[i];
#pragma omp target map(from : results[i : 1])
    results[i] = op(3);
  }
  printf("called through host pointers: %d %d\n", results[0], results[1]);
  return 0;
}
