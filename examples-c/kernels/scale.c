/* scale.c: x[i] *= a for every i < n. For the host device: cc -shared -fPIC; the same
 * file builds for an NVIDIA GPU with clang --target=nvptx64-nvidia-cuda. */
#include <offload/host_kernel.h>

struct scale_args { float *x; float a; size_t n; }; /* what the host passes */

OL_HOST_KERNEL(scale, struct scale_args) {
  OL_HOST_FOR_EACH_INDEX(ctx, i, args->n) /* this work-group's share of 0..n-1 */
    args->x[i] *= args->a;
}
