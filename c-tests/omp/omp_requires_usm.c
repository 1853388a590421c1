/* #pragma omp requires unified_shared_memory: unmapped data is used in place on the
 * device, explicit maps make no copies (so nothing is "present"), and `close` still
 * makes a device copy. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#pragma omp requires unified_shared_memory

int main(void) {
  int dev = omp_get_default_device();
  int *a = malloc(16 * sizeof(int));
  for (int i = 0; i < 16; i++) a[i] = i;
  /* map(to) without a copy: the device writes the host's array itself. */
#pragma omp target map(to : a[0 : 16])
  for (int i = 0; i < 16; i++) a[i] *= 2;
  printf("in place: a[3]=%d present=%d\n", a[3], omp_target_is_present(a, dev));

  /* Nothing mapped at all. */
  int *b = malloc(sizeof(int));
  *b = 5;
#pragma omp target
  { *b += 1; }
  printf("unmapped pointer: %d\n", *b);

  /* close: a real device copy, with its own to/from. */
  int c[4] = {1, 2, 3, 4};
#pragma omp target enter data map(close, to : c)
  printf("close copy present=%d\n", omp_target_is_present(c, dev));
#pragma omp target map(close, tofrom : c)
  for (int i = 0; i < 4; i++) c[i] += 10;
  printf("after region (device copy kept): %d %d %d %d\n", c[0], c[1], c[2], c[3]);
#pragma omp target exit data map(close, from : c)
  printf("after exit data: %d %d %d %d\n", c[0], c[1], c[2], c[3]);

  /* enter/exit data of ordinary data: no copies, no failures. */
#pragma omp target enter data map(to : a[0 : 16])
#pragma omp target exit data map(from : a[0 : 16])
  printf("enter/exit data in place: a[15]=%d\n", a[15]);
  free(a);
  free(b);
  return 0;
}
