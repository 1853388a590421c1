/* Built with -gline-tables-only, so that clang names every mapped variable with its
 * source position (";a[0:8];/path/omp_info_names.c;20;5;;"): LIBOMPTARGET_INFO's mapping
 * tables name the declaration by its file name alone, without the directory. */
#include <stdio.h>

#define N 8

#pragma omp declare target
int counter;
#pragma omp end declare target

int main(void) {
  int a[N], b[N];
  for (int i = 0; i < N; i++) {
    a[i] = i;
    b[i] = 0;
  }
  counter = 0;
#pragma omp target data map(to : a) map(from : b)
  {
#pragma omp target map(tofrom : counter)
    for (int i = 0; i < N; i++) {
      b[i] = 2 * a[i];
      counter++;
    }
  }
  /* counter is declare target: always present, so only an update brings it back. */
#pragma omp target update from(counter)
  printf("b:");
  for (int i = 0; i < N; i++) printf(" %d", b[i]);
  printf("\ncounter: %d\n", counter);
  return 0;
}
