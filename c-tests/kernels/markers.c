/* Markers the library must judge: kernels marked for an older and for a later ABI
   version than the library's (2), and (with -DBAD_MAGIC or -DORPHAN) images whose
   markers are wrong, so loading them fails. */
#include <offload/host_kernel.h>

/* A kernel built for ABI version 1 (liboffload 0.1, one pointer per argument): its
   marker is written by hand, as the 0.1 header's OL_HOST_KERNEL(old, 0) wrote it. */
OL_HOST_EXPORT const ol_host_kernel_marker_t __ol_host_kernel_v1_old = {
    OL_HOST_KERNEL_MAGIC, 1u, 0u, 0u};
OL_HOST_EXPORT void old(const ol_host_kernel_context_t *ctx, void *const *args) {
  (void)ctx;
  (void)args;
}

/* A kernel built for a future ABI version 3. */
OL_HOST_EXPORT const ol_host_kernel_marker_t __ol_host_kernel_v3_future = {
    OL_HOST_KERNEL_MAGIC, 3u, 0u, 0u};
OL_HOST_EXPORT void future(void) {}

OL_HOST_KERNEL_NO_ARGS(fine) {}

#ifdef BAD_MAGIC
/* Named as a version 2 marker, but its contents are not one. */
OL_HOST_EXPORT const ol_host_kernel_marker_t __ol_host_kernel_v2_garbled = {
    0x12345678u, 2u, 0u, 0u};
OL_HOST_EXPORT void garbled(void) {}
#endif

#ifdef ORPHAN
/* A marker whose function is not exported. */
OL_HOST_EXPORT const ol_host_kernel_marker_t __ol_host_kernel_v2_hidden_kernel = {
    OL_HOST_KERNEL_MAGIC, 2u, 0u, 0u};
#endif
