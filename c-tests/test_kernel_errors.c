/* Every bad input of the queue, event, program, symbol and launch functions: NULL,
 * stale and garbage handles, wrong symbol kinds, unknown symbols, out-of-range enums,
 * bad arguments and launch shapes the host device cannot run. Each is refused with its
 * error code and a Details, and nothing crashes. argv[1]: kernels/host_abi.c's program.
 * On the device OFFLOAD_TEST_DEVICE names (kernel_test.h); the few checks of the host
 * device's own rules (an exported function is a kernel there; a marked kernel takes
 * exactly its marker's ArgumentsSize) run on the host device only. */
#include "kernel_test.h"
#include "kernels/host_abi.h"

static ol_device_handle_t device;

static void bad_queues(void) {
  ol_queue_handle_t stale = NULL, live = NULL;
  REQUIRE_OK(olCreateQueue(device, &stale));
  REQUIRE_OK(olCreateQueue(device, &live));
  CHECK_OK(olDestroyQueue(stale));
  ol_queue_handle_t garbage = GARBAGE_HANDLE(ol_queue_handle_t);
  ol_event_handle_t event = NULL;
  REQUIRE_OK(olCreateEvent(live, &event));
  size_t size = 0;
  bool flag = false;
  unsigned ms = 0;
  char byte = 0;

  CHECK_ERR(INVALID_NULL_HANDLE, olCreateQueue(NULL, &live));
  CHECK_ERR(INVALID_DEVICE, olCreateQueue(GARBAGE_HANDLE(ol_device_handle_t), &live));
  CHECK_ERR(INVALID_NULL_POINTER, olCreateQueue(device, NULL));
  ol_queue_handle_t cases[3] = {NULL, stale, garbage};
  const ol_errc_t codes[3] = {OL_ERRC_INVALID_NULL_HANDLE, OL_ERRC_INVALID_QUEUE,
                              OL_ERRC_INVALID_QUEUE};
  for (int i = 0; i < 3; ++i) {
    ol_queue_handle_t q = cases[i];
    ol_errc_t code = codes[i];
    printf("queue case %d (%p)\n", i, (void *)q);
    check_result(olSyncQueue(q), code, "olSyncQueue", __FILE__, __LINE__);
    check_result(olDestroyQueue(q), code, "olDestroyQueue", __FILE__, __LINE__);
    ol_event_handle_t out = NULL;
    check_result(olCreateEvent(q, &out), code, "olCreateEvent", __FILE__, __LINE__);
    CHECK(out == NULL);
    check_result(olWaitEvents(q, &event, 1), code, "olWaitEvents", __FILE__, __LINE__);
    check_result(olLaunchHostFunction(q, sleep_callback, &ms), code, "olLaunchHostFunction",
                 __FILE__, __LINE__);
    check_result(olGetQueueInfo(q, OL_QUEUE_INFO_EMPTY, sizeof flag, &flag), code,
                 "olGetQueueInfo", __FILE__, __LINE__);
    check_result(olGetQueueInfoSize(q, OL_QUEUE_INFO_EMPTY, &size), code,
                 "olGetQueueInfoSize", __FILE__, __LINE__);
    if (q != NULL) { /* a NULL queue means "synchronous" for copies and fills */
      check_result(olMemcpy(q, &byte, device, &byte, device, 1), code, "olMemcpy", __FILE__,
                   __LINE__);
      check_result(olMemFill(q, &byte, 1, &byte, 1), code, "olMemFill", __FILE__, __LINE__);
    }
  }
  /* The live queue is untouched by all of that. */
  CHECK_ERR(INVALID_ENUMERATION, olGetQueueInfo(live, 2, sizeof flag, &flag));
  CHECK_ERR(INVALID_ENUMERATION, olGetQueueInfo(live, 0x7fffffffu, sizeof flag, &flag));
  CHECK_ERR(INVALID_ENUMERATION, olGetQueueInfoSize(live, 2, &size));
  CHECK_ERR(INVALID_NULL_POINTER, olGetQueueInfo(live, OL_QUEUE_INFO_EMPTY, sizeof flag, NULL));
  CHECK_ERR(INVALID_NULL_POINTER, olGetQueueInfoSize(live, OL_QUEUE_INFO_EMPTY, NULL));
  CHECK_ERR(INVALID_SIZE, olGetQueueInfo(live, OL_QUEUE_INFO_EMPTY, 0, &flag));
  CHECK_ERR(INVALID_NULL_POINTER, olLaunchHostFunction(live, NULL, NULL));
  CHECK_ERR(INVALID_NULL_POINTER, olCreateEvent(live, NULL));
  CHECK_OK(olSyncQueue(live));
  CHECK_OK(olDestroyEvent(event));
  CHECK_OK(olDestroyQueue(live));
}

