/* The header alone, twice (include guard), compiled as C99 and C11 by check_header. */
#include <offload/liboffload.h>
#include <offload/liboffload.h>

int header_probe(void);
int header_probe(void) {
  ol_init_args_t args = OL_INIT_ARGS_INIT;
  ol_code_location_t loc = {"header_probe", __FILE__, __LINE__, 0};
  ol_result_t result = olInitWithCodeLoc(&loc);
  if (result == OL_SUCCESS)
    result = olInitWithArgsWithCodeLoc(&args, &loc);
  ol_errc_t code = result == OL_SUCCESS ? OL_ERRC_SUCCESS : result->Code;
  /* LLVM's launch (one packed argument buffer) and the extension with properties. */
  ol_kernel_launch_prop_t props[] = {OL_KERNEL_LAUNCH_PROP_END};
  ol_kernel_launch_size_args_t grid = {1, {1, 1, 1}, {1, 1, 1}, 0};
  ol_result_t launched = olLaunchKernel(NULL, NULL, NULL, NULL, 0, &grid);
  if (launched == OL_SUCCESS)
    launched = olLaunchKernelWithProperties(NULL, NULL, NULL, NULL, 0, &grid, props);
  return (int)(code + OL_VERSION_MAJOR + LIBOFFLOAD_VERSION_MAJOR) + (launched != OL_SUCCESS);
}
