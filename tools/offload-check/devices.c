/* Reading every device's information once, up front. */
#include "devices.h"

#include "result.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *backend_name(ol_platform_backend_t backend) {
  switch (backend) {
  case OL_PLATFORM_BACKEND_CUDA: return "CUDA";
  case OL_PLATFORM_BACKEND_AMDGPU: return "AMDGPU";
  case OL_PLATFORM_BACKEND_LEVEL_ZERO: return "LEVEL_ZERO";
  case OL_PLATFORM_BACKEND_HOST: return "HOST";
  case OL_PLATFORM_BACKEND_MPI: return "MPI";
  default: return "UNKNOWN";
  }
}

const char *device_type_name(uint32_t type) {
  switch (type) {
  case OL_DEVICE_TYPE_GPU: return "GPU";
  case OL_DEVICE_TYPE_CPU: return "CPU";
  case OL_DEVICE_TYPE_HOST: return "HOST";
  default: return "OTHER";
  }
}

void device_label(const device_t *device, char *out, size_t size) {
  snprintf(out, size, "#%d %s", device->index, backend_name(device->backend));
}

/* Keeps the first failed query's text; the value stays as initialised. */
static void note(device_t *device, ol_result_t call, const char *what) {
  if (call != OL_SUCCESS && device->info_error[0] == '\0')
    snprintf(device->info_error, sizeof device->info_error, "%s: %s", what, describe(call));
}

static void device_string(device_t *device, ol_device_info_t key, const char *what, char *out,
                          size_t size) {
  size_t needed = 0;
  ol_result_t r = olGetDeviceInfoSize(device->handle, key, &needed);
  char *value = NULL;
  if (r == OL_SUCCESS) {
    value = calloc(needed + 1, 1);
    if (value != NULL)
      r = olGetDeviceInfo(device->handle, key, needed, value);
  }
  if (r != OL_SUCCESS) {
    snprintf(out, size, "?");
    if (r->Code != OL_ERRC_UNSUPPORTED)
      note(device, r, what);
  } else {
    snprintf(out, size, "%s", value != NULL ? value : "?"); /* a long answer is cut */
  }
  free(value);
}

static void device_u32(device_t *device, ol_device_info_t key, const char *what, uint32_t *out) {
  ol_result_t r = olGetDeviceInfo(device->handle, key, sizeof *out, out);
  if (r != OL_SUCCESS && r->Code != OL_ERRC_UNSUPPORTED)
    note(device, r, what);
}

static void device_u64(device_t *device, ol_device_info_t key, const char *what, uint64_t *out) {
  ol_result_t r = olGetDeviceInfo(device->handle, key, sizeof *out, out);
  if (r != OL_SUCCESS && r->Code != OL_ERRC_UNSUPPORTED)
    note(device, r, what);
}

static void platform_string(device_t *device, ol_platform_info_t key, const char *what,
                            char *out, size_t size) {
  ol_result_t r = olGetPlatformInfo(device->platform, key, size, out);
  if (r != OL_SUCCESS) {
    snprintf(out, size, "?");
    note(device, r, what);
  }
  out[size - 1] = '\0';
}