static void bad_events(void) {
  ol_queue_handle_t queue = NULL;
  REQUIRE_OK(olCreateQueue(device, &queue));
  ol_event_handle_t live = NULL, stale = NULL;
  REQUIRE_OK(olCreateEvent(queue, &live));
  REQUIRE_OK(olCreateEvent(queue, &stale));
  CHECK_OK(olDestroyEvent(stale));
  ol_event_handle_t garbage = GARBAGE_HANDLE(ol_event_handle_t);
  size_t size = 0;
  bool flag = false;
  float ms = 0;

  ol_event_handle_t cases[3] = {NULL, stale, garbage};
  const ol_errc_t codes[3] = {OL_ERRC_INVALID_NULL_HANDLE, OL_ERRC_INVALID_EVENT,
                              OL_ERRC_INVALID_EVENT};
  for (int i = 0; i < 3; ++i) {
    ol_event_handle_t e = cases[i];
    ol_errc_t code = codes[i];
    printf("event case %d (%p)\n", i, (void *)e);
    check_result(olSyncEvent(e), code, "olSyncEvent", __FILE__, __LINE__);
    check_result(olDestroyEvent(e), code, "olDestroyEvent", __FILE__, __LINE__);
    check_result(olGetEventInfo(e, OL_EVENT_INFO_IS_COMPLETE, sizeof flag, &flag), code,
                 "olGetEventInfo", __FILE__, __LINE__);
    check_result(olGetEventInfoSize(e, OL_EVENT_INFO_IS_COMPLETE, &size), code,
                 "olGetEventInfoSize", __FILE__, __LINE__);
    check_result(olGetEventElapsedTime(e, live, &ms), code, "olGetEventElapsedTime(bad, live)",
                 __FILE__, __LINE__);
    check_result(olGetEventElapsedTime(live, e, &ms), code, "olGetEventElapsedTime(live, bad)",
                 __FILE__, __LINE__);
    ol_event_handle_t list[2] = {live, e};
    check_result(olWaitEvents(queue, list, 2), code, "olWaitEvents", __FILE__, __LINE__);
  }
  CHECK_ERR(INVALID_NULL_POINTER, olWaitEvents(queue, NULL, 1));
  CHECK_ERR(INVALID_NULL_POINTER, olGetEventElapsedTime(live, live, NULL));
  CHECK_ERR(INVALID_ENUMERATION, olGetEventInfo(live, 2, sizeof flag, &flag));
  CHECK_ERR(INVALID_ENUMERATION, olGetEventInfoSize(live, 0xffffffffu, &size));
  CHECK_ERR(INVALID_NULL_POINTER, olGetEventInfo(live, OL_EVENT_INFO_QUEUE, sizeof queue, NULL));
  CHECK_ERR(INVALID_NULL_POINTER, olGetEventInfoSize(live, OL_EVENT_INFO_QUEUE, NULL));
  /* The live event still works; a failed olWaitEvents enqueued nothing. */
  CHECK_OK(olSyncEvent(live));
  CHECK_OK(olSyncQueue(queue));
  CHECK_OK(olDestroyEvent(live));
  CHECK_OK(olDestroyQueue(queue));
}

