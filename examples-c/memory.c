/* Allocates memory on the host device, fills it, copies it, asks what it is, frees it. */
#include <offload/liboffload.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Prints the failed call and its Details, then leaves. */
static void check(ol_result_t result, const char *what) {
  if (result == OL_SUCCESS)
    return;
  fprintf(stderr, "%s failed (error %u): %s\n", what, result->Code, result->Details);
  exit(1);
}

static bool find_host(ol_device_handle_t device, void *user_data) {
  ol_device_type_t type = 0;
  check(olGetDeviceInfo(device, OL_DEVICE_INFO_TYPE, sizeof type, &type), "olGetDeviceInfo");
  if (type == OL_DEVICE_TYPE_HOST)
    *(ol_device_handle_t *)user_data = device;
  return true;
}

int main(void) {
  check(olInit(), "olInit");
  ol_device_handle_t host = NULL;
  check(olIterateDevices(find_host, &host), "olIterateDevices");
  char name[256] = "";
  check(olGetDeviceInfo(host, OL_DEVICE_INFO_NAME, sizeof name, name), "olGetDeviceInfo");
  printf("device: %s\n", name);

  const size_t size = 1 << 20;
  unsigned char *buffer = NULL;
  check(olMemAlloc(host, OL_ALLOC_TYPE_DEVICE, size, (void **)&buffer), "olMemAlloc");
  printf("allocated %zu bytes of device memory at %p\n", size, (void *)buffer);

  const uint32_t pattern = 0xdeadbeef;
  check(olMemFill(NULL, buffer, sizeof pattern, &pattern, size), "olMemFill");
  printf("filled it with the 4-byte pattern 0x%08x\n", pattern);

  unsigned char *copy = malloc(size);
  if (copy == NULL)
    return 1;
  check(olMemcpy(NULL, copy, host, buffer, host, size), "olMemcpy");
  size_t wrong = 0;
  for (size_t i = 0; i < size; i += sizeof pattern)
    wrong += memcmp(copy + i, &pattern, sizeof pattern) != 0;
  printf("copied it back to the host: %s\n", wrong == 0 ? "every word matches" : "MISMATCH");

  const unsigned char *inside = buffer + 1000;
  void *base = NULL;
  size_t alloc_size = 0;
  ol_alloc_type_t type = 0;
  check(olGetMemInfo(inside, OL_MEM_INFO_BASE, sizeof base, &base), "olGetMemInfo(BASE)");
  check(olGetMemInfo(inside, OL_MEM_INFO_SIZE, sizeof alloc_size, &alloc_size), "olGetMemInfo(SIZE)");
  check(olGetMemInfo(inside, OL_MEM_INFO_TYPE, sizeof type, &type), "olGetMemInfo(TYPE)");
  printf("%p lies in the allocation at %p of %zu bytes, type %s\n", (const void *)inside, base,
         alloc_size, type == OL_ALLOC_TYPE_DEVICE ? "DEVICE" : "other");

  /* A mistake, on purpose: the library says what was wrong. */
  ol_result_t bad = olMemcpy(NULL, buffer, host, copy, host, size + 1);
  printf("copying one byte too many: error %u: %s\n", bad ? bad->Code : 0,
         bad ? bad->Details : "(no error?)");

  check(olMemFree(buffer), "olMemFree");
  printf("freed it\n");
  free(copy);
  check(olShutDown(), "olShutDown");
  return wrong == 0 && bad != OL_SUCCESS ? 0 : 1;
}
