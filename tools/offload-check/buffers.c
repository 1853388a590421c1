/* Patterned bytes, their verification and the buffers the checks use. */
#include "buffers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fill_pattern(unsigned char *bytes, size_t size, unsigned seed) {
  /* Not a multiple of 256 apart: a copy off by any small distance differs. */
  for (size_t i = 0; i < size; ++i)
    bytes[i] = (unsigned char)((i * 131u + (i >> 8) * 7u + seed * 17u + 1u) & 0xffu);
}

bool same_bytes(check_result_t *result, const char *what, const unsigned char *got,
                const unsigned char *want, size_t size) {
  for (size_t i = 0; i < size; ++i)
    if (got[i] != want[i])
      return fail(result, "%s: byte %zu of %zu is 0x%02x, expected 0x%02x", what, i, size, got[i],
                  want[i]);
  return true;
}

unsigned char *host_buffer(check_env_t *env, bool pinned, size_t size, check_result_t *result) {
  if (!pinned) {
    unsigned char *buffer = malloc(size);
    if (buffer == NULL)
      fail(result, "malloc(%zu) failed", size);
    return buffer;
  }
  unsigned char *buffer = device_alloc(env->device, OL_ALLOC_TYPE_HOST, size, result);
  if (buffer != NULL && !host_can_touch(env, buffer)) {
    olMemFree(buffer);
    unsupported(result, "the device's HOST memory is not mapped in this process (a server "
                        "on another node): there is no pinned memory of it here");
    return NULL;
  }
  return buffer;
}

void free_host_buffer(check_env_t *env, bool pinned, unsigned char *buffer,
                      check_result_t *result) {
  (void)env;
  if (buffer == NULL)
    return;
  if (pinned)
    device_free(buffer, result);
  else
    free(buffer);
}

unsigned char *device_alloc(const device_t *device, ol_alloc_type_t type, size_t size,
                            check_result_t *result) {
  static const char *const names[] = {"HOST", "DEVICE", "MANAGED"};
  void *memory = NULL;
  char what[96];
  snprintf(what, sizeof what, "olMemAlloc(%s, %zu bytes)",
           (unsigned)type < 3 ? names[type] : "?", size);
  if (!ol_ok(result, olMemAlloc(device->handle, type, size, &memory), what))
    return NULL;
  if (memory == NULL)
    fail(result, "%s returned success and a NULL pointer", what);
  return memory;
}

void device_free(unsigned char *memory, check_result_t *result) {
  if (memory != NULL)
    ol_ok(result, olMemFree(memory), "olMemFree");
}

bool copy_to(check_env_t *env, const device_t *device, void *dst, const void *src, size_t size,
             check_result_t *result) {
  char what[96];
  snprintf(what, sizeof what, "olMemcpy(host -> device #%d, %zu bytes)", device->index, size);
  return ol_ok(result, olMemcpy(NULL, dst, device->handle, src, env->host->handle, size), what);
}

bool copy_from(check_env_t *env, const device_t *device, void *dst, const void *src, size_t size,
               check_result_t *result) {
  char what[96];
  snprintf(what, sizeof what, "olMemcpy(device #%d -> host, %zu bytes)", device->index, size);
  return ol_ok(result, olMemcpy(NULL, dst, env->host->handle, src, device->handle, size), what);
}

bool guard_device(check_env_t *env, const device_t *device, void *memory, size_t size,
                  check_result_t *result) {
  unsigned char *guards = malloc(size);
  if (guards == NULL)
    return fail(result, "malloc(%zu) failed", size);
  memset(guards, GUARD_BYTE, size);
  bool ok = copy_to(env, device, memory, guards, size, result);
  free(guards);
  return ok;
}

bool guards_intact(check_result_t *result, const char *what, const unsigned char *bytes,
                   size_t begin, size_t end, size_t size) {
  for (size_t i = 0; i < size; ++i)
    if ((i < begin || i >= end) && bytes[i] != GUARD_BYTE)
      return fail(result, "%s: byte %zu outside the range [%zu, %zu) was overwritten (0x%02x)",
                  what, i, begin, end, bytes[i]);
  return true;
}