static void bad_programs_and_symbols(const char *path) {
  ol_program_handle_t program = load_program(device, path);
  ol_program_handle_t stale = load_program(device, path);
  ol_symbol_handle_t stale_kernel = get_kernel(stale, "saxpy");
  ol_symbol_handle_t stale_global = get_global(stale, "counter");
  CHECK_OK(olDestroyProgram(stale));
  ol_program_handle_t garbage = GARBAGE_HANDLE(ol_program_handle_t);
  ol_symbol_handle_t symbol = NULL;
  size_t size = 0;
  char name[32];
  ol_kernel_launch_size_args_t grid = grid_1d(1, 1);

  CHECK_ERR(INVALID_NULL_HANDLE, olGetSymbol(NULL, "saxpy", OL_SYMBOL_KIND_KERNEL, &symbol));
  CHECK_ERR(INVALID_NULL_HANDLE, olDestroyProgram(NULL));
  CHECK_ERR(INVALID_ARGUMENT, olGetSymbol(stale, "saxpy", OL_SYMBOL_KIND_KERNEL, &symbol));
  CHECK_ERR(INVALID_ARGUMENT, olDestroyProgram(stale));
  CHECK_ERR(INVALID_ARGUMENT, olGetSymbol(garbage, "saxpy", OL_SYMBOL_KIND_KERNEL, &symbol));
  CHECK_ERR(INVALID_ARGUMENT, olDestroyProgram(garbage));
  CHECK(symbol == NULL);

  CHECK_ERR(INVALID_NULL_POINTER, olGetSymbol(program, NULL, OL_SYMBOL_KIND_KERNEL, &symbol));
  CHECK_ERR(INVALID_NULL_POINTER, olGetSymbol(program, "saxpy", OL_SYMBOL_KIND_KERNEL, NULL));
  CHECK_ERR(INVALID_ENUMERATION, olGetSymbol(program, "saxpy", 2, &symbol));
  CHECK_ERR(INVALID_ENUMERATION, olGetSymbol(program, "saxpy", 0x80000000u, &symbol));
  CHECK_DETAILS(NOT_FOUND, "nope", olGetSymbol(program, "nope", OL_SYMBOL_KIND_KERNEL, &symbol));
  CHECK_ERR(NOT_FOUND, olGetSymbol(program, "nope", OL_SYMBOL_KIND_GLOBAL_VARIABLE, &symbol));
  CHECK_ERR(NOT_FOUND, olGetSymbol(program, "", OL_SYMBOL_KIND_KERNEL, &symbol));
  /* The ABI's markers are not symbols of the program. */
  CHECK_ERR(NOT_FOUND,
            olGetSymbol(program, "__ol_host_kernel_v2_saxpy", OL_SYMBOL_KIND_GLOBAL_VARIABLE,
                        &symbol));
  CHECK_ERR(NOT_FOUND,
            olGetSymbol(program, "__ol_host_kernel_v2_saxpy", OL_SYMBOL_KIND_KERNEL, &symbol));
  /* Wrong kinds. */
  CHECK_ERR(SYMBOL_KIND, olGetSymbol(program, "counter", OL_SYMBOL_KIND_KERNEL, &symbol));
  CHECK_ERR(SYMBOL_KIND, olGetSymbol(program, "saxpy", OL_SYMBOL_KIND_GLOBAL_VARIABLE, &symbol));
  /* On the host every exported function is a kernel (LLVM's convention), so a plain
   * function asked for as a global is the wrong kind; on a GPU it is a device function,
   * neither kernel nor global. */
  if (device_is_host(device))
    CHECK_ERR(SYMBOL_KIND,
              olGetSymbol(program, "helper_function", OL_SYMBOL_KIND_GLOBAL_VARIABLE, &symbol));
  CHECK(symbol == NULL);
  ol_symbol_handle_t saxpy = get_kernel(program, "saxpy");
  ol_symbol_handle_t counter = get_global(program, "counter");
  void *address = NULL;
  CHECK_ERR(SYMBOL_KIND, olGetSymbolInfo(saxpy, OL_SYMBOL_INFO_GLOBAL_VARIABLE_ADDRESS,
                                         sizeof address, &address));
  CHECK_ERR(SYMBOL_KIND,
            olGetSymbolInfo(saxpy, OL_SYMBOL_INFO_GLOBAL_VARIABLE_SIZE, sizeof size, &size));
  CHECK_ERR(SYMBOL_KIND, olGetSymbolInfoSize(saxpy, OL_SYMBOL_INFO_GLOBAL_VARIABLE_ADDRESS, &size));
  CHECK_ERR(SYMBOL_KIND, olGetSymbolInfoSize(saxpy, OL_SYMBOL_INFO_GLOBAL_VARIABLE_SIZE, &size));
  CHECK(address == NULL);
  long long value = 0;
  CHECK_ERR(SYMBOL_KIND, olLaunchKernel(NULL, device, counter, &value, sizeof value, &grid));
  size_t group = 0;
  uint32_t max = 0;
  CHECK_ERR(SYMBOL_KIND, olCalculateOptimalOccupancy(device, counter, 0, &group));
  CHECK_ERR(SYMBOL_KIND, olGetKernelMaxCooperativeGroupCount(device, counter, &grid, &max));

  /* Bad symbol handles. */
  ol_symbol_handle_t bad[3] = {NULL, stale_kernel, GARBAGE_HANDLE(ol_symbol_handle_t)};
  const ol_errc_t codes[3] = {OL_ERRC_INVALID_NULL_HANDLE, OL_ERRC_INVALID_ARGUMENT,
                              OL_ERRC_INVALID_ARGUMENT};
  for (int i = 0; i < 3; ++i) {
    printf("symbol case %d (%p)\n", i, (void *)bad[i]);
    check_result(olGetSymbolInfo(bad[i], OL_SYMBOL_INFO_NAME, sizeof name, name), codes[i],
                 "olGetSymbolInfo", __FILE__, __LINE__);
    check_result(olGetSymbolInfoSize(bad[i], OL_SYMBOL_INFO_NAME, &size), codes[i],
                 "olGetSymbolInfoSize", __FILE__, __LINE__);
    check_result(olLaunchKernel(NULL, device, bad[i], NULL, 0, &grid), codes[i],
                 "olLaunchKernel", __FILE__, __LINE__);
    check_result(olLaunchKernelWithProperties(NULL, device, bad[i], NULL, 0, &grid, NULL),
                 codes[i], "olLaunchKernelWithProperties", __FILE__, __LINE__);
    check_result(olCalculateOptimalOccupancy(device, bad[i], 0, &group), codes[i],
                 "olCalculateOptimalOccupancy", __FILE__, __LINE__);
    check_result(olGetKernelMaxCooperativeGroupCount(device, bad[i], &grid, &max), codes[i],
                 "olGetKernelMaxCooperativeGroupCount", __FILE__, __LINE__);
  }
  CHECK_ERR(INVALID_ARGUMENT, olGetSymbolInfo(stale_global, OL_SYMBOL_INFO_GLOBAL_VARIABLE_ADDRESS,
                                              sizeof address, &address));
  CHECK_ERR(INVALID_ENUMERATION, olGetSymbolInfo(counter, 4, sizeof name, name));
  CHECK_ERR(INVALID_ENUMERATION, olGetSymbolInfoSize(counter, 0xffffu, &size));
  CHECK_ERR(INVALID_NULL_POINTER, olGetSymbolInfo(counter, OL_SYMBOL_INFO_NAME, sizeof name, NULL));
  CHECK_ERR(INVALID_NULL_POINTER, olGetSymbolInfoSize(counter, OL_SYMBOL_INFO_NAME, NULL));
  CHECK_ERR(INVALID_SIZE, olGetSymbolInfo(counter, OL_SYMBOL_INFO_GLOBAL_VARIABLE_SIZE, 4, &size));
  CHECK_ERR(INVALID_NULL_POINTER, olCalculateOptimalOccupancy(device, saxpy, 0, NULL));
  CHECK_ERR(INVALID_NULL_POINTER, olGetKernelMaxCooperativeGroupCount(device, saxpy, &grid, NULL));
  CHECK_ERR(INVALID_NULL_POINTER, olGetKernelMaxCooperativeGroupCount(device, saxpy, NULL, &max));
  CHECK_ERR(INVALID_NULL_HANDLE, olCalculateOptimalOccupancy(NULL, saxpy, 0, &group));
  CHECK_OK(olDestroyProgram(program));
}

