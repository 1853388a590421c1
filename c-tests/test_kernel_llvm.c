/* LLVM-convention kernels (no marker): the argument buffer is an array of pointer-sized
 * values, one per argument, and the function is called once per launch whatever the
 * grid. A buffer that is not a whole number of such values is refused. */
#include "kernel_test.h"

int main(int argc, char **argv) {
  REQUIRE(argc == 2);
  REQUIRE_OK(olInit());
  ol_device_handle_t device = host_device();
  ol_program_handle_t program = load_program(device, argv[1]);
  ol_symbol_handle_t k = get_kernel(program, "k");
  ol_symbol_handle_t widths = get_kernel(program, "widths");
  ol_symbol_handle_t nothing = get_kernel(program, "nothing");
  ol_symbol_handle_t calls = get_global(program, "calls");
  void *calls_addr = NULL;
  CHECK_OK(olGetSymbolInfo(calls, OL_SYMBOL_INFO_GLOBAL_VARIABLE_ADDRESS, sizeof calls_addr,
                           &calls_addr));

  /* k(dst, value): dst[0] = value, dst[1] += 1, calls += 1; a grid of 4 x 8 x 2 still calls
   * it once. */
  long dst[2] = {0, 0};
  const uintptr_t args[2] = {(uintptr_t)dst, 0x5eed};
  ol_kernel_launch_size_args_t grid = {3, {4, 8, 2}, {16, 2, 1}, 0};
  ol_queue_handle_t queue = NULL;
  REQUIRE_OK(olCreateQueue(device, &queue));
  CHECK_OK(olLaunchKernel(queue, device, k, args, sizeof args, &grid));
  CHECK_OK(olSyncQueue(queue));
  CHECK_EQ(dst[0], 0x5eed);
  CHECK_EQ(dst[1], 1);
  int counted = -1;
  CHECK_OK(olMemcpy(NULL, &counted, device, calls_addr, device, sizeof counted));
  CHECK_EQ(counted, 1);
  ol_kernel_launch_size_args_t one = grid_1d(1, 1);
  CHECK_OK(olLaunchKernel(NULL, device, k, args, sizeof args, &one));
  CHECK_EQ(dst[1], 2);
  CHECK_OK(olMemcpy(NULL, &counted, device, calls_addr, device, sizeof counted));
  CHECK_EQ(counted, 2);

  /* An argument smaller than a pointer occupies a whole slot, widened by the caller. */
  unsigned long out[3] = {~0ul, ~0ul, ~0ul};
  const unsigned char c = 0xC3;
  const unsigned short s = 0xBEEF;
  const unsigned int i = 0xDEADBEEF;
  const uintptr_t wargs[4] = {(uintptr_t)out, c, s, i};
  CHECK_OK(olLaunchKernel(NULL, device, widths, wargs, sizeof wargs, &one));
  CHECK_EQ(out[0], 0xC3);
  CHECK_EQ(out[1], 0xBEEF);
  CHECK_EQ(out[2], 0xDEADBEEF);

  /* No arguments: NULL and 0. */
  CHECK_OK(olLaunchKernel(NULL, device, nothing, NULL, 0, &one));

  /* ArgumentsSize not a multiple of a pointer's size: not a list of pointer-sized values.
   * NULL ArgumentsData with a size. None of them runs. */
  const uintptr_t three[3] = {(uintptr_t)dst, 1, 2};
  CHECK_ERR(INVALID_ARGUMENT, olLaunchKernel(NULL, device, k, three, sizeof args + 4, &one));
  CHECK_ERR(INVALID_ARGUMENT, olLaunchKernel(NULL, device, k, three, sizeof args - 1, &one));
  CHECK_ERR(INVALID_ARGUMENT, olLaunchKernel(NULL, device, k, three, sizeof(int), &one));
  CHECK_ERR(INVALID_ARGUMENT, olLaunchKernel(NULL, device, k, NULL, sizeof args, &one));
  CHECK_OK(olSyncQueue(queue));
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
