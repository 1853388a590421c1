/* Platforms and devices: iteration, every info key with its Size variant, the size
 * rules (too small or 0: INVALID_SIZE, nothing written), and every bad argument. */
#include "offload_test.h"

#define CANARY 0xa5

#define MAX_PLATFORMS 16

typedef struct {
  ol_platform_handle_t platforms[MAX_PLATFORMS];
  size_t count;
  size_t stop_after; /* 0: never stop */
} platform_list_t;

static bool collect_platform(ol_platform_handle_t platform, void *user_data) {
  platform_list_t *list = (platform_list_t *)user_data;
  if (list->count < MAX_PLATFORMS)
    list->platforms[list->count] = platform;
  ++list->count;
  return list->stop_after == 0 || list->count < list->stop_after;
}

static bool buffer_is(const unsigned char *buffer, size_t from, size_t to, unsigned char value) {
  for (size_t i = from; i < to; ++i)
    if (buffer[i] != value)
      return false;
  return true;
}

enum value_kind { KIND_STRING, KIND_U32, KIND_U64, KIND_HANDLE, KIND_DIMS };

static size_t kind_size(enum value_kind kind, size_t string_size) {
  switch (kind) {
  case KIND_STRING: return string_size;
  case KIND_U32: return sizeof(uint32_t);
  case KIND_U64: return sizeof(uint64_t);
  case KIND_HANDLE: return sizeof(void *);
  case KIND_DIMS: return sizeof(ol_dimensions_t);
  }
  return 0;
}

/* The size rules for a value that needs `needed` bytes, queried through `get`. */
typedef ol_result_t (*get_fn)(void *object, uint32_t key, size_t size, void *out);

static void check_size_rules(get_fn get, void *object, uint32_t key, size_t needed,
                             const char *what) {
  unsigned char buffer[512];
  if (needed == 0 || needed > sizeof buffer - 16) {
    CHECK(!"a value size between 1 and 496 bytes");
    fprintf(stderr, "    %s key %u needs %zu bytes\n", what, key, needed);
    return;
  }
  /* Exactly enough: written, nothing past it. */
  memset(buffer, CANARY, sizeof buffer);
  CHECK_OK(get(object, key, needed, buffer));
  CHECK(buffer_is(buffer, needed, sizeof buffer, CANARY));
  /* More than enough: the same. */
  memset(buffer, CANARY, sizeof buffer);
  CHECK_OK(get(object, key, sizeof buffer, buffer));
  CHECK(buffer_is(buffer, needed, sizeof buffer, CANARY));
  /* One byte short, and 0: INVALID_SIZE, nothing written. */
  memset(buffer, CANARY, sizeof buffer);
  if (!check_result(get(object, key, needed - 1, buffer), OL_ERRC_INVALID_SIZE, what,
                    __FILE__, __LINE__))
    fprintf(stderr, "    (key %u, PropSize %zu)\n", key, needed - 1);
  CHECK(buffer_is(buffer, 0, sizeof buffer, CANARY));
  CHECK_ERR(INVALID_SIZE, get(object, key, 0, buffer));
  CHECK(buffer_is(buffer, 0, sizeof buffer, CANARY));
  /* NULL PropValue. */
  CHECK_ERR(INVALID_NULL_POINTER, get(object, key, needed, NULL));
}

static ol_result_t get_platform(void *p, uint32_t key, size_t size, void *out) {
  return olGetPlatformInfo((ol_platform_handle_t)p, key, size, out);
}
static ol_result_t get_device(void *d, uint32_t key, size_t size, void *out) {
  return olGetDeviceInfo((ol_device_handle_t)d, key, size, out);
}

/* ---- platforms ---- */

static const struct {
  ol_platform_info_t key;
  enum value_kind kind;
} platform_keys[] = {
    {OL_PLATFORM_INFO_NAME, KIND_STRING},
    {OL_PLATFORM_INFO_VENDOR_NAME, KIND_STRING},
    {OL_PLATFORM_INFO_VERSION, KIND_STRING},
    {OL_PLATFORM_INFO_BACKEND, KIND_U32},
};