static uint32_t *dim(ol_dimensions_t *d, int i) { return i == 0 ? &d->x : i == 1 ? &d->y : &d->z; }

/* Launches with bad arguments or shapes. */
static void bad_launches(const char *path) {
  ol_program_handle_t program = load_program(device, path);
  ol_symbol_handle_t saxpy = get_kernel(program, "saxpy");
  ol_symbol_handle_t empty = get_kernel(program, "empty");
  ol_symbol_handle_t reduce = get_kernel(program, "reduce");
  ol_symbol_handle_t all_resident = get_kernel(program, "all_resident");
  /* What kernels read and write: memory of the device, which the host reads too. */
  float *x = shared_alloc(device, 64 * sizeof *x), *y = shared_alloc(device, 64 * sizeof *y);
  for (int i = 0; i < 64; ++i)
    x[i] = y[i] = (float)i;
  /* saxpy's arguments, in a buffer with room for more bytes than they take. */
  union {
    struct saxpy_args args;
    unsigned char bytes[sizeof(struct saxpy_args) + 16];
  } buffer;
  memset(&buffer, 0, sizeof buffer);
  buffer.args = (struct saxpy_args){2.0f, x, y, 64};
  const struct saxpy_args *args = &buffer.args;
  char args_size[32]; /* what the Details of a wrong size must name */
  snprintf(args_size, sizeof args_size, "%zu", sizeof *args);
  ol_kernel_launch_size_args_t grid = grid_1d(1, 64);
  ol_queue_handle_t queue = NULL;
  REQUIRE_OK(olCreateQueue(device, &queue));

  CHECK_ERR(INVALID_NULL_HANDLE, olLaunchKernel(NULL, NULL, saxpy, args, sizeof *args, &grid));
  CHECK_ERR(INVALID_DEVICE, olLaunchKernel(NULL, GARBAGE_HANDLE(ol_device_handle_t), saxpy, args,
                                           sizeof *args, &grid));
  CHECK_ERR(INVALID_NULL_POINTER, olLaunchKernel(NULL, device, saxpy, args, sizeof *args, NULL));
  /* No buffer but a size (LLVM's INVALID_ARGUMENT): synchronously, on a queue, with
   * properties. */
  CHECK_DETAILS(INVALID_ARGUMENT, "ArgumentsData",
                olLaunchKernel(NULL, device, saxpy, NULL, sizeof *args, &grid));
  CHECK_ERR(INVALID_ARGUMENT, olLaunchKernel(queue, device, saxpy, NULL, sizeof *args, &grid));
  CHECK_ERR(INVALID_ARGUMENT,
            olLaunchKernelWithProperties(queue, device, saxpy, NULL, 1, &grid, NULL));
  /* A buffer shorter than the kernel's parameters, sizeof(struct saxpy_args). */
  CHECK_DETAILS(INVALID_ARGUMENT, args_size,
                olLaunchKernel(NULL, device, saxpy, args, sizeof *args - 8, &grid));
  CHECK_ERR(INVALID_ARGUMENT, olLaunchKernel(NULL, device, saxpy, args, 1, &grid));
  CHECK_ERR(INVALID_ARGUMENT, olLaunchKernel(NULL, device, saxpy, NULL, 0, &grid));
  if (device_is_host(device)) {
    /* A marked kernel's ArgumentsSize must be exactly its marker's, longer refused too.
     * (A GPU kernel takes a longer buffer: a C struct's trailing padding.) */
    CHECK_DETAILS(INVALID_ARGUMENT, args_size,
                  olLaunchKernel(queue, device, saxpy, buffer.bytes, sizeof buffer.bytes, &grid));
    /* A kernel without arguments takes 0 bytes. */
    CHECK_ERR(INVALID_ARGUMENT, olLaunchKernel(NULL, device, empty, args, sizeof *args, &grid));
    CHECK_ERR(INVALID_ARGUMENT, olLaunchKernel(queue, device, empty, args, 1, &grid));
  }
  /* Shapes. */
  ol_kernel_launch_size_args_t g;
  for (size_t dims = 0; dims <= 4; dims += 4) {
    g = grid;
    g.Dimensions = dims;
    CHECK_ERR(INVALID_ARGUMENT, olLaunchKernel(NULL, device, saxpy, args, sizeof *args, &g));
  }
  for (int d = 0; d < 3; ++d) {
    g = (ol_kernel_launch_size_args_t){3, {1, 1, 1}, {1, 1, 1}, 0};
    *dim(&g.NumGroups, d) = 0;
    CHECK_ERR(INVALID_ARGUMENT, olLaunchKernel(queue, device, empty, NULL, 0, &g));
    g = (ol_kernel_launch_size_args_t){3, {1, 1, 1}, {1, 1, 1}, 0};
    *dim(&g.GroupSize, d) = 0;
    CHECK_ERR(INVALID_ARGUMENT, olLaunchKernel(queue, device, empty, NULL, 0, &g));
  }
  const uint32_t max_group = device_u32(device, OL_DEVICE_INFO_MAX_WORK_GROUP_SIZE);
  ol_dimensions_t per_dim = {0, 0, 0};
  CHECK_OK(olGetDeviceInfo(device, OL_DEVICE_INFO_MAX_WORK_GROUP_SIZE_PER_DIMENSION,
                           sizeof per_dim, &per_dim));
  printf("max work-group size %u (per dimension %u x %u x %u)\n", max_group, per_dim.x,
         per_dim.y, per_dim.z);
  g = grid_1d(1, max_group);
  CHECK_OK(olLaunchKernel(NULL, device, empty, NULL, 0, &g));
  g = grid_1d(1, max_group + 1);
  CHECK_DETAILS(INVALID_ARGUMENT, "group", olLaunchKernel(NULL, device, empty, NULL, 0, &g));
  /* Within each dimension's limit, but more items than a group may hold. */
  uint32_t side = 1;
  while (side * side * side <= max_group)
    ++side;
  if (side <= per_dim.x && side <= per_dim.y && side <= per_dim.z) {
    g = (ol_kernel_launch_size_args_t){3, {1, 1, 1}, {side, side, side}, 0};
    CHECK_ERR(INVALID_ARGUMENT, olLaunchKernel(NULL, device, empty, NULL, 0, &g));
  }
  /* Dynamic shared memory: up to the local memory size. */
  const uint64_t local_mem = device_u64(device, OL_DEVICE_INFO_WORK_GROUP_LOCAL_MEM_SIZE);
  printf("work-group local memory %" PRIu64 " bytes\n", local_mem);
  REQUIRE(local_mem < SIZE_MAX);
  unsigned *in = shared_alloc(device, sizeof *in);
  unsigned long long *partial = shared_alloc(device, sizeof *partial);
  in[0] = 5;
  partial[0] = 0;
  const struct reduce_args rargs = {in, partial};
  g = grid_1d(1, 1);
  g.DynSharedMemory = (size_t)local_mem;
  CHECK_OK(olLaunchKernel(NULL, device, reduce, &rargs, sizeof rargs, &g));
  CHECK_EQ(partial[0], 5);
  g.DynSharedMemory = (size_t)local_mem + 1;
  CHECK_ERR(OUT_OF_RESOURCES, olLaunchKernel(NULL, device, reduce, &rargs, sizeof rargs, &g));
  g.DynSharedMemory = SIZE_MAX;
  CHECK_ERR(OUT_OF_RESOURCES, olLaunchKernel(queue, device, reduce, &rargs, sizeof rargs, &g));

  /* Cooperative launches: at most olGetKernelMaxCooperativeGroupCount groups. (The AMDGPU
   * backend has no cooperative launches yet: it answers UNSUPPORTED, and this part is
   * skipped there, saying so.) */
  uint32_t max_coop = 0;
  int *seen = NULL;
  bool yes = true;
  g = grid_1d(1, 1);
  const ol_result_t coop_count =
      olGetKernelMaxCooperativeGroupCount(device, all_resident, &g, &max_coop);
  if (device_is_amdgpu(device) && coop_count != NULL && coop_count->Code == OL_ERRC_UNSUPPORTED) {
    printf("cooperative launches skipped: %s\n", coop_count->Details);
  } else {
    CHECK_OK(coop_count);
    printf("max cooperative groups: %u\n", max_coop);
    CHECK(max_coop >= 1);
    ol_kernel_launch_prop_t coop[2] = {{OL_KERNEL_LAUNCH_PROP_TYPE_IS_COOPERATIVE, &yes},
                                       OL_KERNEL_LAUNCH_PROP_END};
    seen = shared_alloc(device, ((size_t)max_coop + 2) * sizeof *seen);
    memset(seen, 0, ((size_t)max_coop + 2) * sizeof *seen);
    const struct all_resident_args cargs = {seen};
    g = grid_1d(max_coop, 1);
    CHECK_OK(olLaunchKernelWithProperties(queue, device, all_resident, &cargs, sizeof cargs, &g,
                                          coop));
    CHECK_OK(olSyncQueue(queue));
    CHECK_EQ(seen[0], max_coop);
    for (uint32_t i = 0; i < max_coop; ++i)
      CHECK_EQ(seen[1 + i], 1);
    g = grid_1d(max_coop + 1, 1);
    seen[0] = 0;
    CHECK_DETAILS(INVALID_ARGUMENT, "cooperative",
                  olLaunchKernelWithProperties(NULL, device, all_resident, &cargs, sizeof cargs,
                                               &g, coop));
    CHECK_EQ(seen[0], 0);
    /* On a queue too: refused when enqueued, not when it runs. */
    CHECK_DETAILS(INVALID_ARGUMENT, "cooperative",
                  olLaunchKernelWithProperties(queue, device, all_resident, &cargs, sizeof cargs,
                                               &g, coop));
    CHECK_OK(olSyncQueue(queue));
    CHECK_EQ(seen[0], 0);
  }
  /* Unknown property types. */
  ol_kernel_launch_prop_t odd[2] = {{7, &yes}, OL_KERNEL_LAUNCH_PROP_END};
  CHECK_ERR(INVALID_ENUMERATION,
            olLaunchKernelWithProperties(NULL, device, saxpy, args, sizeof *args, &grid, odd));
  /* None of the refused launches ran: y is unchanged; a good launch still works, and so
   * does one with no properties (NULL). */
  CHECK_OK(olSyncQueue(queue));
  size_t changed = 0;
  for (int i = 0; i < 64; ++i)
    changed += y[i] != (float)i;
  CHECK_EQ(changed, 0);
  CHECK_OK(olLaunchKernel(queue, device, saxpy, args, sizeof *args, &grid));
  CHECK_OK(olSyncQueue(queue));
  CHECK(y[63] == 3.0f * 63.0f);
  CHECK_OK(olLaunchKernelWithProperties(queue, device, saxpy, args, sizeof *args, &grid, NULL));
  CHECK_OK(olSyncQueue(queue));
  CHECK(y[63] == 5.0f * 63.0f);
  if (seen != NULL)
    CHECK_OK(olMemFree(seen));
  CHECK_OK(olMemFree(in));
  CHECK_OK(olMemFree(partial));
  CHECK_OK(olMemFree(x));
  CHECK_OK(olMemFree(y));
  CHECK_OK(olDestroyQueue(queue));
  CHECK_OK(olDestroyProgram(program));
}

int main(int argc, char **argv) {
  REQUIRE(argc == 2);
  REQUIRE_OK(olInit());
  device = test_device();
  bad_queues();
  bad_events();
  bad_programs_and_symbols(argv[1]);
  bad_launches(argv[1]);
  CHECK_OK(olShutDown());
  return test_finish("test_kernel_errors");
}
