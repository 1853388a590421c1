/* olMemFill with patterns of 1, 2 and 4 bytes, and of odd sizes (3 and 12 bytes), at odd
 * offsets of a guarded device buffer, on a queue; the whole buffer is read back. */
#include "buffers.h"
#include "checks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { FILL_BUFFER = 65536 + 64 };

static bool fill_once(check_env_t *env, ol_queue_handle_t queue, unsigned char *memory,
                      size_t pattern_size, size_t offset, size_t count, unsigned char *back,
                      check_result_t *result) {
  unsigned char pattern[16];
  fill_pattern(pattern, pattern_size, (unsigned)(pattern_size + offset));
  const size_t fill_size = pattern_size * count;
  char what[128];
  snprintf(what, sizeof what, "olMemFill(%zu-byte pattern, %zu bytes at offset %zu)",
           pattern_size, fill_size, offset);
  if (!guard_device(env, env->device, memory, FILL_BUFFER, result) ||
      !ol_ok(result, olMemFill(queue, memory + offset, pattern_size, pattern, fill_size), what) ||
      !ol_ok(result, olSyncQueue(queue), "olSyncQueue after olMemFill") ||
      !copy_from(env, env->device, back, memory, FILL_BUFFER, result) ||
      !guards_intact(result, what, back, offset, offset + fill_size, FILL_BUFFER))
    return false;
  for (size_t i = 0; i < fill_size; ++i)
    if (back[offset + i] != pattern[i % pattern_size])
      return fail(result, "%s: byte %zu is 0x%02x, expected 0x%02x", what, i, back[offset + i],
                  pattern[i % pattern_size]);
  return true;
}

static void fill_patterns(check_env_t *env, const size_t *sizes, size_t count,
                          check_result_t *result) {
  /* Offsets that misalign the fill for every pattern size; counts that end mid-word. */
  static const size_t offsets[] = {0, 1, 6};
  static const size_t repeats[] = {1, 7, 4099};
  ol_queue_handle_t queue = NULL;
  unsigned char *memory = device_alloc(env->device, OL_ALLOC_TYPE_DEVICE, FILL_BUFFER, result);
  unsigned char *back = malloc(FILL_BUFFER);
  if (memory == NULL || back == NULL ||
      !ol_ok(result, olCreateQueue(env->device->handle, &queue), "olCreateQueue"))
    goto out;
  for (size_t s = 0; s < count; ++s)
    for (size_t o = 0; o < sizeof offsets / sizeof offsets[0]; ++o)
      for (size_t r = 0; r < sizeof repeats / sizeof repeats[0]; ++r)
        if (!fill_once(env, queue, memory, sizes[s], offsets[o], repeats[r], back, result))
          goto out;
out:
  if (back == NULL)
    fail(result, "malloc(%d) failed", FILL_BUFFER);
  if (queue != NULL)
    ol_ok(result, olDestroyQueue(queue), "olDestroyQueue");
  device_free(memory, result);
  free(back);
}

void check_fill_even(check_env_t *env, check_result_t *result) {
  static const size_t sizes[] = {1, 2, 4};
  fill_patterns(env, sizes, 3, result);
}

void check_fill_odd(check_env_t *env, check_result_t *result) {
  static const size_t sizes[] = {3, 12};
  fill_patterns(env, sizes, 2, result);
}
