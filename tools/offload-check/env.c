/* Loading the device's program of kernels once, and the small helpers every check uses. */
#include "env.h"

#include "images.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static void load_program(check_env_t *env) {
  env->program_tried = true;
  image_t image = image_for_backend(env->device->backend);
  if (image.bytes == NULL) {
    env->program_status = STATUS_UNSUPPORTED;
    snprintf(env->program_why, sizeof env->program_why, "%s", image.why_none);
    return;
  }
  ol_result_t r = olCreateProgram(env->device->handle, image.bytes, image.size, &env->program);
  if (r != OL_SUCCESS) {
    env->program = NULL;
    env->program_status = STATUS_FAILED;
    snprintf(env->program_why, sizeof env->program_why,
             "olCreateProgram (embedded %s image, %zu bytes): %s", image.kind, image.size,
             describe(r));
  }
}

ol_program_handle_t env_program(check_env_t *env, check_result_t *result) {
  if (!env->program_tried)
    load_program(env);
  if (env->program == NULL) {
    if (env->program_status == STATUS_UNSUPPORTED)
      unsupported(result, "%s", env->program_why);
    else
      fail(result, "%s", env->program_why);
  }
  return env->program;
}

bool env_kernel(check_env_t *env, const char *name, ol_symbol_handle_t *kernel,
                check_result_t *result) {
  ol_program_handle_t program = env_program(env, result);
  if (program == NULL)
    return false;
  char what[128];
  snprintf(what, sizeof what, "olGetSymbol(\"%s\", KERNEL)", name);
  return ol_ok(result, olGetSymbol(program, name, OL_SYMBOL_KIND_KERNEL, kernel), what);
}

void env_release(check_env_t *env) {
  if (env->program != NULL) {
    ol_result_t r = olDestroyProgram(env->program);
    if (r != OL_SUCCESS)
      fprintf(stderr, "offload-check: olDestroyProgram on device #%d: %s\n", env->device->index,
              describe(r));
  }
  env->program = NULL;
  env->program_tried = false;
}

bool host_can_touch(const check_env_t *env, const void *memory) {
  if (env->device->backend != OL_PLATFORM_BACKEND_MPI)
    return true;
  /* A server on this node shares its HOST and MANAGED memory with us (mapped read-write
   * here); elsewhere the address is only reserved. */
  FILE *maps = fopen("/proc/self/maps", "r");
  if (maps == NULL)
    return false;
  char line[512], perms[8];
  uintptr_t low = 0, high = 0, address = (uintptr_t)memory;
  bool writable = false;
  while (fgets(line, sizeof line, maps) != NULL)
    if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %7s", &low, &high, perms) == 3 &&
        address >= low && address < high) {
      writable = perms[0] == 'r' && perms[1] == 'w';
      break;
    }
  fclose(maps);
  return writable;
}

ol_kernel_launch_size_args_t grid_1d(uint32_t groups, uint32_t group_size, size_t shared) {
  ol_kernel_launch_size_args_t grid;
  memset(&grid, 0, sizeof grid);
  grid.Dimensions = 1;
  grid.NumGroups.x = groups;
  grid.NumGroups.y = 1;
  grid.NumGroups.z = 1;
  grid.GroupSize.x = group_size;
  grid.GroupSize.y = 1;
  grid.GroupSize.z = 1;
  grid.DynSharedMemory = shared;
  return grid;
}
