/* When a mapping counts as new, which decides whether `to` data is copied: LLVM 19 and
 * LLVM 22 alike look at the reference count alone. A declare mapper's first component
 * (and a struct member) counts no reference of its own; over a mapping an earlier
 * construct left at one reference it is new again each time, and copies; over a
 * mapping at two references it copies nothing, even where this very construct
 * allocated the mapping. */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>

void __tgt_target_data_begin_mapper(void *loc, int64_t device, int32_t count, void **bases,
                                    void **begins, int64_t *sizes, int64_t *types,
                                    void **names, void **mappers);
void __tgt_target_data_end_mapper(void *loc, int64_t device, int32_t count, void **bases,
                                  void **begins, int64_t *sizes, int64_t *types,
                                  void **names, void **mappers);

typedef struct {
  int x, y, z;
} pair_t;
#pragma omp declare mapper(pair_t p) map(tofrom : p.y)

/* Mapped implicitly through its mapper, whose first component (the struct) stays at one
 * reference after each region. */
typedef struct {
  int buffer, a, b;
} record_t;
#pragma omp declare mapper(record_t r) map(r, r.a, r.b)

pair_t s;
record_t g = {0, 1, 2};

static int device_int(const int *host_address) {
  int value = -1;
  const int *device = omp_get_mapped_ptr(host_address, omp_get_default_device());
  if (device)
    omp_target_memcpy(&value, device, sizeof(int), 0, 0, omp_get_initial_device(),
                      omp_get_default_device());
  return value;
}

static void set_device_int(const int *host_address, int value) {
  int *device = omp_get_mapped_ptr(host_address, omp_get_default_device());
  omp_target_memcpy(device, &value, sizeof(int), 0, 0, omp_get_default_device(),
                    omp_get_initial_device());
}

int main(void) {
  /* Without a device (a GPU program on a machine without that GPU) there is nothing to
   * look at: omp_get_mapped_ptr and omp_target_memcpy then act on the host's data. */
  if (omp_get_num_devices() < 1) {
    printf("no device\n");
    return 0;
  }
  /* A mapper's component over s.y, left at one reference by `alloc`. */
  s.y = 0;
#pragma omp target enter data map(alloc : s.y)
  set_device_int(&s.y, 0);
  s.y = 111;
#pragma omp target enter data map(to : s)
  printf("one reference: device s.y = %d\n", device_int(&s.y));
  s.y = 222;
#pragma omp target enter data map(to : s)
  printf("still one reference: device s.y = %d\n", device_int(&s.y));
#pragma omp target enter data map(alloc : s.y)
  s.y = 333;
#pragma omp target enter data map(to : s)
  printf("two references: device s.y = %d\n", device_int(&s.y));
#pragma omp target exit data map(delete : s.y)

  /* Two regions on a global mapped through its mapper: the second sees the host's new
   * values. */
  int sum = 0;
#pragma omp target map(from : sum)
  sum = g.a + g.b;
  printf("first region: %d\n", sum);
  g.a = 10;
  g.b = 20;
#pragma omp target map(from : sum)
  sum = g.a + g.b;
  printf("second region: %d\n", sum);

  /* One construct: alloc of v (new, one reference), to of v (two references, not
   * new), and v[1] as a member of the first entry: at two references nothing is
   * copied, although the construct allocated v. */
  int v[4] = {0x5eed0001, 0x5eed0002, 0x5eed0003, 0x5eed0004};
  void *bases[3] = {v, v, &v[1]}, *begins[3] = {v, v, &v[1]};
  int64_t sizes[3] = {sizeof(v), sizeof(v), sizeof(int)};
  int64_t types[3] = {0 /* alloc */, 1 /* to */, 1 | (INT64_C(1) << 48) /* to, member */};
  __tgt_target_data_begin_mapper(NULL, omp_get_default_device(), 3, bases, begins, sizes,
                                 types, NULL, NULL);
  int copied = 0;
  for (int i = 0; i < 4; i++)
    copied += device_int(&v[i]) == v[i];
  printf("copied into a mapping counted twice: %d of 4\n", copied);
  int64_t deletes[1] = {8 /* delete */};
  __tgt_target_data_end_mapper(NULL, omp_get_default_device(), 1, bases, begins, sizes,
                               deletes, NULL, NULL);
  printf("v present after delete: %d\n", omp_target_is_present(v, omp_get_default_device()));
  return 0;
}
