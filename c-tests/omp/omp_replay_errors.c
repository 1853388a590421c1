// The replay entry points given bad arguments, on our libomptarget: each answers
// OFFLOAD_FAIL (LLVM's answer 0 hides every failure) with a line on stderr, and never
// crashes; a replay address that is already taken puts the memory elsewhere and says by
// how much pointer arguments move. Prints "all checks passed" when all hold.
#include <stdint.h>
#include <stdio.h>

int __tgt_activate_record_replay(int64_t device, uint64_t size, void *vaddr, _Bool record,
                                 _Bool save_output, uint64_t *offset);
int __tgt_target_kernel_replay(void *loc, int64_t device, void *host_ptr, void *memory,
                               int64_t memory_size, void **args, intptr_t *offsets,
                               int32_t num_args, int32_t teams, int32_t threads,
                               uint64_t trip_count);

static int failures;
#define CHECK(cond, what)                                                              \
  do {                                                                                 \
    if (!(cond)) {                                                                     \
      failures++;                                                                      \
      printf("FAIL: %s\n", what);                                                      \
    }                                                                                  \
  } while (0)

static char taken[1 << 16];

int main(void) {
  int x = 1;
#pragma omp target map(tofrom : x)
  x++;  // registers the binary and initialises the devices
  uint64_t offset = 12345;
  CHECK(__tgt_activate_record_replay(99, 4096, 0, 0, 0, &offset) != 0,
        "a device that does not exist");
  CHECK(offset == 12345, "the offset written on a failure");
  char memory[64] = {0};
  void *args[1] = {memory};
  CHECK(__tgt_target_kernel_replay(0, 0, (void *)0x1, memory, -1, args, 0, 1, 1, 1, 0) != 0,
        "a negative memory size");
  CHECK(__tgt_target_kernel_replay(0, 0, (void *)0x1, memory, 64, args, 0, -2, 1, 1, 0) != 0,
        "a negative argument count");
  CHECK(__tgt_target_kernel_replay(0, 0, (void *)0x1, 0, 64, args, 0, 1, 1, 1, 0) != 0,
        "no memory");
  CHECK(__tgt_target_kernel_replay(0, 0, (void *)0x1, memory, 64, args, 0, 1, 1, 1, 0) != 0,
        "a region that is no kernel");
  // The program's own data lies where a replay asks for its memory: it goes elsewhere.
  void *at = (void *)(((uintptr_t)taken + 4095) & ~(uintptr_t)4095);
  CHECK(__tgt_activate_record_replay(0, 4096, at, 0, 0, &offset) == 0,
        "a replay whose address is taken");
  CHECK(offset != 0 && offset != 12345, "the offset of memory placed elsewhere");
  CHECK(x == 2, "the region ran");
  if (failures == 0)
    printf("all checks passed\n");
  return failures != 0;
}
