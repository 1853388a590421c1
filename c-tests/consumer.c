/* A minimal program using the library: built by every way of linking it (CMake shared
 * and static targets, pkg-config shared and static, a relocated install). */
#include <offload/liboffload.h>

#include <stdio.h>
#include <string.h>

static bool is_host(ol_device_handle_t device, void *user_data) {
  ol_device_type_t type = 0;
  if (olGetDeviceInfo(device, OL_DEVICE_INFO_TYPE, sizeof type, &type) == OL_SUCCESS &&
      type == OL_DEVICE_TYPE_HOST)
    *(ol_device_handle_t *)user_data = device;
  return true;
}

static int fail(const char *what, ol_result_t result) {
  fprintf(stderr, "consumer: %s failed: %s\n", what, result ? result->Details : "(no error)");
  return 1;
}

int main(void) {
  ol_result_t r = olInit();
  if (r != OL_SUCCESS)
    return fail("olInit", r);
  uint32_t major, minor, patch;
  if ((r = olGetVersion(&major, &minor, &patch)) != OL_SUCCESS)
    return fail("olGetVersion", r);
  /* The header's LIBOFFLOAD_VERSION_* are the library's version (OL_VERSION_* are LLVM's
   * API version, which olGetVersion does not report). */
  if (major != LIBOFFLOAD_VERSION_MAJOR || minor != LIBOFFLOAD_VERSION_MINOR ||
      patch != LIBOFFLOAD_VERSION_PATCH)
    return fail("version check (library and header differ)", NULL);
  ol_device_handle_t host = NULL;
  if ((r = olIterateDevices(is_host, &host)) != OL_SUCCESS || host == NULL)
    return fail("finding the host device", r);
  char *mem = NULL;
  if ((r = olMemAlloc(host, OL_ALLOC_TYPE_DEVICE, 16, (void **)&mem)) != OL_SUCCESS)
    return fail("olMemAlloc", r);
  const char pattern = 'x';
  char back[17] = {0};
  if ((r = olMemFill(NULL, mem, 1, &pattern, 16)) != OL_SUCCESS)
    return fail("olMemFill", r);
  if ((r = olMemcpy(NULL, back, host, mem, host, 16)) != OL_SUCCESS)
    return fail("olMemcpy", r);
  if (strcmp(back, "xxxxxxxxxxxxxxxx") != 0)
    return fail("reading the fill back", NULL);
  if ((r = olMemFree(mem)) != OL_SUCCESS)
    return fail("olMemFree", r);
  if ((r = olShutDown()) != OL_SUCCESS)
    return fail("olShutDown", r);
  printf("consumer: liboffload %u.%u.%u ok\n", major, minor, patch);
  return 0;
}
