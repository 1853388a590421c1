/* declare target link: the device reaches a linked global through a device pointer that
 * mapping the global attaches; whole and partial maps, enter/exit data, and a device
 * function using the global. */
#include <stdio.h>

#define N 64
int table[N];
double scale = 2.0;
#pragma omp declare target link(table, scale)

#pragma omp declare target
static int lookup(int i) { return table[i] * 2; }
#pragma omp end declare target

int main(void) {
  for (int i = 0; i < N; i++) table[i] = i;
#pragma omp target map(tofrom : table) map(to : scale)
  for (int i = 0; i < N; i++) table[i] = (int)(table[i] * scale);
  printf("whole: %d %d %d\n", table[0], table[1], table[N - 1]);

#pragma omp target enter data map(to : table[0 : N / 2])
  int got = -1;
#pragma omp target map(from : got)
  { got = lookup(5); }
  printf("device function: %d\n", got);
#pragma omp target
  { table[0] = 100; }
  printf("host before exit data: %d\n", table[0]);
#pragma omp target exit data map(from : table[0 : N / 2])
  printf("after exit data: %d %d\n", table[0], table[10]);
  return 0;
}
