/* liboffload helpers shared by the benchmarks: stop on error, find the host device (and
 * the first remote one); bench_file.h reads a device image. */
#ifndef OFFLOAD_BENCH_OFFLOAD_UTIL_H
#define OFFLOAD_BENCH_OFFLOAD_UTIL_H

#include <offload/liboffload.h>
#include "bench_file.h"
#include <stdio.h>
#include <stdlib.h>

static inline void check(ol_result_t r, const char *what) {
  if (r != OL_SUCCESS) {
    fprintf(stderr, "%s failed: %s\n", what, r->Details);
    exit(1);
  }
}

/* olIterateDevices callback: stores the host device in *(ol_device_handle_t *)user_data. */
static inline bool find_host(ol_device_handle_t device, void *user_data) {
  ol_device_type_t type = 0;
  check(olGetDeviceInfo(device, OL_DEVICE_INFO_TYPE, sizeof type, &type), "olGetDeviceInfo");
  if (type == OL_DEVICE_TYPE_HOST)
    *(ol_device_handle_t *)user_data = device;
  return true;
}

/* The first remote (MPI) device and the host device. */
struct remote_and_host {
  ol_device_handle_t remote, host;
};

/* olIterateDevices callback: fills the struct remote_and_host at user_data. */
static inline bool find_remote_and_host(ol_device_handle_t device, void *user_data) {
  struct remote_and_host *found = user_data;
  ol_platform_handle_t platform = NULL;
  ol_platform_backend_t backend = OL_PLATFORM_BACKEND_UNKNOWN;
  check(olGetDeviceInfo(device, OL_DEVICE_INFO_PLATFORM, sizeof platform, &platform),
        "olGetDeviceInfo");
  check(olGetPlatformInfo(platform, OL_PLATFORM_INFO_BACKEND, sizeof backend, &backend),
        "olGetPlatformInfo");
  if (backend == OL_PLATFORM_BACKEND_MPI && !found->remote) found->remote = device;
  if (backend == OL_PLATFORM_BACKEND_HOST) found->host = device;
  return true;
}

/* The start of a remote benchmark run as `mpirun -np 1 offload-mpi-device : -np 1 prog
 * bench_kernels.so`: checks the command line, initialises liboffload and finds the
 * devices. Answers 0, or the exit status: 2 for a wrong command line, 77 (skipped)
 * without a remote device. */
static inline int start_remote_bench(int argc, char **argv, struct remote_and_host *found) {
  if (argc != 2) {
    fprintf(stderr, "usage: mpirun -np 1 offload-mpi-device : -np 1 %s bench_kernels.so\n",
            argv[0]);
    return 2;
  }
  check(olInit(), "olInit");
  check(olIterateDevices(find_remote_and_host, found), "olIterateDevices");
  if (!found->remote) {
    printf("skipped: no remote device (run under mpirun with offload-mpi-device)\n");
    return 77;
  }
  return 0;
}

#endif
