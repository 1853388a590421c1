/* Lists every platform and device with all of its properties, like clinfo. */
#include <offload/liboffload.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum kind { STRING, U32, U64, HANDLE, DIMS, BACKEND, DEVICE_TYPE, FP_FLAGS };

struct key {
  uint32_t id;
  const char *name;
  enum kind kind;
};

static const struct key platform_keys[] = {
    {OL_PLATFORM_INFO_NAME, "NAME", STRING},
    {OL_PLATFORM_INFO_VENDOR_NAME, "VENDOR_NAME", STRING},
    {OL_PLATFORM_INFO_VERSION, "VERSION", STRING},
    {OL_PLATFORM_INFO_BACKEND, "BACKEND", BACKEND},
};

static const struct key device_keys[] = {
    {OL_DEVICE_INFO_TYPE, "TYPE", DEVICE_TYPE},
    {OL_DEVICE_INFO_PLATFORM, "PLATFORM", HANDLE},
    {OL_DEVICE_INFO_NAME, "NAME", STRING},
    {OL_DEVICE_INFO_PRODUCT_NAME, "PRODUCT_NAME", STRING},
    {OL_DEVICE_INFO_UID, "UID", STRING},
    {OL_DEVICE_INFO_VENDOR, "VENDOR", STRING},
    {OL_DEVICE_INFO_DRIVER_VERSION, "DRIVER_VERSION", STRING},
    {OL_DEVICE_INFO_MAX_WORK_GROUP_SIZE, "MAX_WORK_GROUP_SIZE", U32},
    {OL_DEVICE_INFO_MAX_WORK_GROUP_SIZE_PER_DIMENSION, "MAX_WORK_GROUP_SIZE_PER_DIMENSION", DIMS},
    {OL_DEVICE_INFO_MAX_WORK_SIZE, "MAX_WORK_SIZE", U32},
    {OL_DEVICE_INFO_MAX_WORK_SIZE_PER_DIMENSION, "MAX_WORK_SIZE_PER_DIMENSION", DIMS},
    {OL_DEVICE_INFO_VENDOR_ID, "VENDOR_ID", U32},
    {OL_DEVICE_INFO_NUM_COMPUTE_UNITS, "NUM_COMPUTE_UNITS", U32},
    {OL_DEVICE_INFO_MAX_CLOCK_FREQUENCY, "MAX_CLOCK_FREQUENCY (MHz)", U32},
    {OL_DEVICE_INFO_MEMORY_CLOCK_RATE, "MEMORY_CLOCK_RATE (MHz)", U32},
    {OL_DEVICE_INFO_ADDRESS_BITS, "ADDRESS_BITS", U32},
    {OL_DEVICE_INFO_MAX_MEM_ALLOC_SIZE, "MAX_MEM_ALLOC_SIZE (bytes)", U64},
    {OL_DEVICE_INFO_GLOBAL_MEM_SIZE, "GLOBAL_MEM_SIZE (bytes)", U64},
    {OL_DEVICE_INFO_WORK_GROUP_LOCAL_MEM_SIZE, "WORK_GROUP_LOCAL_MEM_SIZE (bytes)", U64},
    {OL_DEVICE_INFO_SINGLE_FP_CONFIG, "SINGLE_FP_CONFIG", FP_FLAGS},
    {OL_DEVICE_INFO_DOUBLE_FP_CONFIG, "DOUBLE_FP_CONFIG", FP_FLAGS},
    {OL_DEVICE_INFO_HALF_FP_CONFIG, "HALF_FP_CONFIG", FP_FLAGS},
    {OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_CHAR, "NATIVE_VECTOR_WIDTH_CHAR", U32},
    {OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_SHORT, "NATIVE_VECTOR_WIDTH_SHORT", U32},
    {OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_INT, "NATIVE_VECTOR_WIDTH_INT", U32},
    {OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_LONG, "NATIVE_VECTOR_WIDTH_LONG", U32},
    {OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_FLOAT, "NATIVE_VECTOR_WIDTH_FLOAT", U32},
    {OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_DOUBLE, "NATIVE_VECTOR_WIDTH_DOUBLE", U32},
    {OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_HALF, "NATIVE_VECTOR_WIDTH_HALF", U32},
    {OL_DEVICE_INFO_NUM_LANES, "NUM_LANES (extension)", U32},
};

/* The names of ol_device_fp_capability_flag_t's flags, lowest bit first. */
static const char *const fp_flag_names[] = {
    "CORRECTLY_ROUNDED_DIVIDE_SQRT", "ROUND_TO_NEAREST", "ROUND_TO_ZERO", "ROUND_TO_INF",
    "INF_NAN", "DENORM", "FMA", "SOFT_FLOAT"};

static void print_fp_flags(uint32_t flags) {
  const char *separator = "";
  if (flags == 0)
    printf("(none)");
  for (size_t bit = 0; bit < sizeof fp_flag_names / sizeof fp_flag_names[0]; ++bit)
    if (flags & (1u << bit)) {
      printf("%s%s", separator, fp_flag_names[bit]);
      separator = " | ";
    }
  if (flags >> (sizeof fp_flag_names / sizeof fp_flag_names[0]))
    printf("%s0x%" PRIx32, separator, flags);
  printf("\n");
}

static const char *backend_name(uint32_t backend) {
  switch (backend) {
  case OL_PLATFORM_BACKEND_UNKNOWN: return "UNKNOWN";
  case OL_PLATFORM_BACKEND_CUDA: return "CUDA";
  case OL_PLATFORM_BACKEND_AMDGPU: return "AMDGPU";
  case OL_PLATFORM_BACKEND_LEVEL_ZERO: return "LEVEL_ZERO";
  case OL_PLATFORM_BACKEND_HOST: return "HOST";
  case OL_PLATFORM_BACKEND_MPI: return "MPI";
  default: return "?";
  }
}

