/* The device images embedded in offload-check at build time (embedded_images.S): the
 * host program, the PTX and, where clang-19 could build it, the AMDGPU code objects. */
#ifndef OFFLOAD_CHECK_IMAGES_H
#define OFFLOAD_CHECK_IMAGES_H

#include <offload/liboffload.h>

#include <stddef.h>

typedef struct {
  const unsigned char *bytes; /* NULL when none is embedded for this backend */
  size_t size;
  const char *kind;           /* "host ELF", "PTX", "AMDGPU code objects" */
  const char *why_none;       /* set when bytes is NULL */
} image_t;

/* The image for a device of `backend`. Remote devices (MPI) are servers' host devices,
 * which run the host program. */
image_t image_for_backend(ol_platform_backend_t backend);

#endif
