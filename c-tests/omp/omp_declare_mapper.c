/* declare mapper: the default mapper of a type and a named one, used by target
 * regions, target data, enter/exit data and target update, for one object and for an
 * array of objects. */
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  int n;
  double *data;
} vec_t;

#pragma omp declare mapper(vec_t v) map(tofrom : v, v.data[0 : v.n])
#pragma omp declare mapper(input : vec_t v) map(to : v, v.data[0 : v.n])

static vec_t make(int n, double first) {
  vec_t v = {n, malloc(n * sizeof(double))};
  for (int i = 0; i < n; i++) v.data[i] = first + i;
  return v;
}

static void print(const char *what, const vec_t *v) {
  printf("%s:", what);
  for (int i = 0; i < v->n; i++) printf(" %.1f", v->data[i]);
  printf("\n");
}

int main(void) {
  vec_t a = make(5, 1.0);
  double *kept = a.data;
#pragma omp target map(tofrom : a)
  {
    for (int i = 0; i < a.n; i++) a.data[i] *= 3;
  }
  print("default mapper", &a);
  printf("host pointer kept: %d\n", a.data == kept);

  /* The named mapper copies in only: the device's changes stay there. */
#pragma omp target map(mapper(input), tofrom : a)
  {
    for (int i = 0; i < a.n; i++) a.data[i] = -1;
  }
  print("input mapper", &a);

  /* An array of mapped objects: the mapper runs for each element. */
  vec_t many[3] = {make(2, 10.0), make(3, 20.0), make(1, 30.0)};
#pragma omp target map(tofrom : many)
  {
    for (int k = 0; k < 3; k++)
      for (int i = 0; i < many[k].n; i++) many[k].data[i] += 0.5;
  }
  for (int k = 0; k < 3; k++) print("element", &many[k]);

  /* target data + update through the mapper. */
  vec_t b = make(4, 0.0);
#pragma omp target data map(tofrom : b)
  {
#pragma omp target
    {
      for (int i = 0; i < b.n; i++) b.data[i] = 100 + i;
    }
    print("before update", &b);
#pragma omp target update from(b)
    print("after update from", &b);
    b.data[0] = 7;
#pragma omp target update to(b)
#pragma omp target
    { b.data[1] = b.data[0] * 2; }
  }
  print("after data region", &b);

  /* enter / exit data through the mapper. */
  vec_t c = make(3, 5.0);
#pragma omp target enter data map(to : c)
#pragma omp target
  {
    for (int i = 0; i < c.n; i++) c.data[i] *= c.data[i];
  }
#pragma omp target exit data map(from : c)
  print("enter/exit data", &c);

  free(a.data);
  free(b.data);
  free(c.data);
  for (int k = 0; k < 3; k++) free(many[k].data);
  return 0;
}
