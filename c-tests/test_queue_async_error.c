/* An asynchronous error: a queued olMemcpy whose source allocation is freed before it
 * runs fails when it runs; the next olSyncQueue returns that error, naming olMemcpy and
 * saying that the commands enqueued after it were skipped. The queue works afterwards.
 * argv[1]: kernels/queue_work.c's program. */
#include "kernel_test.h"
#include "kernels/queue_work.h"

static void set_flag(void *user_data) { atomic_store((atomic_int *)user_data, 1); }

int main(int argc, char **argv) {
  REQUIRE(argc == 2);
  REQUIRE_OK(olInit());
  ol_device_handle_t device = host_device();
  ol_program_handle_t program = load_program(device, argv[1]);
  ol_symbol_handle_t add = get_kernel(program, "add");

  enum { N = 1024 };
  void *src = NULL, *dst = NULL;
  REQUIRE_OK(olMemAlloc(device, OL_ALLOC_TYPE_DEVICE, N * sizeof(int), &src));
  REQUIRE_OK(olMemAlloc(device, OL_ALLOC_TYPE_DEVICE, N * sizeof(int), &dst));
  const int one = 1;
  CHECK_OK(olMemFill(NULL, dst, sizeof one, &one, N * sizeof(int)));
  ol_queue_handle_t queue = NULL;
  REQUIRE_OK(olCreateQueue(device, &queue));

  gate_t gate = {0, 0};
  CHECK_OK(olLaunchHostFunction(queue, gate_callback, &gate));
  CHECK_OK(olMemcpy(queue, dst, device, src, device, N * sizeof(int)));
  /* Commands after the failing copy: a kernel, a host function, an event. */
  const struct add_args args = {dst, 10, N};
  ol_kernel_launch_size_args_t grid = grid_1d(N / 64, 64);
  CHECK_OK(olLaunchKernel(queue, device, add, &args, sizeof args, &grid));
  atomic_int ran = 0;
  CHECK_OK(olLaunchHostFunction(queue, set_flag, &ran));
  ol_event_handle_t after = NULL;
  REQUIRE_OK(olCreateEvent(queue, &after));
  /* The source goes away before the copy runs. */
  CHECK_OK(olMemFree(src));
  gate_open(&gate);

  ol_result_t r = olSyncQueue(queue);
  CHECK(r != OL_SUCCESS);
  printf("olSyncQueue: %s\n", details(r));
  CHECK(strstr(details(r), "olMemcpy") != NULL);
  CHECK(strstr(details(r), "skipped") != NULL);
  CHECK(!atomic_load(&ran));
  /* The event after the failure reports it too. */
  ol_result_t e = olSyncEvent(after);
  CHECK(e != OL_SUCCESS);
  printf("olSyncEvent: %s\n", details(e));
  int host[N];
  CHECK_OK(olMemcpy(NULL, host, device, dst, device, sizeof host));
  size_t changed = 0;
  for (size_t i = 0; i < N; ++i)
    changed += host[i] != 1;
  CHECK_EQ(changed, 0); /* neither the copy nor the kernel ran */

  /* The error was reported once; the queue runs new work. */
  CHECK_OK(olSyncQueue(queue));
  CHECK_OK(olLaunchKernel(queue, device, add, &args, sizeof args, &grid));
  CHECK_OK(olLaunchHostFunction(queue, set_flag, &ran));
  CHECK_OK(olSyncQueue(queue));
  CHECK(atomic_load(&ran));
  CHECK_OK(olMemcpy(NULL, host, device, dst, device, sizeof host));
  changed = 0;
  for (size_t i = 0; i < N; ++i)
    changed += host[i] != 11;
  CHECK_EQ(changed, 0);

  CHECK_OK(olDestroyEvent(after));
  CHECK_OK(olDestroyQueue(queue));
  CHECK_OK(olMemFree(dst));
  CHECK_OK(olDestroyProgram(program));
  CHECK_OK(olShutDown());
  return test_finish("test_queue_async_error");
}
