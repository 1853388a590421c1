/* A `declare target` global queried through the device routines before any construct
 * ran. LLVM 22 loads the program's images onto a device as soon as a routine names it,
 * so the global is present and its device copy readable; LLVM 19 loads them at the
 * first construct. Only comparisons and values are printed. */
#include <omp.h>
#include <stdio.h>

#pragma omp declare target
int counter = 7;
#pragma omp end declare target

int main(void) {
  int dev = omp_get_default_device();
  int host = omp_get_initial_device();
  printf("present before any construct: %d\n", omp_target_is_present(&counter, dev));
  void *mapped = omp_get_mapped_ptr(&counter, dev);
  printf("mapped before any construct: %d\n", mapped != NULL);
  int value = -1;
  if (mapped && omp_target_memcpy(&value, mapped, sizeof value, 0, 0, host, dev) == 0)
    printf("device copy holds %d\n", value);

#pragma omp target
  counter += 1;
#pragma omp target update from(counter)
  printf("after one region: %d, present %d\n", counter, omp_target_is_present(&counter, dev));
  return 0;
}
