/* `nowait` target regions: independent ones in flight together, then a chain ordered by
 * `depend`, a task that depends on the chain's end, and `taskwait`. On a GPU (and with
 * OFFLOAD_NOWAIT_ASYNC=1 on every device) each region's kernel runs on a queue while
 * libomp polls the region's task; the task completes, and what depends on it runs, only
 * after the kernel and the copies back. */
#include <omp.h>
#include <stdio.h>

enum { ROWS = 64, COLS = 256, STEPS = 20 };
static int rows[ROWS][COLS];

int main(void) {
  for (int r = 0; r < ROWS; r++) {
#pragma omp target map(tofrom : rows[r]) nowait depend(out : rows[r])
    for (int i = 0; i < COLS; i++)
      rows[r][i] = r * 1000 + i;
  }
#pragma omp taskwait
  long sum = 0;
  int wrong = 0;
  for (int r = 0; r < ROWS; r++)
    for (int i = 0; i < COLS; i++) {
      sum += rows[r][i];
      wrong += rows[r][i] != r * 1000 + i;
    }
  printf("independent regions: sum %ld, wrong %d\n", sum, wrong);

  int x = 0, seen = -1;
#pragma omp parallel num_threads(2)
#pragma omp single
  {
    for (int k = 0; k < STEPS; k++) {
#pragma omp target map(tofrom : x) nowait depend(inout : x)
      x = x * 2 + 1;
    }
#pragma omp task depend(in : x) shared(seen)
    seen = x;
#pragma omp taskwait
  }
  printf("chain of %d: %d (the task after it saw %d)\n", STEPS, x, seen);

  /* A region reading what a nowait region wrote, ordered by depend only. */
  int a = 1, b = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
  {
#pragma omp target map(tofrom : a) nowait depend(out : a)
    a = 41;
#pragma omp target map(to : a) map(from : b) nowait depend(in : a)
    b = a + 1;
#pragma omp taskwait
  }
  printf("ordered by depend: a=%d b=%d\n", a, b);
  return 0;
}
