/* Run with OFFLOAD_TRACE=1 by check_trace.cmake: makes a few calls, one of them failing,
 * one with a code location, and both ways of initialising (olInit takes no argument,
 * olInitWithArgs one), so the trace has something to show. */
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
  CHECK_OK(olShutDown());
  CHECK_OK(olShutDown());
  return test_finish("trace_probe");
}
