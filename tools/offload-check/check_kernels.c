/* Kernels from the embedded program: arguments of several sizes, a global variable, the
 * launch's dynamic shared memory, a cooperative launch, and (last) a faulting kernel.
 * Results are read back with copies, so the same code serves every kind of device. */
#include "buffers.h"
#include "checks.h"
#include "kernels/check_kernels.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool launch_and_sync(check_env_t *env, ol_symbol_handle_t kernel, const char *name,
                            const void *args, size_t args_size,
                            const ol_kernel_launch_size_args_t *grid, check_result_t *result) {
  ol_queue_handle_t queue = NULL;
  char what[96];
  snprintf(what, sizeof what, "olLaunchKernel(%s)", name);
  bool ok = ol_ok(result, olCreateQueue(env->device->handle, &queue), "olCreateQueue") &&
            ol_ok(result, olLaunchKernel(queue, env->device->handle, kernel, args, args_size, grid),
                  what) &&
            ol_ok(result, olSyncQueue(queue), "olSyncQueue after the launch");
  if (queue != NULL)
    ol_ok(result, olDestroyQueue(queue), "olDestroyQueue");
  return ok;
}

void check_kernel_arguments(check_env_t *env, check_result_t *result) {
  enum { GROUP = 64, GROUPS = 16, ITEMS = GROUP * GROUPS, N = 1000 };
  ol_symbol_handle_t kernel = NULL;
  if (!env_kernel(env, "write_sequence", &kernel, result))
    return;
  uint32_t *out = (uint32_t *)device_alloc(env->device, OL_ALLOC_TYPE_DEVICE,
                                           ITEMS * sizeof(uint32_t), result);
  uint32_t *back = malloc(ITEMS * sizeof(uint32_t));
  if (out == NULL || back == NULL ||
      !guard_device(env, env->device, out, ITEMS * sizeof(uint32_t), result))
    goto out;
  /* The offset's high half must be dropped by the kernel: a wrongly placed 8-byte
   * argument shows as a wrong sum. */
  const struct write_sequence_args args = {out, N, 3, 0x100000007ull};
  const ol_kernel_launch_size_args_t grid = grid_1d(GROUPS, GROUP, 0);
  if (!launch_and_sync(env, kernel, "write_sequence", &args, sizeof args, &grid, result) ||
      !copy_from(env, env->device, back, out, ITEMS * sizeof(uint32_t), result))
    goto out;
  for (uint32_t i = 0; i < N; ++i)
    if (back[i] != i * 3u + 7u) {
      fail(result, "out[%u] is %u, expected %u", i, back[i], i * 3u + 7u);
      goto out;
    }
  if (!guards_intact(result, "the kernel wrote past n", (const unsigned char *)back, 0,
                     N * sizeof(uint32_t), ITEMS * sizeof(uint32_t)))
    goto out;
out:
  if (back == NULL)
    fail(result, "malloc failed");
  device_free((unsigned char *)out, result);
  free(back);
}

void check_kernel_global(check_env_t *env, check_result_t *result) {
  ol_symbol_handle_t kernel = NULL, global = NULL;
  ol_program_handle_t program = env_program(env, result);
  if (program == NULL || !env_kernel(env, "bump_counter", &kernel, result) ||
      !ol_ok(result, olGetSymbol(program, "check_counter", OL_SYMBOL_KIND_GLOBAL_VARIABLE, &global),
             "olGetSymbol(\"check_counter\", GLOBAL_VARIABLE)"))
    return;
  void *address = NULL;
  size_t size = 0;
  if (!ol_ok(result,
             olGetSymbolInfo(global, OL_SYMBOL_INFO_GLOBAL_VARIABLE_ADDRESS, sizeof address,
                             &address),
             "olGetSymbolInfo(GLOBAL_VARIABLE_ADDRESS)") ||
      !ol_ok(result,
             olGetSymbolInfo(global, OL_SYMBOL_INFO_GLOBAL_VARIABLE_SIZE, sizeof size, &size),
             "olGetSymbolInfo(GLOBAL_VARIABLE_SIZE)"))
    return;
  if (size != sizeof(uint64_t) || address == NULL) {
    fail(result, "the global variable is %zu bytes at %p, expected %zu bytes at an address",
         size, address, sizeof(uint64_t));
    return;
  }
  uint64_t value = 0;
  if (!copy_from(env, env->device, &value, address, sizeof value, result))
    return;
  if (value != 1234) {
    fail(result, "the global variable's initial value reads as %" PRIu64 ", expected 1234",
         value);
    return;
  }
  value = 1000;
  const struct bump_counter_args args = {7};
  const ol_kernel_launch_size_args_t grid = grid_1d(2, 1, 0); /* group 0 alone bumps */
  if (!copy_to(env, env->device, address, &value, sizeof value, result) ||
      !launch_and_sync(env, kernel, "bump_counter", &args, sizeof args, &grid, result) ||
      !copy_from(env, env->device, &value, address, sizeof value, result))
    return;
  if (value != 1007)
    fail(result, "after writing 1000 and a kernel adding 7, the global variable is %" PRIu64,
         value);
}

