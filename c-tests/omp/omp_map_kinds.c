/* Target regions with map(to/from/tofrom/alloc) of scalars, arrays and array sections,
 * and firstprivate scalars: prints what the host sees afterwards. */
#include <stdio.h>

#define N 16

int main(void) {
  int in[N], out[N], both[N], scratch_result[N];
  int scalar_to = 7, scalar_from = 0, scalar_tofrom = 5;
  double factor = 2.5;
  long offset = 100;
  for (int i = 0; i < N; i++) {
    in[i] = i;
    out[i] = -1;
    both[i] = i * 10;
    scratch_result[i] = 0;
  }

#pragma omp target map(to : in, scalar_to) map(from : out, scalar_from) \
    map(tofrom : both, scalar_tofrom) firstprivate(factor, offset)
  {
    for (int i = 0; i < N; i++) {
      out[i] = (int)(in[i] * factor) + (int)offset + scalar_to;
      both[i] += in[i];
    }
    scalar_from = scalar_to * 3;
    scalar_tofrom += 1;
    factor = 0.0; /* a private copy: the host's stays 2.5 */
  }
  printf("scalar_from=%d scalar_tofrom=%d factor=%.1f\n", scalar_from, scalar_tofrom, factor);
  for (int i = 0; i < N; i++) printf("%d:%d,%d ", i, out[i], both[i]);
  printf("\n");

  /* Array sections: only the section moves. */
  int section[N];
  for (int i = 0; i < N; i++) section[i] = i;
#pragma omp target map(tofrom : section[4 : 8])
  for (int i = 4; i < 12; i++) section[i] *= -1;
  for (int i = 0; i < N; i++) printf("%d ", section[i]);
  printf("\n");

  /* alloc: device scratch memory, never copied; the result comes back through from. */
  int scratch[N];
#pragma omp target map(alloc : scratch) map(from : scratch_result)
  {
    for (int i = 0; i < N; i++) scratch[i] = i * i;
    for (int i = 0; i < N; i++) scratch_result[i] = scratch[i] + 1;
  }
  for (int i = 0; i < N; i++) printf("%d ", scratch_result[i]);
  printf("\n");

  /* Implicit maps: a scalar is firstprivate, an array tofrom. */
  int implicit_array[4] = {1, 2, 3, 4};
  int implicit_scalar = 40;
#pragma omp target
  {
    for (int i = 0; i < 4; i++) implicit_array[i] += implicit_scalar;
    implicit_scalar = -1;
  }
  printf("implicit: %d %d %d %d scalar=%d\n", implicit_array[0], implicit_array[1],
         implicit_array[2], implicit_array[3], implicit_scalar);

  /* A heap array through a pointer section. */
  static double heap[1000];
  double *p = heap;
  for (int i = 0; i < 1000; i++) p[i] = i;
#pragma omp target map(tofrom : p[0 : 1000])
  for (int i = 0; i < 1000; i++) p[i] = p[i] * 0.5;
  double sum = 0;
  for (int i = 0; i < 1000; i++) sum += p[i];
  printf("heap sum=%.1f\n", sum);
  return 0;
}