static void check_platform(ol_platform_handle_t platform) {
  for (size_t k = 0; k < sizeof platform_keys / sizeof platform_keys[0]; ++k) {
    ol_platform_info_t key = platform_keys[k].key;
    size_t size = 0;
    if (!CHECK_OK(olGetPlatformInfoSize(platform, key, &size)))
      continue;
    char value[512];
    memset(value, CANARY, sizeof value);
    if (size > sizeof value || !CHECK_OK(olGetPlatformInfo(platform, key, sizeof value, value)))
      continue;
    if (platform_keys[k].kind == KIND_STRING) {
      CHECK(memchr(value, '\0', sizeof value) != NULL);
      CHECK_EQ(size, strlen(value) + 1);
      CHECK(strlen(value) > 0);
    } else {
      CHECK_EQ(size, kind_size(platform_keys[k].kind, 0));
    }
    check_size_rules(get_platform, platform, key, size, "olGetPlatformInfo");
  }
  /* Bad keys, both functions. */
  size_t size = 0;
  char value[64];
  CHECK_ERR(INVALID_ENUMERATION, olGetPlatformInfoSize(platform, OL_PLATFORM_INFO_LAST, &size));
  CHECK_ERR(INVALID_ENUMERATION, olGetPlatformInfoSize(platform, 0xffffffffu, &size));
  CHECK_ERR(INVALID_ENUMERATION,
            olGetPlatformInfo(platform, OL_PLATFORM_INFO_LAST, sizeof value, value));
  CHECK_ERR(INVALID_ENUMERATION, olGetPlatformInfo(platform, 0x7fffffffu, sizeof value, value));
  CHECK_ERR(INVALID_NULL_POINTER, olGetPlatformInfoSize(platform, OL_PLATFORM_INFO_NAME, NULL));
  CHECK_EQ(size, 0);
}

static void bad_platform_handles(ol_device_handle_t device) {
  int on_stack = 0;
  void *on_heap = malloc(256);
  const ol_platform_handle_t bad[] = {GARBAGE_HANDLE(ol_platform_handle_t),
                                      (ol_platform_handle_t)(void *)&on_stack,
                                      (ol_platform_handle_t)on_heap,
                                      (ol_platform_handle_t)(void *)device,
                                      (ol_platform_handle_t)(uintptr_t)UINTPTR_MAX};
  char value[64];
  size_t size = 0;
  CHECK_ERR(INVALID_NULL_HANDLE, olGetPlatformInfo(NULL, OL_PLATFORM_INFO_NAME, sizeof value, value));
  CHECK_ERR(INVALID_NULL_HANDLE, olGetPlatformInfoSize(NULL, OL_PLATFORM_INFO_NAME, &size));
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    CHECK_ERR(INVALID_PLATFORM, olGetPlatformInfo(bad[i], OL_PLATFORM_INFO_NAME, sizeof value, value));
    CHECK_ERR(INVALID_PLATFORM, olGetPlatformInfoSize(bad[i], OL_PLATFORM_INFO_BACKEND, &size));
  }
  free(on_heap);
  CHECK_ERR(INVALID_NULL_POINTER, olIteratePlatforms(NULL, NULL));
}

/* ---- devices ---- */

