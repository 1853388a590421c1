/* Copies in every direction, of odd sizes at odd offsets, each verified byte for byte,
 * with guard bytes around the destination range so that a copy writing too much shows. */
#include "buffers.h"
#include "checks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const size_t COPY_SIZES[] = {1, 3, 4097, (1u << 20) + 7};
/* {source offset, destination offset}: aligned, and misaligned both ways. */
static const size_t COPY_OFFSETS[][2] = {{0, 0}, {1, 3}, {7, 5}};
enum { SLACK = 16 }; /* guard bytes past the largest offset */

#define COUNT(array) (sizeof(array) / sizeof((array)[0]))

/* Host -> device at an offset, then the whole device buffer back: the range holds the
 * data, the rest its guards. `host_src` and `host_back` are size + SLACK bytes. */
static bool round_trip(check_env_t *env, unsigned char *host_src, unsigned char *host_back,
                       size_t size, const size_t offsets[2], check_result_t *result) {
  const size_t total = size + SLACK;
  unsigned char *memory = device_alloc(env->device, OL_ALLOC_TYPE_DEVICE, total, result);
  bool ok = memory != NULL;
  char what[128];
  snprintf(what, sizeof what, "%zu bytes, host offset %zu -> device offset %zu", size,
           offsets[0], offsets[1]);
  fill_pattern(host_src, total, (unsigned)(size + offsets[0]));
  ok = ok && guard_device(env, env->device, memory, total, result) &&
       copy_to(env, env->device, memory + offsets[1], host_src + offsets[0], size, result);
  /* Whole buffer back, then the range alone into an odd offset of the host buffer. */
  memset(host_back, 0, total);
  ok = ok && copy_from(env, env->device, host_back, memory, total, result) &&
       guards_intact(result, what, host_back, offsets[1], offsets[1] + size, total) &&
       same_bytes(result, what, host_back + offsets[1], host_src + offsets[0], size);
  memset(host_back, GUARD_BYTE, total);
  ok = ok && copy_from(env, env->device, host_back + offsets[0], memory + offsets[1], size,
                       result) &&
       guards_intact(result, "device -> host into an offset", host_back, offsets[0],
                     offsets[0] + size, total) &&
       same_bytes(result, "device -> host into an offset", host_back + offsets[0],
                  host_src + offsets[0], size);
  device_free(memory, result);
  return ok;
}

static void host_device_copies(check_env_t *env, bool pinned, check_result_t *result) {
  const size_t largest = COPY_SIZES[COUNT(COPY_SIZES) - 1] + SLACK;
  unsigned char *src = host_buffer(env, pinned, largest, result);
  unsigned char *back = src != NULL ? host_buffer(env, pinned, largest, result) : NULL;
  for (size_t s = 0; back != NULL && s < COUNT(COPY_SIZES); ++s)
    for (size_t o = 0; o < COUNT(COPY_OFFSETS); ++o)
      if (!round_trip(env, src, back, COPY_SIZES[s], COPY_OFFSETS[o], result))
        goto out;
out:
  free_host_buffer(env, pinned, src, result);
  free_host_buffer(env, pinned, back, result);
}

void check_copy_pageable(check_env_t *env, check_result_t *result) {
  host_device_copies(env, false, result);
}

void check_copy_pinned(check_env_t *env, check_result_t *result) {
  host_device_copies(env, true, result);
}

/* from (a buffer of `from_device`, holding `src`) -> to (a guarded buffer of `to_device`),
 * at offsets, then `to` read back and compared. */
static bool device_to_device(check_env_t *env, const device_t *from_device,
                             const device_t *to_device, size_t size, const size_t offsets[2],
                             const unsigned char *src, unsigned char *back,
                             check_result_t *result) {
  const size_t total = size + SLACK;
  unsigned char *from = device_alloc(from_device, OL_ALLOC_TYPE_DEVICE, total, result);
  unsigned char *to = from != NULL ? device_alloc(to_device, OL_ALLOC_TYPE_DEVICE, total, result)
                                   : NULL;
  char what[160];
  snprintf(what, sizeof what, "olMemcpy(device #%d + %zu -> device #%d + %zu, %zu bytes)",
           from_device->index, offsets[0], to_device->index, offsets[1], size);
  bool ok = to != NULL && copy_to(env, from_device, from, src, total, result) &&
            guard_device(env, to_device, to, total, result) &&
            ol_ok(result,
                  olMemcpy(NULL, to + offsets[1], to_device->handle, from + offsets[0],
                           from_device->handle, size),
                  what) &&
            copy_from(env, to_device, back, to, total, result) &&
            guards_intact(result, what, back, offsets[1], offsets[1] + size, total) &&
            same_bytes(result, what, back + offsets[1], src + offsets[0], size);
  device_free(from, result);
  device_free(to, result);
  return ok;
}

static void device_copies(check_env_t *env, const device_t *other, check_result_t *result) {
  const size_t largest = COPY_SIZES[COUNT(COPY_SIZES) - 1] + SLACK;
  unsigned char *src = malloc(largest), *back = malloc(largest);
  if (src == NULL || back == NULL) {
    fail(result, "malloc(%zu) failed", largest);
    goto out;
  }
  for (size_t s = 0; s < COUNT(COPY_SIZES); ++s)
    for (size_t o = 0; o < COUNT(COPY_OFFSETS); ++o) {
      fill_pattern(src, COPY_SIZES[s] + SLACK, (unsigned)(s * 3 + o));
      if (!device_to_device(env, env->device, other, COPY_SIZES[s], COPY_OFFSETS[o], src, back,
                            result) ||
          (other != env->device &&
           !device_to_device(env, other, env->device, COPY_SIZES[s], COPY_OFFSETS[o], src, back,
                             result)))
        goto out;
    }
out:
  free(src);
  free(back);
}

void check_copy_within_device(check_env_t *env, check_result_t *result) {
  device_copies(env, env->device, result);
}

void check_copy_between_devices(check_env_t *env, check_result_t *result) {
  if (env->peer == NULL) {
    unsupported(result, "this machine has one device: there is no second device to copy to");
    return;
  }
  device_copies(env, env->peer, result);
}