static const char *device_type_name(uint32_t type) {
  switch (type) {
  case OL_DEVICE_TYPE_DEFAULT: return "DEFAULT";
  case OL_DEVICE_TYPE_ALL: return "ALL";
  case OL_DEVICE_TYPE_GPU: return "GPU";
  case OL_DEVICE_TYPE_CPU: return "CPU";
  case OL_DEVICE_TYPE_HOST: return "HOST";
  default: return "?";
  }
}

/* Prints one property, whose value `get` writes; `size` is what the Size query said. */
static void print_value(const struct key *key, ol_result_t size_result, size_t size,
                        ol_result_t (*get)(void *, uint32_t, size_t, void *), void *object) {
  printf("    %-36s ", key->name);
  if (size_result != OL_SUCCESS) {
    if (size_result->Code == OL_ERRC_UNSUPPORTED)
      printf("(unsupported)\n");
    else
      printf("(error: %s)\n", size_result->Details);
    return;
  }
  unsigned char *value = malloc(size);
  if (value == NULL) {
    printf("(out of memory)\n");
    return;
  }
  ol_result_t r = get(object, key->id, size, value);
  if (r != OL_SUCCESS) {
    printf("(error: %s)\n", r->Details);
  } else {
    uint32_t u32;
    uint64_t u64;
    void *handle;
    uint32_t dims[3];
    switch (key->kind) {
    case STRING: printf("%s\n", (const char *)value); break;
    case U32: memcpy(&u32, value, sizeof u32); printf("%" PRIu32 "\n", u32); break;
    case U64: memcpy(&u64, value, sizeof u64); printf("%" PRIu64 "\n", u64); break;
    case HANDLE: memcpy(&handle, value, sizeof handle); printf("%p\n", handle); break;
    case DIMS:
      memcpy(dims, value, sizeof dims);
      printf("%" PRIu32 " x %" PRIu32 " x %" PRIu32 "\n", dims[0], dims[1], dims[2]);
      break;
    case BACKEND: memcpy(&u32, value, sizeof u32); printf("%s\n", backend_name(u32)); break;
    case DEVICE_TYPE: memcpy(&u32, value, sizeof u32); printf("%s\n", device_type_name(u32)); break;
    case FP_FLAGS: memcpy(&u32, value, sizeof u32); print_fp_flags(u32); break;
    }
  }
  free(value);
}

static ol_result_t get_platform(void *p, uint32_t key, size_t size, void *out) {
  return olGetPlatformInfo((ol_platform_handle_t)p, key, size, out);
}
static ol_result_t get_device(void *d, uint32_t key, size_t size, void *out) {
  return olGetDeviceInfo((ol_device_handle_t)d, key, size, out);
}

static bool print_device(ol_device_handle_t device, void *user_data) {
  ol_platform_handle_t platform = (ol_platform_handle_t)user_data, owner = NULL;
  if (olGetDeviceInfo(device, OL_DEVICE_INFO_PLATFORM, sizeof owner, &owner) != OL_SUCCESS ||
      owner != platform)
    return true; /* another platform's device */
  printf("  Device %p\n", (void *)device);
  for (size_t i = 0; i < sizeof device_keys / sizeof device_keys[0]; ++i) {
    size_t size = 0;
    ol_result_t r = olGetDeviceInfoSize(device, device_keys[i].id, &size);
    print_value(&device_keys[i], r, size, get_device, device);
  }
  return true;
}

static bool print_platform(ol_platform_handle_t platform, void *user_data) {
  int *count = (int *)user_data;
  printf("Platform #%d (%p)\n", (*count)++, (void *)platform);
  for (size_t i = 0; i < sizeof platform_keys / sizeof platform_keys[0]; ++i) {
    size_t size = 0;
    ol_result_t r = olGetPlatformInfoSize(platform, platform_keys[i].id, &size);
    print_value(&platform_keys[i], r, size, get_platform, platform);
  }
  ol_result_t r = olIterateDevices(print_device, platform);
  if (r != OL_SUCCESS)
    printf("  (listing devices failed: %s)\n", r->Details);
  return true;
}

int main(void) {
  ol_result_t r = olInit();
  if (r != OL_SUCCESS) {
    fprintf(stderr, "olInit failed: %s\n", r->Details);
    return 1;
  }
  uint32_t major = 0, minor = 0, patch = 0;
  olGetVersion(&major, &minor, &patch);
  /* The header carries the library's version (LIBOFFLOAD_VERSION_*) and the version of
   * LLVM's offload API it implements (OL_VERSION_*). */
  printf("liboffload %u.%u.%u (header %d.%d.%d, LLVM offload API %d.%d.%d)\n\n", major, minor,
         patch, LIBOFFLOAD_VERSION_MAJOR, LIBOFFLOAD_VERSION_MINOR, LIBOFFLOAD_VERSION_PATCH,
         OL_VERSION_MAJOR, OL_VERSION_MINOR, OL_VERSION_PATCH);
  int platforms = 0;
  r = olIteratePlatforms(print_platform, &platforms);
  if (r != OL_SUCCESS) {
    fprintf(stderr, "olIteratePlatforms failed: %s\n", r->Details);
    return 1;
  }
  printf("\n%d platform(s)\n", platforms);
  olShutDown();
  return 0;
}