static const struct {
  ol_device_info_t key;
  enum value_kind kind;
  bool may_be_unsupported;
} device_keys[] = {
    {OL_DEVICE_INFO_TYPE, KIND_U32, false},
    {OL_DEVICE_INFO_PLATFORM, KIND_HANDLE, false},
    {OL_DEVICE_INFO_NAME, KIND_STRING, false},
    {OL_DEVICE_INFO_PRODUCT_NAME, KIND_STRING, true},
    {OL_DEVICE_INFO_UID, KIND_STRING, true},
    {OL_DEVICE_INFO_VENDOR, KIND_STRING, true},
    {OL_DEVICE_INFO_DRIVER_VERSION, KIND_STRING, true},
    {OL_DEVICE_INFO_MAX_WORK_GROUP_SIZE, KIND_U32, true},
    {OL_DEVICE_INFO_MAX_WORK_GROUP_SIZE_PER_DIMENSION, KIND_DIMS, true},
    {OL_DEVICE_INFO_MAX_WORK_SIZE, KIND_U32, true},
    {OL_DEVICE_INFO_MAX_WORK_SIZE_PER_DIMENSION, KIND_DIMS, true},
    {OL_DEVICE_INFO_VENDOR_ID, KIND_U32, true},
    {OL_DEVICE_INFO_NUM_COMPUTE_UNITS, KIND_U32, false},
    {OL_DEVICE_INFO_MAX_CLOCK_FREQUENCY, KIND_U32, true},
    {OL_DEVICE_INFO_MEMORY_CLOCK_RATE, KIND_U32, true},
    {OL_DEVICE_INFO_ADDRESS_BITS, KIND_U32, false},
    {OL_DEVICE_INFO_MAX_MEM_ALLOC_SIZE, KIND_U64, true},
    {OL_DEVICE_INFO_GLOBAL_MEM_SIZE, KIND_U64, false},
    {OL_DEVICE_INFO_WORK_GROUP_LOCAL_MEM_SIZE, KIND_U64, true},
    /* ol_device_fp_capability_flags_t: a uint32_t of flags. */
    {OL_DEVICE_INFO_SINGLE_FP_CONFIG, KIND_U32, true},
    {OL_DEVICE_INFO_DOUBLE_FP_CONFIG, KIND_U32, true},
    {OL_DEVICE_INFO_HALF_FP_CONFIG, KIND_U32, true},
    {OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_CHAR, KIND_U32, true},
    {OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_SHORT, KIND_U32, true},
    {OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_INT, KIND_U32, true},
    {OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_LONG, KIND_U32, true},
    {OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_FLOAT, KIND_U32, true},
    {OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_DOUBLE, KIND_U32, true},
    {OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_HALF, KIND_U32, true},
    /* The extensions, numbered apart from LLVM's keys. */
    {OL_DEVICE_INFO_NUM_LANES, KIND_U32, true},
    {OL_DEVICE_INFO_NATIVE_HANDLE, KIND_HANDLE, true},
    {OL_DEVICE_INFO_NATIVE_CONTEXT, KIND_HANDLE, true},
};
#define NUM_DEVICE_KEYS (sizeof device_keys / sizeof device_keys[0])

static uint32_t u32_info(ol_device_handle_t device, ol_device_info_t key) {
  uint32_t value = 0;
  CHECK_OK(olGetDeviceInfo(device, key, sizeof value, &value));
  return value;
}

/* The host device's FP capabilities and vector widths come from this CPU: compare them
 * with what the compiler's own CPU detection says. */
static void check_host_cpu_answers(ol_device_handle_t host) {
  const uint32_t ieee = OL_DEVICE_FP_CAPABILITY_FLAG_ROUND_TO_NEAREST |
                        OL_DEVICE_FP_CAPABILITY_FLAG_ROUND_TO_ZERO |
                        OL_DEVICE_FP_CAPABILITY_FLAG_ROUND_TO_INF |
                        OL_DEVICE_FP_CAPABILITY_FLAG_INF_NAN;
  const uint32_t single = u32_info(host, OL_DEVICE_INFO_SINGLE_FP_CONFIG);
  const uint32_t dbl = u32_info(host, OL_DEVICE_INFO_DOUBLE_FP_CONFIG);
  CHECK((single & ieee) == ieee);
  CHECK((dbl & ieee) == ieee);
  CHECK(!(single & OL_DEVICE_FP_CAPABILITY_FLAG_SOFT_FLOAT));
  /* No native half arithmetic means no half vectors either. */
  CHECK((u32_info(host, OL_DEVICE_INFO_HALF_FP_CONFIG) == 0) ==
        (u32_info(host, OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_HALF) == 0));
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  const bool fma = __builtin_cpu_supports("fma") || __builtin_cpu_supports("fma4");
  CHECK(!!(single & OL_DEVICE_FP_CAPABILITY_FLAG_FMA) == fma);
  CHECK(!!(dbl & OL_DEVICE_FP_CAPABILITY_FLAG_FMA) == fma);
  const uint32_t float_lanes = __builtin_cpu_supports("avx512f") ? 16
                               : __builtin_cpu_supports("avx")   ? 8
                                                                 : 4;
  CHECK_EQ(u32_info(host, OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_FLOAT), float_lanes);
  CHECK_EQ(u32_info(host, OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_DOUBLE), float_lanes / 2);
  const uint32_t int_lanes = __builtin_cpu_supports("avx512f") ? 16
                             : __builtin_cpu_supports("avx2")  ? 8
                                                               : 4;
  CHECK_EQ(u32_info(host, OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_INT), int_lanes);
  CHECK_EQ(u32_info(host, OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_LONG), int_lanes / 2);
  /* Byte and word vectors of 512 bits need AVX512BW as well. */
  const uint32_t byte_lanes = __builtin_cpu_supports("avx512bw") ? 64
                              : __builtin_cpu_supports("avx2")   ? 32
                                                                 : 16;
  CHECK_EQ(u32_info(host, OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_CHAR), byte_lanes);
  CHECK_EQ(u32_info(host, OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_SHORT), byte_lanes / 2);
#endif
}