void check_kernel_shared_memory(check_env_t *env, check_result_t *result) {
  enum { GROUPS = 8 };
  uint32_t group = 64;
  if (env->device->max_group_size != 0 && env->device->max_group_size < group)
    group = env->device->max_group_size;
  const size_t items = (size_t)group * GROUPS, bytes = items * sizeof(uint32_t);
  ol_symbol_handle_t kernel = NULL;
  if (!env_kernel(env, "reverse_in_groups", &kernel, result))
    return;
  uint32_t *in = (uint32_t *)device_alloc(env->device, OL_ALLOC_TYPE_DEVICE, bytes, result);
  uint32_t *out = in != NULL ? (uint32_t *)device_alloc(env->device, OL_ALLOC_TYPE_DEVICE, bytes,
                                                         result)
                             : NULL;
  uint32_t *bad = out != NULL ? (uint32_t *)device_alloc(env->device, OL_ALLOC_TYPE_DEVICE,
                                                         sizeof(uint32_t), result)
                              : NULL;
  uint32_t *host_in = malloc(bytes), *host_out = malloc(bytes), bad_groups = 0;
  if (host_in == NULL || host_out == NULL) {
    fail(result, "malloc(%zu) failed", bytes);
    goto out;
  }
  for (size_t i = 0; i < items; ++i)
    host_in[i] = (uint32_t)(i * 2654435761u);
  const struct reverse_in_groups_args args = {in, out, bad};
  const ol_kernel_launch_size_args_t grid = grid_1d(GROUPS, group, group * sizeof(uint32_t));
  if (bad == NULL || !copy_to(env, env->device, in, host_in, bytes, result) ||
      !copy_to(env, env->device, bad, &bad_groups, sizeof bad_groups, result) ||
      !launch_and_sync(env, kernel, "reverse_in_groups", &args, sizeof args, &grid, result) ||
      !copy_from(env, env->device, host_out, out, bytes, result) ||
      !copy_from(env, env->device, &bad_groups, bad, sizeof bad_groups, result))
    goto out;
  if (bad_groups != 0) {
    fail(result, "%u of %d groups found no (or too little) dynamic shared memory for %zu bytes",
         bad_groups, GROUPS, group * sizeof(uint32_t));
    goto out;
  }
  for (size_t i = 0; i < items; ++i) {
    const size_t base = i - i % group, mirrored = base + (group - 1 - i % group);
    if (host_out[i] != host_in[mirrored]) {
      fail(result, "item %zu read 0x%08x through shared memory, expected 0x%08x", i, host_out[i],
           host_in[mirrored]);
      goto out;
    }
  }
out:
  device_free((unsigned char *)in, result);
  device_free((unsigned char *)out, result);
  device_free((unsigned char *)bad, result);
  free(host_in);
  free(host_out);
}

