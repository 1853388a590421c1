/* The platforms and devices the library reports, with the information offload-check
 * shows and puts in its JSON. */
#ifndef OFFLOAD_CHECK_DEVICES_H
#define OFFLOAD_CHECK_DEVICES_H

#include <offload/liboffload.h>

#include <stddef.h>
#include <stdint.h>

#define MAX_DEVICES 64

typedef struct {
  int index; /* position in olIterateDevices' order, the number --device takes */
  ol_device_handle_t handle;
  ol_platform_handle_t platform;
  ol_platform_backend_t backend;
  uint32_t type;
  char platform_name[128];
  char platform_version[128];
  char name[256];
  char product_name[256];
  char vendor[256];
  char driver_version[128];
  uint64_t global_mem_size;
  uint64_t max_mem_alloc_size;
  uint64_t local_mem_size;
  uint32_t compute_units;
  uint32_t lanes;
  uint32_t max_clock_mhz;
  uint32_t memory_clock_mhz;
  uint32_t max_group_size;
  uint32_t max_group_size_per_dim[3];
  uint32_t address_bits;
  /* The first info query that failed, if one did ("" otherwise): shown, not fatal. */
  char info_error[400];
} device_t;

typedef struct {
  device_t items[MAX_DEVICES];
  size_t count;
  size_t host; /* index of the host device in items (always present) */
} device_list_t;

/* Fills `list` from olIterateDevices; false (with `why`) if the library refused. */
int collect_devices(device_list_t *list, char *why, size_t why_size);

const char *backend_name(ol_platform_backend_t backend);
const char *device_type_name(uint32_t type);

/* "#2 CUDA" and the like: a device's short label for table columns. */
void device_label(const device_t *device, char *out, size_t size);

#endif
