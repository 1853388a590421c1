/* The argument structs of offload-check's kernels (kernels/check_kernels.c), shared by
 * the kernels and the checks that launch them: olLaunchKernel's ArgumentsData is one of
 * these, laid out by the C compiler on both sides. Fixed-width types only, so the host,
 * NVPTX and amdgcn builds agree on every offset. */
#ifndef OFFLOAD_CHECK_KERNEL_ARGS_H
#define OFFLOAD_CHECK_KERNEL_ARGS_H

#include <stdint.h>

/* write_sequence: out[i] = i * scale + (uint32_t)offset for every i < n. Arguments of
 * three sizes (pointer, 4 and 8 bytes) so that a wrong layout shows in the result. */
struct write_sequence_args {
  uint32_t *out;
  uint32_t n;
  uint32_t scale;
  uint64_t offset;
};

/* bump_counter: the global variable check_counter += delta, once per launch. */
struct bump_counter_args {
  uint64_t delta;
};

/* reverse_in_groups: each group copies its items of in[] into dynamic shared memory and
 * writes them back reversed within the group: out[g*size + i] = in[g*size + size-1-i].
 * bad[0] counts groups whose dynamic shared memory was missing or too small. */
struct reverse_in_groups_args {
  const uint32_t *in;
  uint32_t *out;
  uint32_t *bad;
};

/* all_resident: seen[0] counts arriving groups; each group then waits (at most `spins`
 * polls) until all have arrived, and sets seen[1 + g] to 1 if they did, 2 if it gave up.
 * Only a launch whose groups all run at once finishes with every seen[1 + g] == 1. */
struct all_resident_args {
  uint32_t *seen;
  uint64_t spins;
};

/* store_to: stores 1 to `target` (the fault check passes an address no device maps). */
struct store_to_args {
  uint32_t *target;
};

#endif
