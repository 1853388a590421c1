/* A struct whose pointer member was attached to its pointee on the device, then copied
 * to the device again (always, or a second `to` of the same struct in one construct):
 * LLVM 22 skips such a copy, so the attached device pointer survives (and the other
 * members keep their device values); LLVM 19 copies the host bytes over it. */
#include <stdio.h>

struct holder {
  int tag;
  int *data;
};

int main(void) {
  int values[4] = {1, 2, 3, 4};
  struct holder h = {1, values};
  int tag = 0, second = 0;
#pragma omp target enter data map(to : h, h.data[0 : 4])
  h.tag = 2;
#pragma omp target map(always, to : h) map(from : tag, second)
  {
    tag = h.tag;
    second = h.data[1];
  }
  printf("tag seen on the device: %d, data[1]: %d\n", tag, second);
#pragma omp target exit data map(delete : h, h.data[0 : 4])

  /* Written through the pointer on the device: into the device copy when the pointer
   * stayed attached (brought back by `from`), else into the host array (then overwritten
   * by that same `from`). */
  struct holder g = {7, values};
#pragma omp target map(tofrom : g, g.data[0 : 4]) map(to : g)
  g.data[0] = 99;
  printf("values[0] after the region: %d\n", values[0]);
  return 0;
}
