/* A reduction through dynamic shared memory: each group sums its items in
 * ctx->dyn_shared (DynSharedMemory bytes, private to the group), for group sizes that
 * are and are not powers of two. On the device OFFLOAD_TEST_DEVICE names (kernel_test.h). */
#include "kernel_test.h"
#include "kernels/host_abi.h"

static ol_device_handle_t host; /* names the host side of copies */

static void reduce_with(ol_device_handle_t device, ol_symbol_handle_t reduce, uint32_t groups,
                        uint32_t group_size) {
  const size_t n = (size_t)groups * group_size;
  unsigned *in = malloc(n * sizeof *in);
  unsigned long long *partial = malloc(groups * sizeof *partial);
  REQUIRE(in != NULL && partial != NULL);
  unsigned long long total = 0;
  for (size_t i = 0; i < n; ++i) {
    in[i] = (unsigned)((i * 2654435761u) % 100003u);
    total += in[i];
  }
  void *d_in = NULL, *d_partial = NULL;
  REQUIRE_OK(olMemAlloc(device, OL_ALLOC_TYPE_DEVICE, n * sizeof *in, &d_in));
  REQUIRE_OK(olMemAlloc(device, OL_ALLOC_TYPE_DEVICE, groups * sizeof *partial, &d_partial));
  ol_queue_handle_t queue = NULL;
  REQUIRE_OK(olCreateQueue(device, &queue));
  const unsigned char junk = 0xAB;
  CHECK_OK(olMemFill(queue, d_partial, 1, &junk, groups * sizeof *partial));
  CHECK_OK(olMemcpy(queue, d_in, device, in, host, n * sizeof *in));

  ol_kernel_launch_size_args_t grid = grid_1d(groups, group_size);
  grid.DynSharedMemory = group_size * sizeof(unsigned long long);
  const struct reduce_args args = {d_in, d_partial};
  CHECK_OK(olLaunchKernel(queue, device, reduce, &args, sizeof args, &grid));
  CHECK_OK(olMemcpy(queue, partial, host, d_partial, device, groups * sizeof *partial));
  CHECK_OK(olSyncQueue(queue));

  size_t wrong = 0;
  unsigned long long sum = 0;
  for (uint32_t g = 0; g < groups; ++g) {
    unsigned long long want = 0;
    for (size_t i = (size_t)g * group_size; i < (size_t)(g + 1) * group_size; ++i)
      want += in[i];
    if (partial[g] != want && wrong++ < 5)
      fprintf(stderr, "group %u of %u x %u: sum %llu, want %llu\n", g, groups, group_size,
              partial[g], want);
    sum += partial[g];
  }
  CHECK_EQ(wrong, 0);
  CHECK_EQ(sum, total);
  CHECK_OK(olDestroyQueue(queue));
  CHECK_OK(olMemFree(d_in));
  CHECK_OK(olMemFree(d_partial));
  free(in);
  free(partial);
}

int main(int argc, char **argv) {
  REQUIRE(argc == 2);
  REQUIRE_OK(olInit());
  ol_device_handle_t device = test_device();
  host = host_device();
  ol_program_handle_t program = load_program(device, argv[1]);
  ol_symbol_handle_t reduce = get_kernel(program, "reduce");

  reduce_with(device, reduce, 512, 256);
  reduce_with(device, reduce, 333, 200);
  reduce_with(device, reduce, 1, 1);
  /* A group as large as the device allows, with as much shared memory as it needs. */
  uint32_t max_group = device_u32(device, OL_DEVICE_INFO_MAX_WORK_GROUP_SIZE);
  uint64_t local_mem = device_u64(device, OL_DEVICE_INFO_WORK_GROUP_LOCAL_MEM_SIZE);
  uint32_t big = max_group;
  if ((uint64_t)big * sizeof(unsigned long long) > local_mem)
    big = (uint32_t)(local_mem / sizeof(unsigned long long));
  reduce_with(device, reduce, 8, big);

  CHECK_OK(olDestroyProgram(program));
  CHECK_OK(olShutDown());
  return test_finish("test_kernel_reduce");
}
