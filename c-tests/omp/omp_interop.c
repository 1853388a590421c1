/* The interop construct on a device without interop objects: init gives
 * omp_interop_none (as LLVM 19's host plugin does), destroy leaves it so, and the
 * property queries check the property id first (omp_irc_out_of_range). LLVM 19 crashes
 * on init(targetsync: ...) there and on in-range queries of omp_interop_none, so those
 * are not compared. */
#include <omp.h>
#include <stdio.h>

int main(void) {
  int dev = omp_get_default_device();
  int x = 1;
#pragma omp target map(tofrom : x)
  x += 1;
  printf("region ran: x=%d\n", x);

  omp_interop_t obj = omp_interop_none;
#pragma omp interop init(target : obj) device(dev)
  printf("init(target) gives omp_interop_none: %d\n", obj == omp_interop_none);
  omp_interop_t obj2 = omp_interop_none;
#pragma omp interop init(prefer_type("level_zero", "cuda"), target : obj2)
  printf("init on the default device gives omp_interop_none: %d\n",
         obj2 == omp_interop_none);

  int err = 7;
  omp_intptr_t i = omp_get_interop_int(obj, (omp_interop_property_t)3, &err);
  printf("int out of range: %ld, err %d\n", (long)i, err);
  err = 7;
  void *p = omp_get_interop_ptr(obj, (omp_interop_property_t)-20, &err);
  printf("ptr out of range: %d, err %d\n", p == NULL, err);
  err = 7;
  const char *s = omp_get_interop_str(obj, (omp_interop_property_t)0, &err);
  printf("str out of range: %d, err %d\n", s == NULL, err);
  printf("name: %d, type_desc: %d\n", omp_get_interop_name(obj, omp_ipr_fr_id) == NULL,
         omp_get_interop_type_desc(obj, omp_ipr_fr_id) == NULL);
#pragma omp interop destroy(obj) device(dev)
  printf("after destroy: %d\n", obj == omp_interop_none);
  return 0;
}
