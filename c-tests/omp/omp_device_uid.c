/* The routines LLVM 22's libomptarget added for OpenMP 6.0 and 5.1: device UIDs
 * (omp_get_uid_from_device, omp_get_device_from_uid) and omp_target_is_accessible.
 * Built by clang-22 only (clang-19's omp.h lacks them). UIDs are implementation
 * defined, so what is printed is what OpenMP fixes: the initial device's, the round
 * trip, and the invalid cases. */
#include <omp.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  int num = omp_get_num_devices();
  int host = omp_get_initial_device();
  const char *host_uid = omp_get_uid_from_device(host);
  printf("initial device uid: %s\n", host_uid ? host_uid : "(null)");
  printf("initial device from its uid: %d\n", omp_get_device_from_uid(host_uid) == host);
  printf("invalid device has no uid: %d\n",
         omp_get_uid_from_device(omp_invalid_device) == NULL);

  int round_trips = 1, distinct = 1;
  for (int d = 0; d < num; d++) {
    const char *uid = omp_get_uid_from_device(d);
    if (uid == NULL || omp_get_device_from_uid(uid) != d) round_trips = 0;
    if (uid != NULL && host_uid != NULL && strcmp(uid, host_uid) == 0) distinct = 0;
  }
  printf("every device's uid names it: %d, none is the host's: %d\n", round_trips,
         distinct);
  printf("unknown uid: %d, NULL uid: %d\n", omp_get_device_from_uid("no such device"),
         omp_get_device_from_uid(NULL));

  int x[4] = {1, 2, 3, 4};
  /* -1 is OpenMP 6.0's omp_initial_device (LLVM 22's omp.h does not define it yet). */
  printf("accessible from the initial device: %d, from device -1: %d\n",
         omp_target_is_accessible(x, sizeof x, host),
         omp_target_is_accessible(x, sizeof x, -1));
  printf("NULL is not accessible: %d\n", !omp_target_is_accessible(NULL, 4, host));
  /* Accessibility from an offload device is not guaranteed for plain host memory on
   * either runtime's host device (LLVM 22's host plugin says 0; so does ours). */
  if (num > 0)
    printf("host memory accessible from device 0: %d\n",
           omp_target_is_accessible(x, sizeof x, 0));

  int sum = 0;
#pragma omp target map(to : x) map(tofrom : sum)
  for (int i = 0; i < 4; i++) sum += x[i];
  printf("sum on the device: %d\n", sum);
  return 0;
}
