/* What a check is given: the device under test, the host device (which names host
 * memory in copies), another device for the checks between two devices, and the
 * device's program of offload-check's kernels, loaded on first use. */
#ifndef OFFLOAD_CHECK_ENV_H
#define OFFLOAD_CHECK_ENV_H

#include "devices.h"
#include "result.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct {
  const device_t *device;
  const device_t *host;
  const device_t *peer;   /* NULL when there is no second device */
  /* The kernels' program: loaded once per device by env_kernel. */
  bool program_tried;
  ol_program_handle_t program;
  check_status_t program_status; /* why there is no program: FAILED or UNSUPPORTED */
  char program_why[600];
} check_env_t;

/* Looks up kernel `name` in the device's program (loading it first). On failure the
 * result says why: UNSUPPORTED where no image was built for this backend, FAILED where
 * the library refused the image or the symbol. */
bool env_kernel(check_env_t *env, const char *name, ol_symbol_handle_t *kernel,
                check_result_t *result);

/* The program itself (loading it first), for global variables; NULL with the reason set. */
ol_program_handle_t env_program(check_env_t *env, check_result_t *result);

/* Destroys the program, if one was loaded. */
void env_release(check_env_t *env);

/* Whether host code may read and write the device's HOST and MANAGED memory directly:
 * always, except a remote server's on another node (only copies reach that). */
bool host_can_touch(const check_env_t *env, const void *memory);

/* One-dimensional launch shape. */
ol_kernel_launch_size_args_t grid_1d(uint32_t groups, uint32_t group_size, size_t shared);

#endif
