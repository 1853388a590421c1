/* The device API: device numbers, omp_target_alloc/free, omp_target_memcpy in every
 * direction, omp_target_is_present, and device memory used in a target region. */
#include <omp.h>
#include <stdio.h>
#include <string.h>

#define N 64

int main(void) {
  int num = omp_get_num_devices();
  int host = omp_get_initial_device();
  int dev = omp_get_default_device();
  /* The number of devices differs between runtimes (LLVM 19's host plugin shows 4);
   * what OpenMP fixes is printed. */
  printf("have devices: %d, initial device == num_devices: %d\n", num > 0, host == num);

  int src[N], back[N];
  for (int i = 0; i < N; i++) src[i] = i * 3;
  memset(back, 0, sizeof back);

  int *d1 = omp_target_alloc(sizeof src, dev);
  int *d2 = omp_target_alloc(sizeof src, dev);
  printf("alloc: %d %d\n", d1 != NULL, d2 != NULL);
  printf("alloc of 0 bytes is NULL: %d\n", omp_target_alloc(0, dev) == NULL);
  printf("device memory is not a mapping: %d\n", omp_target_is_present(src, dev));
  printf("host to device: %d\n",
         omp_target_memcpy(d1, src, sizeof src, 0, 0, dev, host));
  printf("device to device: %d\n",
         omp_target_memcpy(d2, d1, sizeof src, 0, 0, dev, dev));

  /* Device memory used by a region through is_device_ptr. */
#pragma omp target is_device_ptr(d2)
  for (int i = 0; i < N; i++) d2[i] += 1;

  printf("device to host with offsets: %d\n",
         omp_target_memcpy(back, d2, 8 * sizeof(int), 4 * sizeof(int), 16 * sizeof(int),
                           host, dev));
  for (int i = 0; i < 16; i++) printf("%d ", back[i]);
  printf("\n");
  printf("host to host: %d\n", omp_target_memcpy(back, src, sizeof src, 0, 0, host, host));
  printf("back[63]=%d\n", back[63]);
  omp_target_free(d1, dev);
  omp_target_free(d2, dev);
  omp_target_free(NULL, dev);

  /* Host memory from omp_target_alloc on the initial device. */
  int *h = omp_target_alloc(16, host);
  printf("initial-device alloc: %d\n", h != NULL);
  omp_target_free(h, host);
  printf("initial device is present: %d\n", omp_target_is_present(src, host));
  return 0;
}
