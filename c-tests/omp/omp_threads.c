/* Many host threads at once: each maps its own data and runs regions on it, all of them
 * map one shared array (its reference count goes up and down concurrently), and some
 * use other devices; the results must be exactly the sequential ones. */
#include <omp.h>
#include <stdio.h>

#define THREADS 8
#define ROUNDS 50
#define N 64

int main(void) {
  static int own[THREADS][N];
  static int shared[N];
  long sums[THREADS] = {0};
  for (int i = 0; i < N; i++) shared[i] = i;
  int devices = omp_get_num_devices();

#pragma omp parallel num_threads(THREADS)
  {
    int t = omp_get_thread_num();
    int dev = devices > 0 ? t % devices : 0;
    for (int r = 0; r < ROUNDS; r++) {
      for (int i = 0; i < N; i++) own[t][i] = t * 1000 + r + i;
#pragma omp target device(dev) map(tofrom : own[t][0 : N]) map(to : shared[0 : N])
      for (int i = 0; i < N; i++) own[t][i] += shared[i];
      long s = 0;
      for (int i = 0; i < N; i++) s += own[t][i];
      sums[t] += s;
#pragma omp target data map(to : shared[0 : N]) device(dev)
      {
#pragma omp target device(dev) map(tofrom : own[t][0 : 1]) map(to : shared[0 : N])
        own[t][0] = shared[N - 1] + t;
      }
      sums[t] += own[t][0];
    }
  }
  long total = 0;
  for (int t = 0; t < THREADS; t++) {
    printf("thread %d: %ld\n", t, sums[t]);
    total += sums[t];
  }
  printf("total %ld, shared still mapped: %d\n", total, omp_target_is_present(shared, 0));
  return 0;
}