static void check_device(ol_device_handle_t device, ol_platform_handle_t const *platforms,
                         size_t num_platforms) {
  /* Every key: LLVM's 0 .. OL_DEVICE_INFO_LAST - 1, and the three extensions. */
  CHECK_EQ(NUM_DEVICE_KEYS, OL_DEVICE_INFO_LAST + 3);
  for (size_t k = 0; k < NUM_DEVICE_KEYS; ++k) {
    ol_device_info_t key = device_keys[k].key;
    size_t size = 0;
    ol_result_t r = olGetDeviceInfoSize(device, key, &size);
    unsigned char value[512];
    memset(value, CANARY, sizeof value);
    if (result_code(r) == OL_ERRC_UNSUPPORTED && device_keys[k].may_be_unsupported) {
      CHECK_ERR(UNSUPPORTED, r);
      CHECK_ERR(UNSUPPORTED, olGetDeviceInfo(device, key, sizeof value, value));
      CHECK(buffer_is(value, 0, sizeof value, CANARY));
      continue;
    }
    if (!check_result(r, OL_ERRC_SUCCESS, "olGetDeviceInfoSize", __FILE__, __LINE__)) {
      fprintf(stderr, "    (key %u)\n", key);
      continue;
    }
    if (size > sizeof value || !CHECK_OK(olGetDeviceInfo(device, key, sizeof value, value)))
      continue;
    if (device_keys[k].kind == KIND_STRING) {
      CHECK(memchr(value, '\0', sizeof value) != NULL);
      if (!CHECK_EQ(size, strlen((const char *)value) + 1))
        fprintf(stderr, "    (key %u)\n", key);
    } else if (!CHECK_EQ(size, kind_size(device_keys[k].kind, 0))) {
      fprintf(stderr, "    (key %u)\n", key);
    }
    check_size_rules(get_device, device, key, size, "olGetDeviceInfo");
  }

  /* Plausible values. */
  uint32_t type = u32_info(device, OL_DEVICE_INFO_TYPE);
  CHECK(type == OL_DEVICE_TYPE_GPU || type == OL_DEVICE_TYPE_CPU || type == OL_DEVICE_TYPE_HOST);
  ol_platform_handle_t platform = NULL;
  CHECK_OK(olGetDeviceInfo(device, OL_DEVICE_INFO_PLATFORM, sizeof platform, &platform));
  bool known = false;
  for (size_t i = 0; i < num_platforms; ++i)
    known = known || platforms[i] == platform;
  CHECK(known);
  CHECK(u32_info(device, OL_DEVICE_INFO_NUM_COMPUTE_UNITS) >= 1);
  CHECK_EQ(u32_info(device, OL_DEVICE_INFO_ADDRESS_BITS), 64);
  uint64_t global = 0;
  CHECK_OK(olGetDeviceInfo(device, OL_DEVICE_INFO_GLOBAL_MEM_SIZE, sizeof global, &global));
  CHECK(global > 0);
  uint64_t max_alloc = 0;
  if (result_code(olGetDeviceInfo(device, OL_DEVICE_INFO_MAX_MEM_ALLOC_SIZE, sizeof max_alloc,
                                  &max_alloc)) == OL_ERRC_SUCCESS) {
    CHECK(max_alloc > 0);
    CHECK(max_alloc <= global);
  }
  uint32_t group = 0;
  if (result_code(olGetDeviceInfo(device, OL_DEVICE_INFO_MAX_WORK_GROUP_SIZE, sizeof group,
                                  &group)) == OL_ERRC_SUCCESS)
    CHECK(group >= 1);
  ol_dimensions_t dims = {0, 0, 0};
  if (result_code(olGetDeviceInfo(device, OL_DEVICE_INFO_MAX_WORK_GROUP_SIZE_PER_DIMENSION,
                                  sizeof dims, &dims)) == OL_ERRC_SUCCESS) {
    CHECK(dims.x >= 1 && dims.y >= 1 && dims.z >= 1);
    CHECK(dims.x <= group || group == 0);
  }
  /* The extensions' vendor handles: none on the host device (no vendor library). */
  void *native = NULL;
  if (type == OL_DEVICE_TYPE_HOST) {
    CHECK_ERR(UNSUPPORTED,
              olGetDeviceInfo(device, OL_DEVICE_INFO_NATIVE_HANDLE, sizeof native, &native));
    CHECK_ERR(UNSUPPORTED,
              olGetDeviceInfo(device, OL_DEVICE_INFO_NATIVE_CONTEXT, sizeof native, &native));
  }
  uint32_t lanes = 0;
  if (result_code(olGetDeviceInfo(device, OL_DEVICE_INFO_NUM_LANES, sizeof lanes, &lanes)) ==
      OL_ERRC_SUCCESS)
    CHECK(lanes >= 1);
  /* Floating point capabilities: only the flags ol_device_fp_capability_flag_t names. */
  for (uint32_t key = OL_DEVICE_INFO_SINGLE_FP_CONFIG; key <= OL_DEVICE_INFO_HALF_FP_CONFIG;
       ++key) {
    ol_device_fp_capability_flags_t flags = 0;
    if (result_code(olGetDeviceInfo(device, key, sizeof flags, &flags)) == OL_ERRC_SUCCESS)
      CHECK(flags < OL_DEVICE_FP_CAPABILITY_FLAG_LAST);
  }
  /* Native vector widths: at least one element, but half may be absent (0). */
  for (uint32_t key = OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_CHAR;
       key < OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_HALF; ++key) {
    uint32_t width = 0;
    if (result_code(olGetDeviceInfo(device, key, sizeof width, &width)) == OL_ERRC_SUCCESS)
      CHECK(width >= 1);
  }

  /* Bad keys, both functions; NULL out-pointers. */
  size_t size = 0;
  unsigned char value[64];
  memset(value, CANARY, sizeof value);
  /* Past LLVM's keys, between them and the extension's, past the extension's, huge. */
  CHECK_ERR(INVALID_ENUMERATION, olGetDeviceInfoSize(device, OL_DEVICE_INFO_LAST, &size));
  CHECK_ERR(INVALID_ENUMERATION, olGetDeviceInfoSize(device, 0x7fff, &size));
  CHECK_ERR(INVALID_ENUMERATION, olGetDeviceInfoSize(device, OL_DEVICE_INFO_NATIVE_CONTEXT + 1, &size));
  CHECK_ERR(INVALID_ENUMERATION, olGetDeviceInfoSize(device, 0xffffffffu, &size));
  CHECK_ERR(INVALID_ENUMERATION, olGetDeviceInfo(device, OL_DEVICE_INFO_LAST, sizeof value, value));
  CHECK_ERR(INVALID_ENUMERATION, olGetDeviceInfo(device, 0x7fff, sizeof value, value));
  CHECK_ERR(INVALID_ENUMERATION, olGetDeviceInfo(device, OL_DEVICE_INFO_NATIVE_CONTEXT + 1, sizeof value, value));
  CHECK_ERR(INVALID_ENUMERATION, olGetDeviceInfo(device, 0x80000000u, sizeof value, value));
  CHECK(buffer_is(value, 0, sizeof value, CANARY));
  CHECK_EQ(size, 0);
  CHECK_ERR(INVALID_NULL_POINTER, olGetDeviceInfoSize(device, OL_DEVICE_INFO_NAME, NULL));
}

