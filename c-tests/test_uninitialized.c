/* Before olInit and after the last olShutDown, every function but olInit (and every
 * ...WithCodeLoc variant) answers OL_ERRC_UNINITIALIZED, whatever its arguments. */
#include "offload_test.h"

static bool never_called(ol_platform_handle_t p, void *u) {
  (void)p;
  (void)u;
  CHECK(!"a platform callback ran while the library was not initialised");
  return true;
}
static bool never_called_device(ol_device_handle_t d, void *u) {
  (void)d;
  (void)u;
  CHECK(!"a device callback ran while the library was not initialised");
  return true;
}

/* `platform`, `device`, `mem` are handles and memory from an earlier session (or
 * garbage): the answer must be UNINITIALIZED all the same. */
static void everything_uninitialised(ol_platform_handle_t platform, ol_device_handle_t device,
                                     void *mem) {
  ol_code_location_t loc = {"everything_uninitialised", __FILE__, __LINE__, 1};
  uint32_t u32 = 0;
  size_t size = 0;
  void *ptr = NULL;
  unsigned char buffer[64] = {0};
  unsigned char pattern[4] = {1, 2, 3, 4};

  CHECK_ERR(UNINITIALIZED, olShutDown());
  CHECK_ERR(UNINITIALIZED, olShutDownWithCodeLoc(&loc));
  CHECK_ERR(UNINITIALIZED, olGetVersion(&u32, &u32, &u32));
  CHECK_ERR(UNINITIALIZED, olGetVersionWithCodeLoc(&u32, &u32, &u32, &loc));

  CHECK_ERR(UNINITIALIZED, olIteratePlatforms(never_called, NULL));
  CHECK_ERR(UNINITIALIZED, olIteratePlatformsWithCodeLoc(never_called, NULL, &loc));
  CHECK_ERR(UNINITIALIZED, olIteratePlatforms(NULL, NULL));
  CHECK_ERR(UNINITIALIZED,
            olGetPlatformInfo(platform, OL_PLATFORM_INFO_NAME, sizeof buffer, buffer));
  CHECK_ERR(UNINITIALIZED, olGetPlatformInfoWithCodeLoc(platform, OL_PLATFORM_INFO_NAME,
                                                        sizeof buffer, buffer, &loc));
  CHECK_ERR(UNINITIALIZED, olGetPlatformInfoSize(platform, OL_PLATFORM_INFO_NAME, &size));
  CHECK_ERR(UNINITIALIZED,
            olGetPlatformInfoSizeWithCodeLoc(platform, OL_PLATFORM_INFO_NAME, &size, &loc));
  CHECK_ERR(UNINITIALIZED, olGetPlatformInfo(NULL, 12345, 0, NULL));

  CHECK_ERR(UNINITIALIZED, olIterateDevices(never_called_device, NULL));
  CHECK_ERR(UNINITIALIZED, olIterateDevicesWithCodeLoc(never_called_device, NULL, &loc));
  CHECK_ERR(UNINITIALIZED,
            olGetDeviceInfo(device, OL_DEVICE_INFO_NAME, sizeof buffer, buffer));
  CHECK_ERR(UNINITIALIZED, olGetDeviceInfoWithCodeLoc(device, OL_DEVICE_INFO_NAME,
                                                      sizeof buffer, buffer, &loc));
  CHECK_ERR(UNINITIALIZED, olGetDeviceInfoSize(device, OL_DEVICE_INFO_NAME, &size));
  CHECK_ERR(UNINITIALIZED,
            olGetDeviceInfoSizeWithCodeLoc(device, OL_DEVICE_INFO_NAME, &size, &loc));
  CHECK_ERR(UNINITIALIZED, olGetDeviceInfo(NULL, 12345, 0, NULL));

  CHECK_ERR(UNINITIALIZED, olMemAlloc(device, OL_ALLOC_TYPE_HOST, 64, &ptr));
  CHECK_ERR(UNINITIALIZED, olMemAllocWithCodeLoc(device, OL_ALLOC_TYPE_HOST, 64, &ptr, &loc));
  CHECK(ptr == NULL);
  CHECK_ERR(UNINITIALIZED, olMemAlloc(NULL, 99, 0, NULL));
  CHECK_ERR(UNINITIALIZED, olMemFree(mem));
  CHECK_ERR(UNINITIALIZED, olMemFreeWithCodeLoc(mem, &loc));
  CHECK_ERR(UNINITIALIZED, olMemFree(NULL));
  CHECK_ERR(UNINITIALIZED, olMemcpy(NULL, buffer, device, buffer + 32, device, 16));
  CHECK_ERR(UNINITIALIZED,
            olMemcpyWithCodeLoc(NULL, buffer, device, buffer + 32, device, 16, &loc));
  CHECK_ERR(UNINITIALIZED, olMemFill(NULL, buffer, sizeof pattern, pattern, 16));
  CHECK_ERR(UNINITIALIZED, olMemFillWithCodeLoc(NULL, buffer, sizeof pattern, pattern, 16, &loc));
  CHECK_ERR(UNINITIALIZED, olGetMemInfo(mem, OL_MEM_INFO_SIZE, sizeof size, &size));
  CHECK_ERR(UNINITIALIZED,
            olGetMemInfoWithCodeLoc(mem, OL_MEM_INFO_SIZE, sizeof size, &size, &loc));
  CHECK_ERR(UNINITIALIZED, olGetMemInfoSize(mem, OL_MEM_INFO_SIZE, &size));
  CHECK_ERR(UNINITIALIZED, olGetMemInfoSizeWithCodeLoc(mem, OL_MEM_INFO_SIZE, &size, &loc));
  CHECK_ERR(UNINITIALIZED, olMemRegister(device, buffer, sizeof buffer, 0, &ptr));
  CHECK_ERR(UNINITIALIZED, olMemRegisterWithCodeLoc(device, buffer, sizeof buffer, 0, &ptr, &loc));
  CHECK_ERR(UNINITIALIZED, olMemUnregister(device, buffer));
  CHECK_ERR(UNINITIALIZED, olMemUnregisterWithCodeLoc(device, buffer, &loc));

  /* Nothing was written through the out-pointers. */
  CHECK_EQ(size, 0);
  CHECK_EQ(u32, 0);
  CHECK(ptr == NULL);
  for (size_t i = 0; i < sizeof buffer; ++i)
    if (!CHECK_EQ(buffer[i], 0))
      break;
}

