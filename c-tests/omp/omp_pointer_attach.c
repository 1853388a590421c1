/* Pointer attachment (PTR_AND_OBJ): a pointer inside a mapped struct, or a global
 * pointer, is made to point at the device copy of its pointee on the device, while the
 * host's pointer keeps its value even when the struct is copied back. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

struct vec {
  int n;
  double *data;
};

#define N 6

int *global_ptr;
#pragma omp declare target(global_ptr)

static void print_vec(const char *what, const struct vec *v, const double *expected) {
  printf("%s: pointer kept=%d data:", what, v->data == expected);
  for (int i = 0; i < v->n; i++) printf(" %.1f", v->data[i]);
  printf("\n");
}

int main(void) {
  double *storage = malloc(N * sizeof(double));
  for (int i = 0; i < N; i++) storage[i] = i;
  struct vec v = {N, storage};

  /* The struct and the array its member points to. */
#pragma omp target map(tofrom : v, v.data[0 : v.n])
  {
    for (int i = 0; i < v.n; i++) v.data[i] = v.data[i] * 2 + 1;
    v.n = v.n; /* the struct comes back too: its pointer must stay the host's */
  }
  print_vec("struct + pointee", &v, storage);

  /* A section of the pointee only. */
#pragma omp target map(to : v) map(tofrom : v.data[2 : 3])
  {
    for (int i = 2; i < 5; i++) v.data[i] = -v.data[i];
  }
  print_vec("section", &v, storage);

  /* Through a pointer to the struct. */
  struct vec *pv = &v;
#pragma omp target map(to : pv[0 : 1]) map(tofrom : pv->data[0 : N])
  {
    for (int i = 0; i < N; i++) pv->data[i] += 100;
  }
  print_vec("through pointer", &v, storage);

  /* Kept mapped across constructs: enter data, two regions, update, exit data. */
#pragma omp target enter data map(to : v, v.data[0 : v.n])
#pragma omp target
  {
    for (int i = 0; i < v.n; i++) v.data[i] = i * 10;
  }
  printf("host before update: %.1f\n", v.data[1]);
#pragma omp target update from(v.data[0 : v.n])
  print_vec("after update from", &v, storage);
  for (int i = 0; i < N; i++) storage[i] = 0.5;
#pragma omp target update to(v.data[0 : v.n])
#pragma omp target
  {
    for (int i = 0; i < v.n; i++) v.data[i] += 1;
  }
#pragma omp target exit data map(from : v.data[0 : v.n]) map(release : v)
  print_vec("after exit data", &v, storage);
  printf("pointee still mapped: %d\n",
         omp_target_is_present(storage, omp_get_default_device()));

  /* A declare-target global pointer: the device's global is attached. */
  int *ints = malloc(4 * sizeof(int));
  for (int i = 0; i < 4; i++) ints[i] = i + 1;
  global_ptr = ints;
#pragma omp target map(tofrom : global_ptr[0 : 4])
  {
    for (int i = 0; i < 4; i++) global_ptr[i] *= 7;
  }
  printf("global pointer kept=%d ints: %d %d %d %d\n", global_ptr == ints, ints[0], ints[1],
         ints[2], ints[3]);

  free(ints);
  free(storage);
  return 0;
}
