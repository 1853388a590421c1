/* The interop construct. On a GPU, init makes an object whose properties name the
 * vendor's device, context and (targetsync) stream, with LLVM 19's answers and return
 * codes; destroy ends it. On a device without interop objects (the host device, as LLVM
 * 19's host plugin) init gives omp_interop_none, destroy leaves it so, and the property
 * queries check the property id first (omp_irc_out_of_range). LLVM 19 crashes on
 * init(targetsync: ...) without an object and on in-range queries of omp_interop_none,
 * so those are not compared. Where no offload device exists (a GPU binary on a machine
 * without the GPU) LLVM makes an object without handles, which destroy leaves. Handles are printed as set or not (their values differ
 * from run to run). */
#include <omp.h>
#include <stdio.h>

static void show_object(omp_interop_t obj, const char *what) {
  int err = 7;
  long v = (long)omp_get_interop_int(obj, omp_ipr_fr_id, &err);
  printf("%s: fr_id %ld, err %d\n", what, v, err);
  v = (long)omp_get_interop_int(obj, omp_ipr_vendor, &err);
  printf("%s: vendor %ld, err %d\n", what, v, err);
  v = (long)omp_get_interop_int(obj, omp_ipr_device_num, &err);
  printf("%s: device_num %ld, err %d\n", what, v, err);
  v = (long)omp_get_interop_int(obj, omp_ipr_vendor_name, &err);
  printf("%s: vendor_name as int %ld, err %d\n", what, v, err);
  const char *s = omp_get_interop_str(obj, omp_ipr_fr_id, &err);
  printf("%s: fr_id as string %s, err %d\n", what, s ? s : "(null)", err);
  s = omp_get_interop_str(obj, omp_ipr_vendor_name, &err);
  printf("%s: vendor_name %s, err %d\n", what, s ? s : "(null)", err);
  s = omp_get_interop_str(obj, omp_ipr_fr_name, &err);
  printf("%s: fr_name %s, err %d\n", what, s ? s : "(null)", err);
  void *p = omp_get_interop_ptr(obj, omp_ipr_device_context, &err);
  printf("%s: context set %d, err %d\n", what, p != NULL, err);
  p = omp_get_interop_ptr(obj, omp_ipr_targetsync, &err);
  printf("%s: stream set %d, err %d\n", what, p != NULL, err);
  p = omp_get_interop_ptr(obj, omp_ipr_platform, &err);
  printf("%s: platform as pointer set %d, err %d\n", what, p != NULL, err);
}

int main(void) {
  int dev = omp_get_default_device();
  int x = 1;
#pragma omp target map(tofrom : x)
  x += 1;
  printf("region ran: x=%d\n", x);

  omp_interop_t obj = omp_interop_none;
#pragma omp interop init(target : obj) device(dev)
  int has_objects = obj != omp_interop_none;
  printf("init(target) gives an object: %d\n", has_objects);
  omp_interop_t obj2 = omp_interop_none;
#pragma omp interop init(prefer_type("level_zero", "cuda"), target : obj2)
  printf("init on the default device gives an object: %d\n", obj2 != omp_interop_none);
#pragma omp interop destroy(obj2)

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

  if (has_objects)
    show_object(obj, "target");
  /* A targetsync object of a device number that names no device has no queue, which LLVM
   * reads all the same (a crash): only where the device exists. */
  if (has_objects && dev < omp_get_num_devices()) {
    omp_interop_t sync = omp_interop_none;
#pragma omp interop init(targetsync : sync) device(dev)
    show_object(sync, "targetsync");
    int y = 0;
#pragma omp interop use(sync) device(dev)
#pragma omp target map(tofrom : y) device(dev)
    y = 5;
#pragma omp interop destroy(sync) device(dev)
    printf("after the targetsync object: y=%d, object none: %d\n", y, sync == omp_interop_none);
  }
#pragma omp interop destroy(obj) device(dev)
  printf("after destroy: %d\n", obj == omp_interop_none);
  return 0;
}
