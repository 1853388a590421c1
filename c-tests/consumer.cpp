// The header from C++17, linked and called.
#include <offload/liboffload.h>

#include <cstdio>
#include <vector>

int main() {
  ol_init_args_t args = OL_INIT_ARGS_INIT;
  if (olInitWithArgs(&args) != OL_SUCCESS)
    return 1;
  std::vector<ol_device_handle_t> devices;
  ol_result_t r = olIterateDevices(
      [](ol_device_handle_t device, void *user_data) {
        static_cast<std::vector<ol_device_handle_t> *>(user_data)->push_back(device);
        return true;
      },
      &devices);
  if (r != OL_SUCCESS || devices.empty())
    return 1;
  // The enumerations are distinct types in C++: a plain integer needs a cast.
  ol_device_type_t type = static_cast<ol_device_type_t>(0);
  r = olGetDeviceInfo(devices.back(), OL_DEVICE_INFO_TYPE, sizeof type, &type);
  if (r != OL_SUCCESS || type != OL_DEVICE_TYPE_HOST)
    return 1;
  r = olGetDeviceInfo(devices.back(), static_cast<ol_device_info_t>(0x7fff), sizeof type, &type);
  if (r == nullptr || r->Code != OL_ERRC_INVALID_ENUMERATION)
    return 1;
  void *mem = nullptr;
  r = olMemAlloc(devices.back(), OL_ALLOC_TYPE_HOST, 64, &mem);
  if (r != OL_SUCCESS)
    return 1;
  r = olMemFree(mem);
  const ol_error_struct_t *bad = olMemFree(mem);
  if (r != OL_SUCCESS || bad == nullptr || bad->Code != OL_ERRC_INVALID_ARGUMENT)
    return 1;
  if (olShutDown() != OL_SUCCESS)
    return 1;
  std::printf("C++ consumer: %zu device(s), ok\n", devices.size());
  return 0;
}
