/* Memory of each kind: allocated, described by olGetMemInfo, written and read back
 * through copies, touched directly by the host where it is host memory, and freed. */
#include "buffers.h"
#include "checks.h"

#include <stdlib.h>
#include <string.h>

/* Odd, and past a page: exercises sizes that are not rounded by accident. */
enum { MEMORY_SIZE = 65536 + 3 };

static bool mem_info(check_result_t *result, unsigned char *memory, ol_alloc_type_t type,
                     const device_t *device) {
  const unsigned char *inside = memory + 100; /* an interior pointer finds its allocation */
  void *base = NULL;
  size_t size = 0;
  ol_alloc_type_t got_type = OL_ALLOC_TYPE_LAST;
  ol_device_handle_t owner = NULL;
  if (!ol_ok(result, olGetMemInfo(inside, OL_MEM_INFO_BASE, sizeof base, &base),
             "olGetMemInfo(BASE)") ||
      !ol_ok(result, olGetMemInfo(inside, OL_MEM_INFO_SIZE, sizeof size, &size),
             "olGetMemInfo(SIZE)") ||
      !ol_ok(result, olGetMemInfo(inside, OL_MEM_INFO_TYPE, sizeof got_type, &got_type),
             "olGetMemInfo(TYPE)") ||
      !ol_ok(result, olGetMemInfo(inside, OL_MEM_INFO_DEVICE, sizeof owner, &owner),
             "olGetMemInfo(DEVICE)"))
    return false;
  if (base != memory)
    return fail(result, "olGetMemInfo(BASE) of an interior pointer is %p, expected %p", base,
                (void *)memory);
  if (size != MEMORY_SIZE)
    return fail(result, "olGetMemInfo(SIZE) is %zu, expected %d", size, MEMORY_SIZE);
  if (got_type != type)
    return fail(result, "olGetMemInfo(TYPE) is %d, expected %d", (int)got_type, (int)type);
  if (owner != device->handle)
    return fail(result, "olGetMemInfo(DEVICE) is another device");
  return true;
}

static void check_kind(check_env_t *env, ol_alloc_type_t type, check_result_t *result) {
  unsigned char *memory = device_alloc(env->device, type, MEMORY_SIZE, result);
  unsigned char *want = malloc(MEMORY_SIZE), *back = malloc(MEMORY_SIZE);
  if (memory == NULL || want == NULL || back == NULL) {
    if (want == NULL || back == NULL)
      fail(result, "malloc failed");
    goto out;
  }
  if (!mem_info(result, memory, type, env->device))
    goto out;
  fill_pattern(want, MEMORY_SIZE, (unsigned)type);
  memset(back, 0, MEMORY_SIZE);
  if (!copy_to(env, env->device, memory, want, MEMORY_SIZE, result) ||
      !copy_from(env, env->device, back, memory, MEMORY_SIZE, result) ||
      !same_bytes(result, "read back after a write", back, want, MEMORY_SIZE))
    goto out;
  /* Host and managed memory is the host's to read and write directly: what a copy wrote
   * is there, and what the host writes is what a copy reads. */
  if (type != OL_ALLOC_TYPE_DEVICE && host_can_touch(env, memory)) {
    if (!same_bytes(result, "read directly by the host", memory, want, MEMORY_SIZE))
      goto out;
    fill_pattern(want, MEMORY_SIZE, 99u);
    memcpy(memory, want, MEMORY_SIZE);
    if (!copy_from(env, env->device, back, memory, MEMORY_SIZE, result) ||
        !same_bytes(result, "written by the host, then copied", back, want, MEMORY_SIZE))
      goto out;
  }
out:
  device_free(memory, result);
  free(want);
  free(back);
}

void check_memory_device(check_env_t *env, check_result_t *result) {
  check_kind(env, OL_ALLOC_TYPE_DEVICE, result);
}

void check_memory_host(check_env_t *env, check_result_t *result) {
  check_kind(env, OL_ALLOC_TYPE_HOST, result);
}

void check_memory_managed(check_env_t *env, check_result_t *result) {
  check_kind(env, OL_ALLOC_TYPE_MANAGED, result);
}
