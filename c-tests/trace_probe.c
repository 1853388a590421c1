/* Run with OFFLOAD_TRACE=1 by check_trace.cmake: makes a few calls, some of them
 * failing, one with a code location, both ways of initialising (olInit takes no
 * argument, olInitWithArgs one), and calls whose arguments the trace writes as text (an
 * enumerator, a string, a launch's sizes, an info value), so the trace has something to
 * show. */
#include "offload_test.h"

int main(void) {
  REQUIRE_OK(olInit());
  ol_init_args_t args = OL_INIT_ARGS_INIT;
  REQUIRE_OK(olInitWithArgs(&args)); /* a second reference */
  ol_device_handle_t host = host_device();
  void *mem = NULL;
  REQUIRE_OK(olMemAlloc(host, OL_ALLOC_TYPE_DEVICE, 1024, &mem));
  CHECK_ERR(INVALID_SIZE, olMemAlloc(host, OL_ALLOC_TYPE_DEVICE, 0, &mem));
  ol_code_location_t loc = {"main", "trace_probe.c", 42, 7};
  void *other = NULL;
  CHECK_OK(olMemAllocWithCodeLoc(host, OL_ALLOC_TYPE_HOST, 64, &other, &loc));
  CHECK_OK(olMemFreeWithCodeLoc(other, &loc));
  CHECK_OK(olMemFree(mem));

  ol_device_type_t type = OL_DEVICE_TYPE_DEFAULT;
  CHECK_OK(olGetDeviceInfo(host, OL_DEVICE_INFO_TYPE, sizeof type, &type));
  size_t name_size = 0;
  CHECK_OK(olGetDeviceInfoSize(host, OL_DEVICE_INFO_NAME, &name_size));
  CHECK_ERR(INVALID_ENUMERATION, olMemAlloc(host, (ol_alloc_type_t)7, 64, &mem));
  ol_symbol_handle_t kernel = NULL;
  CHECK_ERR(INVALID_NULL_HANDLE, olGetSymbol(NULL, "saxpy", OL_SYMBOL_KIND_KERNEL, &kernel));
  ol_kernel_launch_size_args_t size = {1, {4, 1, 1}, {256, 1, 1}, 0};
  CHECK_ERR(INVALID_NULL_HANDLE, olLaunchKernel(NULL, host, NULL, NULL, 0, &size));
  ol_queue_handle_t queue = NULL;
  CHECK_OK(olCreateQueue(host, &queue));
  CHECK_OK(olDestroyQueue(queue));
  CHECK_OK(olShutDown());
  CHECK_OK(olShutDown());
  return test_finish("trace_probe");
}
