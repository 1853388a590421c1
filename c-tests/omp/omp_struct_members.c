/* Struct members mapped on their own (MEMBER_OF): a struct's mapping covers only the
 * members named, each member's to/from happens once, the struct's other members are
 * never copied, and a struct mapped whole makes later member maps reuse its copy. */
#include <omp.h>
#include <stdio.h>

struct particle {
  double x, y;
  int id;
  double mass;
};

struct grid {
  int n;
  int cells[8];
  double scale;
};

static void print_particle(const char *what, const struct particle *p) {
  printf("%s: x=%.1f y=%.1f id=%d mass=%.1f\n", what, p->x, p->y, p->id, p->mass);
}

int main(void) {
  struct particle p = {1.0, 2.0, 7, 10.0};

  /* Two members of four: y and id are not mapped, so the device's changes to them
   * (on its uninitialised copy of the gap) never reach the host. */
#pragma omp target map(tofrom : p.x, p.mass)
  {
    p.x += 0.5;
    p.mass *= 2.0;
  }
  print_particle("members x,mass", &p);

  /* to for one member, from for another. */
#pragma omp target map(to : p.x) map(from : p.y)
  { p.y = p.x * 10.0; }
  print_particle("to x, from y", &p);

  /* An array member's section. */
  struct grid g = {8, {0, 1, 2, 3, 4, 5, 6, 7}, 0.5};
#pragma omp target map(to : g.n, g.scale) map(tofrom : g.cells[2 : 4])
  {
    for (int i = 2; i < 6; i++) g.cells[i] = (int)(g.cells[i] * g.scale * 100) + g.n;
  }
  printf("cells:");
  for (int i = 0; i < 8; i++) printf(" %d", g.cells[i]);
  printf("\n");

  /* The whole struct mapped by target data; members mapped inside reuse its copy,
   * so nothing moves until the data region ends. */
#pragma omp target data map(tofrom : g)
  {
#pragma omp target map(tofrom : g.cells[0 : 8])
    for (int i = 0; i < 8; i++) g.cells[i] = -g.cells[i];
    printf("inside data region, host still sees cells[0]=%d\n", g.cells[0]);
#pragma omp target map(always, from : g.scale)
    { g.scale = 4.0; }
    printf("always from: scale=%.1f\n", g.scale);
  }
  printf("after data region:");
  for (int i = 0; i < 8; i++) printf(" %d", g.cells[i]);
  printf("\n");

  /* enter/exit data with members, reference counted through the struct. */
  struct particle q = {3.0, 4.0, 9, 1.0};
#pragma omp target enter data map(to : q.x, q.y)
#pragma omp target map(tofrom : q.x)
  { q.x = q.x + q.y; }
  printf("while mapped: x=%.1f (device copy stays)\n", q.x);
#pragma omp target exit data map(from : q.x) map(release : q.y)
  print_particle("after exit data", &q);
  printf("q.x present after exit: %d\n", omp_target_is_present(&q.x, omp_get_default_device()));
  return 0;
}
