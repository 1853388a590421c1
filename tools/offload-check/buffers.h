/* Memory the checks move and compare: patterned bytes, byte-for-byte verification with
 * the first difference as the reason, and device buffers with guard bytes around the
 * part an operation may touch. */
#ifndef OFFLOAD_CHECK_BUFFERS_H
#define OFFLOAD_CHECK_BUFFERS_H

#include "env.h"

#include <stdbool.h>
#include <stddef.h>

/* The byte every guard holds: a copy or fill that writes outside its range shows. */
#define GUARD_BYTE 0xa5

/* Bytes that differ at every position and for every seed (so shifted data shows). */
void fill_pattern(unsigned char *bytes, size_t size, unsigned seed);

/* Compares `size` bytes; on a difference records "<what>: byte N is 0x.., expected 0x..". */
bool same_bytes(check_result_t *result, const char *what, const unsigned char *got,
                const unsigned char *want, size_t size);

/* Host memory for a copy: pageable (malloc) or pinned (OL_ALLOC_TYPE_HOST of the device
 * under test). A pinned buffer the host cannot touch (a remote server's on another node)
 * is refused as unsupported. */
unsigned char *host_buffer(check_env_t *env, bool pinned, size_t size, check_result_t *result);
void free_host_buffer(check_env_t *env, bool pinned, unsigned char *buffer,
                      check_result_t *result);

/* olMemAlloc of `type` on `device`, `size` bytes; NULL with the reason on failure. */
unsigned char *device_alloc(const device_t *device, ol_alloc_type_t type, size_t size,
                            check_result_t *result);
void device_free(unsigned char *memory, check_result_t *result);

/* Synchronous copies between host memory (the host device) and `device`'s memory. */
bool copy_to(check_env_t *env, const device_t *device, void *dst, const void *src, size_t size,
             check_result_t *result);
bool copy_from(check_env_t *env, const device_t *device, void *dst, const void *src, size_t size,
               check_result_t *result);

/* Sets `size` bytes of `device`'s memory to GUARD_BYTE (through a copy). */
bool guard_device(check_env_t *env, const device_t *device, void *memory, size_t size,
                  check_result_t *result);

/* Whether bytes [0, begin) and [end, size) of `bytes` are all GUARD_BYTE. */
bool guards_intact(check_result_t *result, const char *what, const unsigned char *bytes,
                   size_t begin, size_t end, size_t size);

#endif
