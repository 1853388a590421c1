/* Queues and events: cross-queue waits, host functions in queue order among kernels,
 * elapsed time between events, queue and event info, and asynchronous olMemcpy /
 * olMemFill. argv[1]: kernels/queue_work.c's program. On the device OFFLOAD_TEST_DEVICE
 * names (kernel_test.h). */
#include "kernel_test.h"
#include "kernels/queue_work.h"

static ol_device_handle_t device;
static ol_device_handle_t host; /* names the host side of copies */
static ol_symbol_handle_t add_kernel, append_kernel;

typedef struct {
  atomic_int *flag;
  int seen;
} observe_t;

static void slow_then_set(void *user_data) {
  sleep_ms(100);
  atomic_store((atomic_int *)user_data, 1);
}

static void observe(void *user_data) {
  observe_t *o = (observe_t *)user_data;
  o->seen = atomic_load(o->flag);
}

/* Queue B waits for queue A's event, which follows a slow host function and a fill. */
static void cross_queue_wait(void) {
  ol_queue_handle_t a = NULL, b = NULL;
  REQUIRE_OK(olCreateQueue(device, &a));
  REQUIRE_OK(olCreateQueue(device, &b));
  enum { N = 4096 };
  void *data = NULL;
  REQUIRE_OK(olMemAlloc(device, OL_ALLOC_TYPE_DEVICE, N * sizeof(int), &data));
  atomic_int flag = 0;
  const int forty_one = 41;
  CHECK_OK(olLaunchHostFunction(a, slow_then_set, &flag));
  CHECK_OK(olMemFill(a, data, sizeof forty_one, &forty_one, N * sizeof(int)));
  ol_event_handle_t a_done = NULL;
  REQUIRE_OK(olCreateEvent(a, &a_done));

  double start = now_ms();
  CHECK_OK(olWaitEvents(b, &a_done, 1));
  observe_t o = {&flag, -1};
  CHECK_OK(olLaunchHostFunction(b, observe, &o));
  const struct add_args args = {data, 1, N};
  ol_kernel_launch_size_args_t grid = grid_1d(N / 128, 128);
  CHECK_OK(olLaunchKernel(b, device, add_kernel, &args, sizeof args, &grid));
  int *out = malloc(N * sizeof *out);
  REQUIRE(out != NULL);
  CHECK_OK(olMemcpy(b, out, host, data, device, N * sizeof(int)));
  CHECK_OK(olSyncQueue(b));
  CHECK(now_ms() - start >= 90);
  CHECK_EQ(o.seen, 1);
  size_t wrong = 0;
  for (size_t i = 0; i < N; ++i)
    wrong += out[i] != 42;
  CHECK_EQ(wrong, 0);
  /* The event is complete now, and belongs to queue A. */
  bool complete = false;
  ol_queue_handle_t owner = NULL;
  CHECK_OK(olGetEventInfo(a_done, OL_EVENT_INFO_IS_COMPLETE, sizeof complete, &complete));
  CHECK(complete);
  CHECK_OK(olGetEventInfo(a_done, OL_EVENT_INFO_QUEUE, sizeof owner, &owner));
  CHECK(owner == a);

  /* Waiting on several events at once, one of them already complete. */
  ol_event_handle_t events[3] = {a_done, NULL, NULL};
  gate_t gate = {0, 0};
  CHECK_OK(olLaunchHostFunction(a, gate_callback, &gate));
  REQUIRE_OK(olCreateEvent(a, &events[1]));
  REQUIRE_OK(olCreateEvent(b, &events[2]));
  observe_t o2 = {&gate.open, -1};
  CHECK_OK(olWaitEvents(b, events, 3));
  CHECK_OK(olLaunchHostFunction(b, observe, &o2));
  sleep_ms(20);
  CHECK(o2.seen == -1); /* still waiting for the gate */
  bool empty = true;
  CHECK_OK(olGetQueueInfo(b, OL_QUEUE_INFO_EMPTY, sizeof empty, &empty));
  CHECK(!empty);
  gate_open(&gate);
  CHECK_OK(olSyncQueue(b));
  CHECK_EQ(o2.seen, 1);
  CHECK_OK(olSyncQueue(a));
  for (int i = 0; i < 3; ++i)
    CHECK_OK(olDestroyEvent(events[i]));
  /* No events at all: nothing to wait for. */
  CHECK_ERR(INVALID_NULL_POINTER, olWaitEvents(b, NULL, 0)); /* LLVM: even for none */;
  CHECK_OK(olSyncQueue(b));
  free(out);
  CHECK_OK(olMemFree(data));
  CHECK_OK(olDestroyQueue(a));
  CHECK_OK(olDestroyQueue(b));
}

typedef struct {
  int *log;
  unsigned *count;
  int tag;
} append_t;

static void append_callback(void *user_data) {
  append_t *a = (append_t *)user_data;
  a->log[(*a->count)++] = a->tag;
}