static void bad_device_handles(ol_platform_handle_t platform) {
  int on_stack = 0;
  void *on_heap = malloc(256);
  const ol_device_handle_t bad[] = {GARBAGE_HANDLE(ol_device_handle_t),
                                    (ol_device_handle_t)(void *)&on_stack,
                                    (ol_device_handle_t)on_heap,
                                    (ol_device_handle_t)(void *)platform,
                                    (ol_device_handle_t)(uintptr_t)UINTPTR_MAX};
  uint32_t value = 0;
  size_t size = 0;
  CHECK_ERR(INVALID_NULL_HANDLE, olGetDeviceInfo(NULL, OL_DEVICE_INFO_TYPE, sizeof value, &value));
  CHECK_ERR(INVALID_NULL_HANDLE, olGetDeviceInfoSize(NULL, OL_DEVICE_INFO_TYPE, &size));
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    CHECK_ERR(INVALID_DEVICE, olGetDeviceInfo(bad[i], OL_DEVICE_INFO_TYPE, sizeof value, &value));
    CHECK_ERR(INVALID_DEVICE, olGetDeviceInfoSize(bad[i], OL_DEVICE_INFO_NAME, &size));
  }
  free(on_heap);
  CHECK_EQ(value, 0);
  CHECK_EQ(size, 0);
  CHECK_ERR(INVALID_NULL_POINTER, olIterateDevices(NULL, NULL));
}