void check_kernel_cooperative(check_env_t *env, check_result_t *result) {
  ol_symbol_handle_t kernel = NULL;
  if (!env_kernel(env, "all_resident", &kernel, result))
    return;
  ol_kernel_launch_size_args_t grid = grid_1d(1, 1, 0);
  uint32_t max_groups = 0;
  ol_result_t r = olGetKernelMaxCooperativeGroupCount(env->device->handle, kernel, &grid,
                                                      &max_groups);
  if (r != OL_SUCCESS && (r->Code == OL_ERRC_UNSUPPORTED || r->Code == OL_ERRC_UNIMPLEMENTED)) {
    unsupported(result, "%s", r->Details != NULL ? r->Details : describe(r));
    return;
  }
  if (!ol_ok(result, r, "olGetKernelMaxCooperativeGroupCount"))
    return;
  /* One group is a cooperative launch too (the path runs; there is just no one to wait
   * for): a host device with one worker thread allows no more. */
  if (max_groups == 0) {
    unsupported(result, "olGetKernelMaxCooperativeGroupCount allows no group of this kernel");
    return;
  }
  const uint32_t groups = max_groups < 8 ? max_groups : 8;
  const size_t bytes = (1 + (size_t)groups) * sizeof(uint32_t);
  uint32_t *seen = (uint32_t *)device_alloc(env->device, OL_ALLOC_TYPE_DEVICE, bytes, result);
  uint32_t host_seen[9] = {0};
  /* A GPU polls global memory far slower than a CPU core polls its cache. */
  const bool gpu = env->device->type == OL_DEVICE_TYPE_GPU;
  const struct all_resident_args args = {seen, gpu ? 2000000u : 200000000u};
  bool yes = true;
  const ol_kernel_launch_prop_t properties[] = {{OL_KERNEL_LAUNCH_PROP_TYPE_IS_COOPERATIVE, &yes},
                                                OL_KERNEL_LAUNCH_PROP_END};
  ol_queue_handle_t queue = NULL;
  grid = grid_1d(groups, 1, 0);
  if (seen == NULL || !copy_to(env, env->device, seen, host_seen, bytes, result) ||
      !ol_ok(result, olCreateQueue(env->device->handle, &queue), "olCreateQueue") ||
      !ol_ok(result,
             olLaunchKernelWithProperties(queue, env->device->handle, kernel, &args, sizeof args,
                                          &grid, properties),
             "olLaunchKernelWithProperties(cooperative)") ||
      !ol_ok(result, olSyncQueue(queue), "olSyncQueue after the cooperative launch") ||
      !copy_from(env, env->device, host_seen, seen, bytes, result))
    goto out;
  if (host_seen[0] != groups) {
    fail(result, "%u of %u groups ran", host_seen[0], groups);
    goto out;
  }
  for (uint32_t g = 0; g < groups; ++g)
    if (host_seen[1 + g] != 1) {
      fail(result, "group %u of %u gave up waiting for the others: they did not all run at once",
           g, groups);
      goto out;
    }
out:
  if (queue != NULL)
    ol_ok(result, olDestroyQueue(queue), "olDestroyQueue");
  device_free((unsigned char *)seen, result);
}

void check_kernel_fault(check_env_t *env, check_result_t *result) {
  if (env->device->backend == OL_PLATFORM_BACKEND_HOST) {
    unsupported(result, "kernels of the host device run in this process: a fault would end "
                        "offload-check itself");
    return;
  }
  if (env->device->backend == OL_PLATFORM_BACKEND_MPI) {
    unsupported(result, "a remote device's kernels run in its server's process: a fault would "
                        "end the server");
    return;
  }
  ol_symbol_handle_t kernel = NULL;
  if (!env_kernel(env, "store_to", &kernel, result))
    return;
  /* Address 0: mapped by no GPU. */
  const struct store_to_args args = {NULL};
  const ol_kernel_launch_size_args_t grid = grid_1d(1, 1, 0);
  ol_queue_handle_t queue = NULL;
  if (!ol_ok(result, olCreateQueue(env->device->handle, &queue), "olCreateQueue"))
    return;
  ol_result_t launched = olLaunchKernel(queue, env->device->handle, kernel, &args, sizeof args,
                                        &grid);
  ol_result_t synced = launched == OL_SUCCESS ? olSyncQueue(queue) : OL_SUCCESS;
  if (launched != OL_SUCCESS)
    ol_ok(result, launched, "olLaunchKernel(store_to)");
  else if (synced == OL_SUCCESS)
    fail(result, "a kernel storing to address 0 finished without an error from olSyncQueue");
  else /* the expected answer, kept as the check's note */
    snprintf(result->reason, sizeof result->reason, "olSyncQueue reported %s", describe(synced));
  /* The queue belongs to a spoiled context now: destroying it may fail too, and that is
   * expected, so its answer is not a failure of this check. */
  olDestroyQueue(queue);
}