static bool first_platform(ol_platform_handle_t p, void *u) {
  *(ol_platform_handle_t *)u = p;
  return false;
}

int main(void) {
  /* Before the first olInit: garbage handles. */
  int on_stack = 0;
  everything_uninitialised(GARBAGE_HANDLE(ol_platform_handle_t),
                           GARBAGE_HANDLE(ol_device_handle_t), &on_stack);

  /* After the last olShutDown: handles and memory of the finished session. */
  REQUIRE_OK(olInit());
  ol_platform_handle_t platform = NULL;
  REQUIRE_OK(olIteratePlatforms(first_platform, &platform));
  ol_device_handle_t device = host_device();
  void *mem = NULL;
  REQUIRE_OK(olMemAlloc(device, OL_ALLOC_TYPE_HOST, 256, &mem));
  REQUIRE_OK(olShutDown());
  everything_uninitialised(platform, device, mem);

  /* Again after a second full cycle (init twice, shut down twice). */
  REQUIRE_OK(olInit());
  REQUIRE_OK(olInit());
  REQUIRE_OK(olShutDown());
  REQUIRE_OK(olShutDown());
  everything_uninitialised(platform, device, mem);

  /* olInit still works afterwards. */
  CHECK_OK(olInit());
  CHECK_OK(olShutDown());
  return test_finish("test_uninitialized");
}
