/* The offload entries besides target regions: a `declare target` global (bound by name
 * to the image's copy, which stays mapped) and an `indirect` function (an entry of its
 * own in the table). clang-19 and clang-22 write these entries in different layouts. */
#include <stdio.h>

int counter = 5;
#pragma omp declare target to(counter)

int twice(int x) { return 2 * x; }
#pragma omp declare target indirect to(twice)

int main(void) {
  int r = 0;
#pragma omp target map(from : r)
  {
    r = twice(counter);
    counter = 7;
  }
  printf("before update: r=%d counter=%d\n", r, counter);
#pragma omp target update from(counter)
  printf("after update: counter=%d\n", counter);
  counter = 11;
#pragma omp target update to(counter)
#pragma omp target map(from : r)
  r = counter + 1;
  printf("device sees the host's update: r=%d\n", r);
  return 0;
}
