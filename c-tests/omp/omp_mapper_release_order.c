/* A construct releases the same mapping more than once: a pointer variable mapped
 * tofrom and alloc, and attached to its pointee by a declare mapper. The copy back of
 * the pointer brings the device address; the host's own value must be restored after it
 * (LLVM frees an entry only after its last user in the construct, so that user's
 * restore still happens). */
#include <stdio.h>

typedef struct {
  int n;
  int *v;
} vec_t;
#pragma omp declare mapper(vec_t w) map(tofrom : w, w.v[0 : w.n])

int main(void) {
  int data[4] = {1, 2, 3, 4};
  vec_t vec = {4, data};
  vec_t *vp = &vec;
  vec_t **vpp = &vp;
#pragma omp target map(tofrom : vpp[0][0]) map(alloc : vpp[0])
  {
    vpp[0][0].v[2] = 30;
    vpp[0][0].n = 3;
  }
  printf("vp still points to vec: %d\n", vp == &vec);
  printf("vec.n %d, vec.v is data: %d\n", vec.n, vec.v == data);
  printf("data: %d %d %d %d\n", data[0], data[1], data[2], data[3]);
  return 0;
}