static void read_info(device_t *device) {
  note(device,
       olGetDeviceInfo(device->handle, OL_DEVICE_INFO_PLATFORM, sizeof device->platform,
                       &device->platform),
       "olGetDeviceInfo(PLATFORM)");
  if (device->platform != NULL) {
    note(device,
         olGetPlatformInfo(device->platform, OL_PLATFORM_INFO_BACKEND, sizeof device->backend,
                           &device->backend),
         "olGetPlatformInfo(BACKEND)");
    platform_string(device, OL_PLATFORM_INFO_NAME, "olGetPlatformInfo(NAME)",
                    device->platform_name, sizeof device->platform_name);
    platform_string(device, OL_PLATFORM_INFO_VERSION, "olGetPlatformInfo(VERSION)",
                    device->platform_version, sizeof device->platform_version);
  }
  device_u32(device, OL_DEVICE_INFO_TYPE, "olGetDeviceInfo(TYPE)", &device->type);
  device_string(device, OL_DEVICE_INFO_NAME, "olGetDeviceInfo(NAME)", device->name,
                sizeof device->name);
  device_string(device, OL_DEVICE_INFO_PRODUCT_NAME, "olGetDeviceInfo(PRODUCT_NAME)",
                device->product_name, sizeof device->product_name);
  device_string(device, OL_DEVICE_INFO_VENDOR, "olGetDeviceInfo(VENDOR)", device->vendor,
                sizeof device->vendor);
  device_string(device, OL_DEVICE_INFO_DRIVER_VERSION, "olGetDeviceInfo(DRIVER_VERSION)",
                device->driver_version, sizeof device->driver_version);
  device_u64(device, OL_DEVICE_INFO_GLOBAL_MEM_SIZE, "olGetDeviceInfo(GLOBAL_MEM_SIZE)",
             &device->global_mem_size);
  device_u64(device, OL_DEVICE_INFO_MAX_MEM_ALLOC_SIZE, "olGetDeviceInfo(MAX_MEM_ALLOC_SIZE)",
             &device->max_mem_alloc_size);
  device_u64(device, OL_DEVICE_INFO_WORK_GROUP_LOCAL_MEM_SIZE,
             "olGetDeviceInfo(WORK_GROUP_LOCAL_MEM_SIZE)", &device->local_mem_size);
  device_u32(device, OL_DEVICE_INFO_NUM_COMPUTE_UNITS, "olGetDeviceInfo(NUM_COMPUTE_UNITS)",
             &device->compute_units);
  device_u32(device, OL_DEVICE_INFO_NUM_LANES, "olGetDeviceInfo(NUM_LANES)", &device->lanes);
  device_u32(device, OL_DEVICE_INFO_MAX_CLOCK_FREQUENCY, "olGetDeviceInfo(MAX_CLOCK_FREQUENCY)",
             &device->max_clock_mhz);
  device_u32(device, OL_DEVICE_INFO_MEMORY_CLOCK_RATE, "olGetDeviceInfo(MEMORY_CLOCK_RATE)",
             &device->memory_clock_mhz);
  device_u32(device, OL_DEVICE_INFO_MAX_WORK_GROUP_SIZE, "olGetDeviceInfo(MAX_WORK_GROUP_SIZE)",
             &device->max_group_size);
  ol_result_t r = olGetDeviceInfo(device->handle, OL_DEVICE_INFO_MAX_WORK_GROUP_SIZE_PER_DIMENSION,
                                  sizeof device->max_group_size_per_dim,
                                  device->max_group_size_per_dim);
  if (r != OL_SUCCESS && r->Code != OL_ERRC_UNSUPPORTED)
    note(device, r, "olGetDeviceInfo(MAX_WORK_GROUP_SIZE_PER_DIMENSION)");
  device_u32(device, OL_DEVICE_INFO_ADDRESS_BITS, "olGetDeviceInfo(ADDRESS_BITS)",
             &device->address_bits);
}

static bool add_device(ol_device_handle_t handle, void *user_data) {
  device_list_t *list = user_data;
  if (list->count < MAX_DEVICES) {
    device_t *device = &list->items[list->count];
    memset(device, 0, sizeof *device);
    device->index = (int)list->count;
    device->handle = handle;
    device->type = OL_DEVICE_TYPE_DEFAULT;
    list->count++;
  }
  return true;
}

int collect_devices(device_list_t *list, char *why, size_t why_size) {
  list->count = 0;
  ol_result_t r = olIterateDevices(add_device, list);
  if (r != OL_SUCCESS) {
    snprintf(why, why_size, "olIterateDevices: %s", describe(r));
    return 0;
  }
  list->host = list->count;
  for (size_t i = 0; i < list->count; ++i) {
    read_info(&list->items[i]);
    if (list->items[i].type == OL_DEVICE_TYPE_HOST && list->host == list->count)
      list->host = i;
  }
  if (list->host == list->count) {
    snprintf(why, why_size, "no host device among the %zu devices (the library always has one)",
             list->count);
    return 0;
  }
  return 1;
}