static bool stop_after_first(ol_device_handle_t device, void *user_data) {
  (void)device;
  ++*(int *)user_data;
  return false;
}

int main(void) {
  REQUIRE_OK(olInit());

  /* Platforms: at least one, the host platform last. */
  platform_list_t platforms;
  memset(&platforms, 0, sizeof platforms);
  REQUIRE_OK(olIteratePlatforms(collect_platform, &platforms));
  REQUIRE(platforms.count >= 1 && platforms.count <= MAX_PLATFORMS);
  ol_platform_backend_t last_backend = 0;
  CHECK_OK(olGetPlatformInfo(platforms.platforms[platforms.count - 1], OL_PLATFORM_INFO_BACKEND,
                             sizeof last_backend, &last_backend));
  CHECK_EQ(last_backend, OL_PLATFORM_BACKEND_HOST);
  for (size_t i = 0; i < platforms.count; ++i)
    check_platform(platforms.platforms[i]);

  /* Returning false stops the iteration. */
  platform_list_t first;
  memset(&first, 0, sizeof first);
  first.stop_after = 1;
  CHECK_OK(olIteratePlatforms(collect_platform, &first));
  CHECK_EQ(first.count, 1);
  CHECK(first.platforms[0] == platforms.platforms[0]);

  /* Devices: at least one, the host device last and of type HOST, on the host platform. */
  device_list_t devices = all_devices();
  REQUIRE(devices.count >= 1);
  ol_device_handle_t host = devices.devices[devices.count - 1];
  CHECK_EQ(device_type(host), OL_DEVICE_TYPE_HOST);
  check_host_cpu_answers(host);
  CHECK(host == host_device());
  ol_platform_handle_t host_platform = NULL;
  CHECK_OK(olGetDeviceInfo(host, OL_DEVICE_INFO_PLATFORM, sizeof host_platform, &host_platform));
  CHECK(host_platform == platforms.platforms[platforms.count - 1]);
  for (size_t i = 0; i < devices.count; ++i)
    check_device(devices.devices[i], platforms.platforms, platforms.count);
  int calls = 0;
  CHECK_OK(olIterateDevices(stop_after_first, &calls));
  CHECK_EQ(calls, 1);

  /* Handles are stable: iterating again gives the same ones. */
  device_list_t again = all_devices();
  CHECK_EQ(again.count, devices.count);
  CHECK(memcmp(again.devices, devices.devices, devices.count * sizeof devices.devices[0]) == 0);

  bad_platform_handles(host);
  bad_device_handles(host_platform);

  CHECK_OK(olShutDown());
  return test_finish("test_platform_device");
}
