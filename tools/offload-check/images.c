/* Picking the embedded image by the device's platform backend. The bytes are the
 * symbols embedded_images.S defines around each .incbin. */
#include "images.h"

extern const unsigned char offload_check_host_image[];
extern const unsigned char offload_check_host_image_end[];
extern const unsigned char offload_check_ptx_image[];
extern const unsigned char offload_check_ptx_image_end[];
#if OFFLOAD_CHECK_HAVE_AMDGPU
extern const unsigned char offload_check_amdgpu_image[];
extern const unsigned char offload_check_amdgpu_image_end[];
#endif

static image_t embedded(const unsigned char *begin, const unsigned char *end, const char *kind) {
  image_t image = {begin, (size_t)(end - begin), kind, NULL};
  return image;
}

image_t image_for_backend(ol_platform_backend_t backend) {
  image_t none = {NULL, 0, "none", NULL};
  switch (backend) {
  case OL_PLATFORM_BACKEND_HOST:
  case OL_PLATFORM_BACKEND_MPI:
    return embedded(offload_check_host_image, offload_check_host_image_end, "host ELF");
  case OL_PLATFORM_BACKEND_CUDA:
    /* PTX is text: the size given to olCreateProgram counts its terminating NUL too. */
    return embedded(offload_check_ptx_image, offload_check_ptx_image_end, "PTX");
  case OL_PLATFORM_BACKEND_AMDGPU:
#if OFFLOAD_CHECK_HAVE_AMDGPU
    return embedded(offload_check_amdgpu_image, offload_check_amdgpu_image_end,
                    "AMDGPU code objects");
#else
    none.why_none = "built without an AMDGPU code object (clang-19, ld.lld-19 and "
                    "clang-offload-packager-19 were not found at build time)";
    return none;
#endif
  default:
    none.why_none = "offload-check has no kernels for this backend";
    return none;
  }
}
