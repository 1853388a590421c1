// The header alone, twice (include guard), compiled as C++17 by check_header.
#include <offload/liboffload.h>
#include <offload/liboffload.h>

int header_probe();
int header_probe() {
  ol_init_args_t args = OL_INIT_ARGS_INIT;
  ol_code_location_t loc = {"header_probe", __FILE__, __LINE__, 0};
  ol_result_t result = olInitWithCodeLoc(&loc);
  if (result == OL_SUCCESS)
    result = olInitWithArgsWithCodeLoc(&args, &loc);
  ol_errc_t code = result == OL_SUCCESS ? OL_ERRC_SUCCESS : result->Code;
  // The enumerations are distinct types in C++: an integer key needs a cast.
  uint32_t lanes = 0;
  ol_result_t info =
      olGetDeviceInfo(nullptr, static_cast<ol_device_info_t>(0x10000), sizeof lanes, &lanes);
  ol_kernel_launch_prop_t props[] = {OL_KERNEL_LAUNCH_PROP_END};
  ol_kernel_launch_size_args_t grid = {1, {1, 1, 1}, {1, 1, 1}, 0};
  ol_result_t launched =
      olLaunchKernelWithProperties(nullptr, nullptr, nullptr, nullptr, 0, &grid, props);
  return static_cast<int>(code + OL_VERSION_MINOR + LIBOFFLOAD_VERSION_MINOR) +
         (info != OL_SUCCESS) + (launched != OL_SUCCESS);
}
