/* Failures that must end the program as LLVM's libomptarget ends it: one case per
 * run, chosen by the first argument. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  const char *which = argc > 1 ? argv[1] : "";
  int a[4] = {1, 2, 3, 4};
  int b = 3;
  printf("case %s\n", which);
  fflush(stdout);
  if (!strcmp(which, "present-region")) {
#pragma omp target map(present, to : a) map(tofrom : b)
    { b += a[0]; }
  } else if (!strcmp(which, "present-enter")) {
#pragma omp target enter data map(present, to : a)
  } else if (!strcmp(which, "present-exit")) {
#pragma omp target exit data map(present, from : a)
  } else if (!strcmp(which, "present-update")) {
#pragma omp target update to(present : a)
  } else if (!strcmp(which, "extension")) {
#pragma omp target enter data map(to : a[0 : 2])
#pragma omp target map(tofrom : a[0 : 4])
    { a[3] = 0; }
  } else if (!strcmp(which, "bad-device")) {
#pragma omp target device(42) map(tofrom : b)
    { b = 1; }
  } else {
    printf("unknown case\n");
    return 2;
  }
  printf("not reached: %d %d\n", a[0], b);
  return 0;
}
