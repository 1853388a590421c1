/* The deprecated region entry points of clang before 17 (__tgt_target, __tgt_target_teams
 * and their _mapper / _nowait forms), called directly with a region's ID taken from the
 * host entry table (section omp_offloading_entries). They pass a version-1 kernel
 * argument record, which has no implicit dyn_ptr argument: clang 19's kernel takes one
 * first, so a literal placeholder is passed first and the kernel still sees (x, n). */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct offload_entry {
  void *addr;
  char *name;
  size_t size;
  int32_t flags;
  int32_t reserved;
};
extern struct offload_entry __start_omp_offloading_entries[] __attribute__((weak));
extern struct offload_entry __stop_omp_offloading_entries[] __attribute__((weak));

int __tgt_target(int64_t, void *, int32_t, void **, void **, int64_t *, int64_t *);
int __tgt_target_mapper(void *, int64_t, void *, int32_t, void **, void **, int64_t *,
                        int64_t *, void **, void **);
int __tgt_target_nowait(int64_t, void *, int32_t, void **, void **, int64_t *, int64_t *,
                        int32_t, void *, int32_t, void *);
int __tgt_target_nowait_mapper(void *, int64_t, void *, int32_t, void **, void **,
                               int64_t *, int64_t *, void **, void **, int32_t, void *,
                               int32_t, void *);
int __tgt_target_teams(int64_t, void *, int32_t, void **, void **, int64_t *, int64_t *,
                       int32_t, int32_t);
int __tgt_target_teams_mapper(void *, int64_t, void *, int32_t, void **, void **,
                              int64_t *, int64_t *, void **, void **, int32_t, int32_t);
int __tgt_target_teams_nowait(int64_t, void *, int32_t, void **, void **, int64_t *,
                              int64_t *, int32_t, int32_t, int32_t, void *, int32_t,
                              void *);
int __tgt_target_teams_nowait_mapper(void *, int64_t, void *, int32_t, void **, void **,
                                     int64_t *, int64_t *, void **, void **, int32_t,
                                     int32_t, int32_t, void *, int32_t, void *);

void legacy_region(int *x, int n) {
#pragma omp target map(tofrom : x[0 : 4]) firstprivate(n)
  {
    x[0] += n;
    x[3] = x[0] * 2;
  }
}

int main(void) {
  int x[4] = {1, 2, 3, 4};
  legacy_region(x, 10);
  printf("through the pragma: %d %d\n", x[0], x[3]);

  void *id = NULL;
  for (struct offload_entry *e = __start_omp_offloading_entries;
       e < __stop_omp_offloading_entries; e++)
    if (e->size == 0 && strstr(e->name, "_legacy_region_")) id = e->addr;
  printf("region found: %d\n", id != NULL);

  /* placeholder for dyn_ptr, then x (tofrom, target param), then n (literal). */
  void *bases[3] = {NULL, x, (void *)(intptr_t)1};
  void *begins[3] = {NULL, x, (void *)(intptr_t)1};
  int64_t sizes[3] = {0, sizeof x, sizeof(int)};
  int64_t types[3] = {0x120, 0x23, 0x120};
  int dev = omp_get_default_device();

  printf("__tgt_target: %d", __tgt_target(dev, id, 3, bases, begins, sizes, types));
  printf(" -> %d %d\n", x[0], x[3]);
  printf("__tgt_target_mapper: %d",
         __tgt_target_mapper(NULL, dev, id, 3, bases, begins, sizes, types, NULL, NULL));
  printf(" -> %d %d\n", x[0], x[3]);
  printf("__tgt_target_nowait: %d",
         __tgt_target_nowait(-1, id, 3, bases, begins, sizes, types, 0, NULL, 0, NULL));
  printf(" -> %d %d\n", x[0], x[3]);
  printf("__tgt_target_nowait_mapper: %d",
         __tgt_target_nowait_mapper(NULL, dev, id, 3, bases, begins, sizes, types, NULL,
                                    NULL, 0, NULL, 0, NULL));
  printf(" -> %d %d\n", x[0], x[3]);
  printf("__tgt_target_teams: %d",
         __tgt_target_teams(dev, id, 3, bases, begins, sizes, types, 2, 4));
  printf(" -> %d %d\n", x[0], x[3]);
  printf("__tgt_target_teams_mapper: %d",
         __tgt_target_teams_mapper(NULL, dev, id, 3, bases, begins, sizes, types, NULL,
                                   NULL, 1, 1));
  printf(" -> %d %d\n", x[0], x[3]);
  printf("__tgt_target_teams_nowait: %d",
         __tgt_target_teams_nowait(dev, id, 3, bases, begins, sizes, types, 1, 1, 0, NULL,
                                   0, NULL));
  printf(" -> %d %d\n", x[0], x[3]);
  printf("__tgt_target_teams_nowait_mapper: %d",
         __tgt_target_teams_nowait_mapper(NULL, dev, id, 3, bases, begins, sizes, types,
                                          NULL, NULL, 1, 1, 0, NULL, 0, NULL));
  printf(" -> %d %d\n", x[0], x[3]);
  /* The initial device: not offloaded; the caller is told to run its host fallback. */
  printf("initial device: %d", __tgt_target(omp_get_initial_device(), id, 3, bases, begins,
                                            sizes, types));
  printf(" -> %d %d\n", x[0], x[3]);
  return 0;
}