/* Host functions and kernels on one queue run in the order they were enqueued. Kept
 * short of what CUDA queues behind a host function that has not returned: on an H100
 * and an H200 (driver 580) the 57th kernel launched behind one blocked in
 * cuLaunchKernel until the host function returned (host functions alone did not). */
static void host_functions_in_order(void) {
  enum { STEPS = 60 };
  ol_queue_handle_t queue = NULL;
  REQUIRE_OK(olCreateQueue(device, &queue));
  /* Written by kernels and host functions alike: memory both reach. */
  int *log = shared_alloc(device, STEPS * sizeof *log);
  unsigned *count = shared_alloc(device, sizeof *count);
  memset(log, 0, STEPS * sizeof *log);
  *count = 0;
  append_t *calls = calloc(STEPS, sizeof *calls);
  REQUIRE(calls != NULL);
  gate_t gate = {0, 0};
  CHECK_OK(olLaunchHostFunction(queue, gate_callback, &gate));
  for (int i = 0; i < STEPS; ++i) {
    if (i % 3 == 2) {
      const struct append_args args = {log, count, i};
      ol_kernel_launch_size_args_t grid = grid_1d(2, 4);
      CHECK_OK(olLaunchKernel(queue, device, append_kernel, &args, sizeof args, &grid));
    } else {
      calls[i] = (append_t){log, count, i};
      CHECK_OK(olLaunchHostFunction(queue, append_callback, &calls[i]));
    }
  }
  CHECK_EQ(*count, 0); /* nothing ran yet: the gate holds the queue */
  gate_open(&gate);
  CHECK_OK(olSyncQueue(queue));
  CHECK_EQ(*count, STEPS);
  size_t wrong = 0;
  for (int i = 0; i < STEPS; ++i)
    wrong += log[i] != i;
  CHECK_EQ(wrong, 0);
  CHECK_OK(olDestroyQueue(queue));
  CHECK_OK(olMemFree(log));
  CHECK_OK(olMemFree(count));
  free(calls);
}

static void elapsed_time(void) {
  ol_queue_handle_t queue = NULL;
  REQUIRE_OK(olCreateQueue(device, &queue));
  ol_event_handle_t start = NULL, end = NULL;
  unsigned ms = 60;
  REQUIRE_OK(olCreateEvent(queue, &start));
  CHECK_OK(olLaunchHostFunction(queue, sleep_callback, &ms));
  REQUIRE_OK(olCreateEvent(queue, &end));
  float elapsed = -1;
  /* Waits for both events. */
  CHECK_OK(olGetEventElapsedTime(start, end, &elapsed));
  printf("elapsed time over a %u ms host function: %.3f ms\n", ms, (double)elapsed);
  CHECK(elapsed >= 55.0f && elapsed < 5000.0f);
  float zero = -1;
  CHECK_OK(olGetEventElapsedTime(start, start, &zero));
  CHECK(zero == 0.0f);
  CHECK_OK(olDestroyEvent(start));
  CHECK_OK(olDestroyEvent(end));
  CHECK_OK(olDestroyQueue(queue));
}

