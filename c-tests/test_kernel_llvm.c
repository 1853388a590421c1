/* LLVM-convention kernels (no marker): one pointer-sized value per argument, and the
 * function is called once per launch whatever the grid. */
#include "kernel_test.h"

int main(int argc, char **argv) {
  REQUIRE(argc == 2);
  REQUIRE_OK(olInit(NULL));
  ol_device_handle_t device = host_device();
  ol_program_handle_t program = load_program(device, argv[1]);
  ol_symbol_handle_t k = get_kernel(program, "k");
  ol_symbol_handle_t widths = get_kernel(program, "widths");
  ol_symbol_handle_t calls = get_global(program, "calls");
  void *calls_addr = NULL;
  CHECK_OK(olGetSymbolInfo(calls, OL_SYMBOL_INFO_GLOBAL_VARIABLE_ADDRESS, sizeof calls_addr,
                           &calls_addr));

  /* k(dst, value): dst[0] = value, dst[1] += 1, calls += 1; a grid of 4 x 8 x 2 still calls
   * it once. */
  long dst[2] = {0, 0};
  long *dst_ptr = dst;
  void *value = (void *)(uintptr_t)0x5eed;
  void *args[2] = {&dst_ptr, &value};
  size_t sizes[2] = {sizeof dst_ptr, sizeof value};
  ol_kernel_launch_size_args_t grid = {3, {4, 8, 2}, {16, 2, 1}, 0};
  ol_queue_handle_t queue = NULL;
  REQUIRE_OK(olCreateQueue(device, &queue));
  CHECK_OK(olLaunchKernel(queue, device, k, &grid, NULL, 2, args, sizes));
  CHECK_OK(olSyncQueue(queue));
  CHECK_EQ(dst[0], 0x5eed);
  CHECK_EQ(dst[1], 1);
  int counted = -1;
  CHECK_OK(olMemcpy(NULL, &counted, device, calls_addr, device, sizeof counted));
  CHECK_EQ(counted, 1);
  ol_kernel_launch_size_args_t one = grid_1d(1, 1);
  CHECK_OK(olLaunchKernel(NULL, device, k, &one, NULL, 2, args, sizes));
  CHECK_EQ(dst[1], 2);
  CHECK_OK(olMemcpy(NULL, &counted, device, calls_addr, device, sizeof counted));
  CHECK_EQ(counted, 2);

  /* Arguments smaller than a pointer arrive zero-extended. */
  unsigned long out[3] = {~0ul, ~0ul, ~0ul};
  unsigned long *out_ptr = out;
  unsigned char c = 0xC3;
  unsigned short s = 0xBEEF;
  unsigned int i = 0xDEADBEEF;
  void *wargs[4] = {&out_ptr, &c, &s, &i};
  size_t wsizes[4] = {sizeof out_ptr, sizeof c, sizeof s, sizeof i};
  CHECK_OK(olLaunchKernel(NULL, device, widths, &one, NULL, 4, wargs, wsizes));
  CHECK_EQ(out[0], 0xC3);
  CHECK_EQ(out[1], 0xBEEF);
  CHECK_EQ(out[2], 0xDEADBEEF);

  /* An argument larger than a pointer cannot be passed this way. */
  struct {
    void *a, *b;
  } wide = {NULL, NULL};
  void *bad_args[2] = {&dst_ptr, &wide};
  size_t bad_sizes[2] = {sizeof dst_ptr, sizeof wide};
  CHECK_ERR(INVALID_ARGUMENT, olLaunchKernel(NULL, device, k, &one, NULL, 2, bad_args, bad_sizes));
  CHECK_EQ(dst[1], 2);
  /* There are no groups and no shared memory for such a kernel. */
  size_t group_size = 0;
  CHECK_OK(olCalculateOptimalOccupancy(device, k, 0, &group_size));
  CHECK_EQ(group_size, 1);

  CHECK_OK(olDestroyQueue(queue));
  CHECK_OK(olDestroyProgram(program));
  CHECK_OK(olShutDown());
  return test_finish("test_kernel_llvm");
}
