/* Reports the header's layouts, so a test can compare them with the library's. */
#include <offload/host_kernel.h>

void layout(void *out) {
  size_t *o = (size_t *)out;
  o[0] = sizeof(ol_host_kernel_context_t);
  o[1] = offsetof(ol_host_kernel_context_t, dimensions);
  o[2] = offsetof(ol_host_kernel_context_t, group_id);
  o[3] = offsetof(ol_host_kernel_context_t, num_groups);
  o[4] = offsetof(ol_host_kernel_context_t, group_size);
  o[5] = offsetof(ol_host_kernel_context_t, dyn_shared);
  o[6] = offsetof(ol_host_kernel_context_t, dyn_shared_size);
  o[7] = sizeof(ol_host_kernel_marker_t);
  o[8] = OL_HOST_KERNEL_MAGIC;
  o[9] = OL_HOST_KERNEL_ABI_VERSION;
}
