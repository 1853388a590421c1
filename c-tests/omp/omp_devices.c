/* Every OpenMP device of the host target: how many there are, that each has its own
 * data environment and its own copy of declare-target globals, and that device(n)
 * clauses, omp_target_alloc and omp_target_memcpy between devices work on each. */
#include <omp.h>
#include <stdio.h>

int counter = 0;
#pragma omp declare target(counter)

int main(void) {
  int n = omp_get_num_devices();
  printf("devices=%d initial=%d default=%d\n", n, omp_get_initial_device(),
         omp_get_default_device());

  for (int d = 0; d < n; d++) {
#pragma omp target device(d)
    { counter += d + 1; }
  }
  for (int d = 0; d < n; d++) {
    int seen = -1;
#pragma omp target device(d) map(from : seen)
    { seen = counter; }
    printf("device %d: its counter=%d\n", d, seen);
  }
  printf("host counter=%d\n", counter);

  int x = 1;
#pragma omp target enter data map(to : x) device(0)
  printf("mapped on 0: %d, on 1: %d\n", omp_target_is_present(&x, 0),
         n > 1 ? omp_target_is_present(&x, 1) : 0);
#pragma omp target exit data map(delete : x) device(0)

  if (n > 1) {
    int src[8], dst[8];
    for (int i = 0; i < 8; i++) src[i] = i * i, dst[i] = 0;
    int *p0 = omp_target_alloc(sizeof src, 0), *p1 = omp_target_alloc(sizeof src, 1);
    int host = omp_get_initial_device();
    int rc = omp_target_memcpy(p0, src, sizeof src, 0, 0, 0, host);
    rc |= omp_target_memcpy(p1, p0, sizeof src, 0, 0, 1, 0);
    rc |= omp_target_memcpy(dst, p1, sizeof src, 0, 0, host, 1);
    printf("device 0 -> device 1 -> host: rc=%d", rc);
    for (int i = 0; i < 8; i++) printf(" %d", dst[i]);
    printf("\n");
    omp_target_free(p0, 0);
    omp_target_free(p1, 1);
  }
  return 0;
}
