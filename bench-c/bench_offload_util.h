/* liboffload helpers shared by the benchmarks: stop on error, find the host device. */
#ifndef OFFLOAD_BENCH_OFFLOAD_UTIL_H
#define OFFLOAD_BENCH_OFFLOAD_UTIL_H

#include <offload/liboffload.h>
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

#endif
