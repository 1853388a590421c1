/* target update of array sections: contiguous, strided (non-contiguous, OpenMP 5.0
 * array sections with a stride) and 2-D sub-blocks; and present motion modifiers on
 * mapped data. */
#include <stdio.h>

#define N 16
#define R 4
#define C 6

int main(void) {
  int a[N];
  for (int i = 0; i < N; i++) a[i] = i;
#pragma omp target data map(tofrom : a)
  {
#pragma omp target
    for (int i = 0; i < N; i++) a[i] = 100 + i;
#pragma omp target update from(a[2 : 3])
    printf("contiguous:");
    for (int i = 0; i < N; i++) printf(" %d", a[i]);
    printf("\n");
#pragma omp target update from(a[0 : 4 : 4])
    printf("strided from:");
    for (int i = 0; i < N; i++) printf(" %d", a[i]);
    printf("\n");
    for (int i = 0; i < N; i++) a[i] = -i;
#pragma omp target update to(a[1 : 5 : 3])
#pragma omp target
    for (int i = 0; i < N; i++) a[i] += 1000;
  }
  printf("strided to:");
  for (int i = 0; i < N; i++) printf(" %d", a[i]);
  printf("\n");

  int m[R][C];
  for (int r = 0; r < R; r++)
    for (int c = 0; c < C; c++) m[r][c] = r * 10 + c;
#pragma omp target data map(to : m)
  {
#pragma omp target
    for (int r = 0; r < R; r++)
      for (int c = 0; c < C; c++) m[r][c] = -m[r][c];
#pragma omp target update from(m[1 : 2][2 : 3])
  }
  for (int r = 0; r < R; r++) {
    for (int c = 0; c < C; c++) printf(" %3d", m[r][c]);
    printf("\n");
  }

  int b[4] = {1, 2, 3, 4};
#pragma omp target enter data map(to : b)
#pragma omp target
  for (int i = 0; i < 4; i++) b[i] *= 5;
#pragma omp target update from(present : b)
  printf("present update: %d %d %d %d\n", b[0], b[1], b[2], b[3]);
#pragma omp target exit data map(delete : b)
  return 0;
}
