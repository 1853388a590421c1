/* Device memory routines called with invalid arguments: the return codes, and the
 * error lines LLVM's library prints on stderr for them (compared too). */
#include <omp.h>
#include <stdio.h>

int main(void) {
  int x = 5, y = 0;
  int host = omp_get_initial_device(), dev = omp_get_default_device();
  printf("memcpy from NULL: %d\n", omp_target_memcpy(&y, NULL, sizeof y, 0, 0, host, dev));
  fflush(stdout);
  printf("memcpy to NULL: %d\n", omp_target_memcpy(NULL, &x, sizeof x, 0, 0, dev, host));
  fflush(stdout);
  printf("memcpy of nothing: %d\n", omp_target_memcpy(NULL, NULL, 0, 0, 0, dev, host));
  fflush(stdout);
  printf("associate NULL: %d\n", omp_target_associate_ptr(NULL, NULL, sizeof x, 0, dev));
  fflush(stdout);
  int *d = omp_target_alloc(sizeof x, dev);
  printf("memcpy round trip: %d %d\n", omp_target_memcpy(d, &x, sizeof x, 0, 0, dev, host),
         omp_target_memcpy(&y, d, sizeof y, 0, 0, host, dev));
  omp_target_free(d, dev);
  printf("y = %d\n", y);
  return 0;
}
