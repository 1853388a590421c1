/* Global variables of host programs: found with olGetSymbol, described by
 * olGetSymbolInfo (KIND, NAME, GLOBAL_VARIABLE_ADDRESS, GLOBAL_VARIABLE_SIZE), read and
 * written with olMemcpy around kernels that change them. Two programs built from the
 * same source (so with the same symbol names, different initial values) coexist. On the
 * device OFFLOAD_TEST_DEVICE names (kernel_test.h). */
#include "kernel_test.h"
#include "kernels/host_abi.h"

static ol_device_handle_t host; /* names the host side of copies */

typedef struct {
  ol_program_handle_t program;
  ol_symbol_handle_t counter, variant, bump;
  void *counter_addr, *variant_addr;
} loaded_t;

static loaded_t load(ol_device_handle_t device, const char *path) {
  loaded_t l;
  l.program = load_program(device, path);
  l.counter = get_global(l.program, "counter");
  l.variant = get_global(l.program, "variant");
  l.bump = get_kernel(l.program, "bump");
  size_t size = 0;
  CHECK_OK(olGetSymbolInfo(l.counter, OL_SYMBOL_INFO_GLOBAL_VARIABLE_ADDRESS,
                           sizeof l.counter_addr, &l.counter_addr));
  CHECK_OK(olGetSymbolInfo(l.counter, OL_SYMBOL_INFO_GLOBAL_VARIABLE_SIZE, sizeof size, &size));
  CHECK_EQ(size, sizeof(long long));
  CHECK_OK(olGetSymbolInfo(l.variant, OL_SYMBOL_INFO_GLOBAL_VARIABLE_ADDRESS,
                           sizeof l.variant_addr, &l.variant_addr));
  CHECK_OK(olGetSymbolInfo(l.variant, OL_SYMBOL_INFO_GLOBAL_VARIABLE_SIZE, sizeof size, &size));
  CHECK_EQ(size, sizeof(int));
  return l;
}

static long long read_counter(ol_device_handle_t device, const loaded_t *l) {
  long long value = -1;
  CHECK_OK(olMemcpy(NULL, &value, host, l->counter_addr, device, sizeof value));
  return value;
}

static void bump(ol_queue_handle_t queue, ol_device_handle_t device, const loaded_t *l,
                 int delta) {
  const struct bump_args args = {delta};
  ol_kernel_launch_size_args_t grid = grid_1d(1, 1);
  CHECK_OK(olLaunchKernel(queue, device, l->bump, &args, sizeof args, &grid));
}

static void check_info(ol_symbol_handle_t symbol, const char *name, ol_symbol_kind_t kind) {
  size_t size = 0;
  char text[64];
  ol_symbol_kind_t got_kind = 99;
  CHECK_OK(olGetSymbolInfoSize(symbol, OL_SYMBOL_INFO_NAME, &size));
  CHECK_EQ(size, strlen(name) + 1);
  CHECK_OK(olGetSymbolInfo(symbol, OL_SYMBOL_INFO_NAME, sizeof text, text));
  CHECK(strcmp(text, name) == 0);
  CHECK_OK(olGetSymbolInfoSize(symbol, OL_SYMBOL_INFO_KIND, &size));
  CHECK_EQ(size, sizeof(ol_symbol_kind_t));
  CHECK_OK(olGetSymbolInfo(symbol, OL_SYMBOL_INFO_KIND, sizeof got_kind, &got_kind));
  CHECK_EQ(got_kind, kind);
  /* Too small a buffer: INVALID_SIZE, nothing written. */
  memset(text, '#', sizeof text);
  CHECK_ERR(INVALID_SIZE, olGetSymbolInfo(symbol, OL_SYMBOL_INFO_NAME, strlen(name), text));
  CHECK(text[0] == '#');
}

int main(int argc, char **argv) {
  REQUIRE(argc == 3);
  REQUIRE_OK(olInit());
  ol_device_handle_t device = test_device();
  host = host_device();
  loaded_t one = load(device, argv[1]);
  loaded_t two = load(device, argv[2]);

  check_info(one.counter, "counter", OL_SYMBOL_KIND_GLOBAL_VARIABLE);
  check_info(two.variant, "variant", OL_SYMBOL_KIND_GLOBAL_VARIABLE);
  check_info(one.bump, "bump", OL_SYMBOL_KIND_KERNEL);
  size_t size = 0;
  CHECK_OK(olGetSymbolInfoSize(one.counter, OL_SYMBOL_INFO_GLOBAL_VARIABLE_ADDRESS, &size));
  CHECK_EQ(size, sizeof(void *));
  CHECK_OK(olGetSymbolInfoSize(one.counter, OL_SYMBOL_INFO_GLOBAL_VARIABLE_SIZE, &size));
  CHECK_EQ(size, sizeof(size_t));

  /* Same names, separate variables, each with its program's initial value. */
  CHECK(one.counter_addr != two.counter_addr);
  CHECK(one.counter_addr != NULL && two.counter_addr != NULL);
  CHECK_EQ(read_counter(device, &one), 100);
  CHECK_EQ(read_counter(device, &two), 200);
  int variant = 0;
  CHECK_OK(olMemcpy(NULL, &variant, host, two.variant_addr, device, sizeof variant));
  CHECK_EQ(variant, 2);
  CHECK_OK(olMemcpy(NULL, &variant, host, one.variant_addr, device, sizeof variant));
  CHECK_EQ(variant, 1);

  /* Kernels change their own program's variable only. */
  ol_queue_handle_t queue = NULL;
  REQUIRE_OK(olCreateQueue(device, &queue));
  bump(queue, device, &one, 5);
  bump(queue, device, &two, 7);
  bump(queue, device, &one, 10);
  CHECK_OK(olSyncQueue(queue));
  CHECK_EQ(read_counter(device, &one), 115);
  CHECK_EQ(read_counter(device, &two), 207);

  /* Written through olMemcpy (on a queue), then used by a kernel. */
  long long start = 1000000;
  CHECK_OK(olMemcpy(queue, one.counter_addr, device, &start, host, sizeof start));
  bump(queue, device, &one, -1);
  CHECK_OK(olSyncQueue(queue));
  CHECK_EQ(read_counter(device, &one), 999999);
  CHECK_EQ(read_counter(device, &two), 207);

  /* One program gone, the other still works. */
  CHECK_OK(olDestroyProgram(one.program));
  bump(NULL, device, &two, 3);
  CHECK_EQ(read_counter(device, &two), 210);
  /* A reloaded program starts from its initial values again. */
  loaded_t again = load(device, argv[1]);
  CHECK_EQ(read_counter(device, &again), 100);

  CHECK_OK(olDestroyQueue(queue));
  CHECK_OK(olDestroyProgram(two.program));
  CHECK_OK(olDestroyProgram(again.program));
  CHECK_OK(olShutDown());
  return test_finish("test_program_globals");
}
