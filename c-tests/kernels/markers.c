/* Markers the library must judge: a kernel marked for a later ABI version, and (with
   -DBAD_MAGIC or -DORPHAN) images whose markers are wrong, so loading them fails. */
#include <offload/host_kernel.h>

/* A kernel built for a future ABI version 2. */
OL_HOST_EXPORT const ol_host_kernel_marker_t __ol_host_kernel_v2_future = {
    OL_HOST_KERNEL_MAGIC, 2u, 0u, 0u};
OL_HOST_EXPORT void future(void) {}

OL_HOST_KERNEL(fine, 0) {}

#ifdef BAD_MAGIC
OL_HOST_EXPORT const ol_host_kernel_marker_t __ol_host_kernel_v1_garbled = {
    0x12345678u, 1u, 0u, 0u};
OL_HOST_EXPORT void garbled(void) {}
#endif

#ifdef ORPHAN
/* A marker whose function is not exported. */
OL_HOST_EXPORT const ol_host_kernel_marker_t __ol_host_kernel_v1_hidden_kernel = {
    OL_HOST_KERNEL_MAGIC, 1u, 0u, 0u};
#endif
