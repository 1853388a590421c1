/* target data, target enter/exit data and target update: reference counts decide when
 * data moves, as OpenMP 5.2 says; prints what the host sees at each step. */
#include <omp.h>
#include <stdio.h>

#define N 8

static void show(const char *what, const int *a) {
  printf("%s:", what);
  for (int i = 0; i < N; i++) printf(" %d", a[i]);
  printf("\n");
}

int main(void) {
  int dev = omp_get_default_device();
  int a[N];
  for (int i = 0; i < N; i++) a[i] = i;

#pragma omp target data map(tofrom : a)
  {
    printf("present in data region: %d\n", omp_target_is_present(a, dev));
    for (int i = 0; i < N; i++) a[i] = 100; /* host-only change, not copied */
#pragma omp target map(tofrom : a) /* already mapped: no copy either way */
    for (int i = 0; i < N; i++) a[i] += 1;
    show("inside, host copy", a);
#pragma omp target update from(a)
    show("after update from", a);
    for (int i = 0; i < N; i++) a[i] = 50 + i;
#pragma omp target update to(a)
#pragma omp target map(tofrom : a)
    for (int i = 0; i < N; i++) a[i] *= 2;
    for (int i = 0; i < N; i++) a[i] = -7;
  }
  show("after data region", a);
  printf("present after data region: %d\n", omp_target_is_present(a, dev));

  int b[N];
  for (int i = 0; i < N; i++) b[i] = i;
#pragma omp target enter data map(to : b)
#pragma omp target enter data map(to : b) /* second reference */
  printf("present after enter: %d\n", omp_target_is_present(b, dev));
#pragma omp target
  for (int i = 0; i < N; i++) b[i] += 1000;
#pragma omp target exit data map(from : b) /* one reference left: no copy */
  show("after first exit", b);
  printf("present after first exit: %d\n", omp_target_is_present(b, dev));
#pragma omp target exit data map(from : b) /* the last: copied back */
  show("after second exit", b);
  printf("present after second exit: %d\n", omp_target_is_present(b, dev));

  /* always forces the copy; delete drops every reference. */
  int c[N];
  for (int i = 0; i < N; i++) c[i] = i;
#pragma omp target enter data map(to : c)
#pragma omp target enter data map(alloc : c)
#pragma omp target
  for (int i = 0; i < N; i++) c[i] = 9;
#pragma omp target exit data map(always, from : c)
  show("always from with a reference left", c);
#pragma omp target exit data map(delete : c)
  printf("present after delete: %d\n", omp_target_is_present(c, dev));

  /* enter/exit data of an array section, release. */
  int d[N];
  for (int i = 0; i < N; i++) d[i] = i;
#pragma omp target enter data map(to : d[2 : 4])
  printf("section present: %d, outside it: %d\n", omp_target_is_present(&d[3], dev),
         omp_target_is_present(&d[7], dev));
#pragma omp target map(tofrom : d[2 : 4])
  for (int i = 2; i < 6; i++) d[i] = -d[i];
  show("section after region (still mapped)", d);
#pragma omp target update from(d[2 : 4])
  show("section after update", d);
#pragma omp target exit data map(release : d[2 : 4])
  printf("section present after release: %d\n", omp_target_is_present(&d[3], dev));

  /* The nowait forms: each a task, ordered by depend and finished by taskwait. */
  int e[N];
  for (int i = 0; i < N; i++) e[i] = i;
#pragma omp target enter data map(to : e) nowait depend(out : e)
#pragma omp target nowait depend(inout : e)
  for (int i = 0; i < N; i++) e[i] *= 3;
#pragma omp target update from(e) nowait depend(inout : e)
#pragma omp taskwait
  show("after nowait update", e);
#pragma omp target exit data map(delete : e) nowait depend(inout : e)
#pragma omp taskwait
  printf("present after nowait delete: %d\n", omp_target_is_present(e, dev));
  return 0;
}