static void queue_and_event_info(void) {
  ol_queue_handle_t queue = NULL;
  REQUIRE_OK(olCreateQueue(device, &queue));
  size_t size = 0;
  CHECK_OK(olGetQueueInfoSize(queue, OL_QUEUE_INFO_DEVICE, &size));
  CHECK_EQ(size, sizeof(ol_device_handle_t));
  CHECK_OK(olGetQueueInfoSize(queue, OL_QUEUE_INFO_EMPTY, &size));
  CHECK_EQ(size, sizeof(bool));
  ol_device_handle_t owner = NULL;
  CHECK_OK(olGetQueueInfo(queue, OL_QUEUE_INFO_DEVICE, sizeof owner, &owner));
  CHECK(owner == device);
  bool empty = false;
  CHECK_OK(olGetQueueInfo(queue, OL_QUEUE_INFO_EMPTY, sizeof empty, &empty));
  CHECK(empty);

  gate_t gate = {0, 0};
  CHECK_OK(olLaunchHostFunction(queue, gate_callback, &gate));
  ol_event_handle_t event = NULL;
  REQUIRE_OK(olCreateEvent(queue, &event));
  CHECK_OK(olGetQueueInfo(queue, OL_QUEUE_INFO_EMPTY, sizeof empty, &empty));
  CHECK(!empty);
  CHECK_OK(olGetEventInfoSize(event, OL_EVENT_INFO_QUEUE, &size));
  CHECK_EQ(size, sizeof(ol_queue_handle_t));
  CHECK_OK(olGetEventInfoSize(event, OL_EVENT_INFO_IS_COMPLETE, &size));
  CHECK_EQ(size, sizeof(bool));
  ol_queue_handle_t event_queue = NULL;
  CHECK_OK(olGetEventInfo(event, OL_EVENT_INFO_QUEUE, sizeof event_queue, &event_queue));
  CHECK(event_queue == queue);
  bool complete = true;
  CHECK_OK(olGetEventInfo(event, OL_EVENT_INFO_IS_COMPLETE, sizeof complete, &complete));
  CHECK(!complete);
  gate_open(&gate);
  CHECK_OK(olSyncEvent(event));
  CHECK_OK(olGetEventInfo(event, OL_EVENT_INFO_IS_COMPLETE, sizeof complete, &complete));
  CHECK(complete);
  CHECK_OK(olSyncQueue(queue));
  CHECK_OK(olGetQueueInfo(queue, OL_QUEUE_INFO_EMPTY, sizeof empty, &empty));
  CHECK(empty);
  /* The extension: the vendor's queue on a GPU (a CUstream, an hsa_queue_t *), none on
   * the host device, whose queues are its own. */
  void *native = NULL;
  ol_result_t native_result =
      olGetQueueInfo(queue, OL_QUEUE_INFO_NATIVE_HANDLE, sizeof native, &native);
  if (device_is_cuda(device) || device_is_amdgpu(device)) {
    CHECK_OK(native_result);
    CHECK(native != NULL);
  } else if (device_is_host(device)) {
    CHECK_ERR(UNSUPPORTED, native_result);
  }
  /* Too small a buffer. */
  CHECK_ERR(INVALID_SIZE, olGetQueueInfo(queue, OL_QUEUE_INFO_DEVICE, 4, &owner));
  CHECK_ERR(INVALID_SIZE, olGetEventInfo(event, OL_EVENT_INFO_QUEUE, 0, &event_queue));
  /* An event of an empty queue is complete at once. */
  ol_event_handle_t at_once = NULL;
  REQUIRE_OK(olCreateEvent(queue, &at_once));
  CHECK_OK(olSyncEvent(at_once));
  CHECK_OK(olDestroyEvent(at_once));
  CHECK_OK(olDestroyEvent(event));
  CHECK_OK(olDestroyQueue(queue));
}

/* olMemcpy and olMemFill with a queue return before they run. */
static void async_copies(void) {
  enum { N = 1 << 16 };
  ol_queue_handle_t queue = NULL;
  REQUIRE_OK(olCreateQueue(device, &queue));
  void *d1 = NULL, *d2 = NULL;
  REQUIRE_OK(olMemAlloc(device, OL_ALLOC_TYPE_DEVICE, N * sizeof(uint64_t), &d1));
  REQUIRE_OK(olMemAlloc(device, OL_ALLOC_TYPE_DEVICE, N * sizeof(uint64_t), &d2));
  uint64_t *copy = malloc(N * sizeof *copy);
  REQUIRE(copy != NULL);
  for (size_t i = 0; i < N; ++i)
    copy[i] = i;
  gate_t gate = {0, 0};
  CHECK_OK(olLaunchHostFunction(queue, gate_callback, &gate));
  const uint64_t pattern = 0x0123456789ABCDEFull;
  CHECK_OK(olMemFill(queue, d1, sizeof pattern, &pattern, N * sizeof(uint64_t)));
  CHECK_OK(olMemcpy(queue, d2, device, d1, device, N * sizeof(uint64_t)));
  const uint16_t half = 0xBEEF;
  CHECK_OK(olMemFill(queue, d2, sizeof half, &half, 16 * sizeof(uint16_t)));
  CHECK_OK(olMemcpy(queue, copy, host, d2, device, N * sizeof(uint64_t)));
  sleep_ms(10);
  CHECK_EQ(copy[0], 0); /* held by the gate */
  CHECK_EQ(copy[N - 1], N - 1);
  gate_open(&gate);
  CHECK_OK(olSyncQueue(queue));
  size_t wrong = 0;
  for (size_t i = 4; i < N; ++i)
    wrong += copy[i] != pattern;
  CHECK_EQ(wrong, 0);
  for (size_t i = 0; i < 4; ++i)
    CHECK_EQ(copy[i], 0xBEEFBEEFBEEFBEEFull);
  free(copy);
  CHECK_OK(olMemFree(d1));
  CHECK_OK(olMemFree(d2));
  CHECK_OK(olDestroyQueue(queue));
}

int main(int argc, char **argv) {
  REQUIRE(argc == 2);
  REQUIRE_OK(olInit());
  device = test_device();
  host = host_device();
  ol_program_handle_t program = load_program(device, argv[1]);
  add_kernel = get_kernel(program, "add");
  append_kernel = get_kernel(program, "append");

  cross_queue_wait();
  host_functions_in_order();
  elapsed_time();
  queue_and_event_info();
  async_copies();

  CHECK_OK(olDestroyProgram(program));
  CHECK_OK(olShutDown());
  return test_finish("test_queue_events");
}
