/* Target code in a library the program opens with dlopen after start-up, the program
 * itself built without OpenMP: the library's constructor registers its image, and
 * liboffload starts from inside dlopen (on a remote device: MPI too, which another
 * thread could not do while the loader's lock is held). */
#ifdef MODULE
#include <stdio.h>

int region_sum(int n) {
  int sum = 0;
#pragma omp target map(tofrom : sum)
  for (int i = 1; i <= n; ++i)
    sum += i;
  return sum;
}
#else
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s LIBRARY\n", argv[0]);
    return 2;
  }
  void *library = dlopen(argv[1], RTLD_NOW);
  if (!library) {
    printf("dlopen failed: %s\n", dlerror());
    return 1;
  }
  int (*region_sum)(int) = (int (*)(int))dlsym(library, "region_sum");
  if (!region_sum) {
    printf("dlsym failed: %s\n", dlerror());
    return 1;
  }
  printf("sum from a region in a library opened later: %d\n", region_sum(100));
  return 0;
}
#endif
