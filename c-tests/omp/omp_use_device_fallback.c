/* use_device_ptr / use_device_addr on data that is not mapped: the lookup fails. LLVM
 * 19 hands back the arithmetic on NULL; LLVM 22 keeps the host address (OpenMP 5.1:
 * the item must then already be usable on the device). Mapped data gives its device
 * address either way. Only comparisons are printed. */
#include <stdio.h>

int main(void) {
  int x = 1;
  int arr[8] = {0};
  int *p = arr;
  void *const host_x = &x;
  void *const host_p = p;

#pragma omp target data use_device_addr(x)
  printf("unmapped addr: kept %d, null %d\n", (void *)&x == host_x, (void *)&x == NULL);

#pragma omp target data use_device_ptr(p)
  printf("unmapped ptr: kept %d, null %d\n", (void *)p == host_p, (void *)p == NULL);

#pragma omp target data map(to : arr) use_device_ptr(p)
  printf("mapped ptr: kept %d, null %d\n", (void *)p == host_p, (void *)p == NULL);

  int sum = 0;
#pragma omp target map(tofrom : sum) map(to : arr)
  for (int i = 0; i < 8; i++) sum += arr[i] + i;
  printf("sum %d\n", sum);
  return 0;
}
