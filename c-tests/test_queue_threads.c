/* Many queues: 16 threads each with its own queue, launching and syncing; 1000 queues
 * at once; a queue destroyed with work in flight (its event still syncs); a program
 * destroyed with a launch of it in flight (the queue still syncs, the result is right).
 * argv[1]: kernels/queue_work.c's program, argv[2]: kernels/host_abi.c's. On the device
 * OFFLOAD_TEST_DEVICE names (kernel_test.h). */
#include "kernel_test.h"
#include "kernels/host_abi.h"
#include "kernels/queue_work.h"

static ol_device_handle_t device;
static ol_device_handle_t host; /* names the host side of copies */
static ol_symbol_handle_t add_kernel;

static void launch_add(ol_queue_handle_t queue, void *data, int delta, size_t n) {
  const struct add_args args = {data, delta, n};
  ol_kernel_launch_size_args_t grid = grid_1d((uint32_t)((n + 63) / 64), 64);
  CHECK_OK(olLaunchKernel(queue, device, add_kernel, &args, sizeof args, &grid));
}

enum { THREADS = 16, ROUNDS = 200, ITEMS = 2048 };

typedef struct {
  int id;
  atomic_int failures;
} job_t;

static void *thread_main(void *arg) {
  job_t *job = (job_t *)arg;
  ol_queue_handle_t queue = NULL;
  void *data = NULL;
  int *copy = malloc(ITEMS * sizeof *copy);
  if (olCreateQueue(device, &queue) != OL_SUCCESS ||
      olMemAlloc(device, OL_ALLOC_TYPE_DEVICE, ITEMS * sizeof(int), &data) != OL_SUCCESS ||
      copy == NULL) {
    atomic_fetch_add(&job->failures, 1);
    return NULL;
  }
  const int start = job->id * 1000;
  if (olMemFill(queue, data, sizeof start, &start, ITEMS * sizeof(int)) != OL_SUCCESS)
    atomic_fetch_add(&job->failures, 1);
  for (int round = 0; round < ROUNDS; ++round) {
    const struct add_args args = {data, 1 + round % 3, ITEMS};
    ol_kernel_launch_size_args_t grid = grid_1d(ITEMS / 64, 64);
    if (olLaunchKernel(queue, device, add_kernel, &args, sizeof args, &grid) != OL_SUCCESS)
      atomic_fetch_add(&job->failures, 1);
    /* Sync every few rounds, and read back every so often. */
    if (round % 10 == 9 && olSyncQueue(queue) != OL_SUCCESS)
      atomic_fetch_add(&job->failures, 1);
  }
  if (olMemcpy(queue, copy, host, data, device, ITEMS * sizeof(int)) != OL_SUCCESS ||
      olSyncQueue(queue) != OL_SUCCESS)
    atomic_fetch_add(&job->failures, 1);
  int want = start;
  for (int round = 0; round < ROUNDS; ++round)
    want += 1 + round % 3;
  for (size_t i = 0; i < ITEMS; ++i)
    if (copy[i] != want) {
      fprintf(stderr, "thread %d: item %zu is %d, want %d\n", job->id, i, copy[i], want);
      atomic_fetch_add(&job->failures, 1);
      break;
    }
  if (olDestroyQueue(queue) != OL_SUCCESS || olMemFree(data) != OL_SUCCESS)
    atomic_fetch_add(&job->failures, 1);
  free(copy);
  return NULL;
}

static void threads_with_own_queues(void) {
  pthread_t threads[THREADS];
  job_t jobs[THREADS];
  for (int t = 0; t < THREADS; ++t) {
    jobs[t].id = t;
    atomic_init(&jobs[t].failures, 0);
    REQUIRE(pthread_create(&threads[t], NULL, thread_main, &jobs[t]) == 0);
  }
  for (int t = 0; t < THREADS; ++t) {
    pthread_join(threads[t], NULL);
    CHECK_EQ(atomic_load(&jobs[t].failures), 0);
  }
}

static void a_thousand_queues(void) {
  enum { QUEUES = 1000 };
  ol_queue_handle_t *queues = calloc(QUEUES, sizeof *queues);
  void *mem = NULL;
  REQUIRE(queues != NULL);
  REQUIRE_OK(olMemAlloc(device, OL_ALLOC_TYPE_DEVICE, QUEUES * sizeof(int), &mem));
  int *data = (int *)mem;
  const int zero = 0;
  CHECK_OK(olMemFill(NULL, data, sizeof zero, &zero, QUEUES * sizeof(int)));
  size_t created = 0;
  for (size_t q = 0; q < QUEUES; ++q) {
    if (!CHECK_OK(olCreateQueue(device, &queues[q])))
      break;
    ++created;
  }
  CHECK_EQ(created, QUEUES);
  for (size_t q = 0; q < created; ++q)
    launch_add(queues[q], data + q, (int)q + 1, 1);
  for (size_t q = 0; q < created; ++q)
    CHECK_OK(olSyncQueue(queues[q]));
  int *copy = malloc(QUEUES * sizeof *copy);
  REQUIRE(copy != NULL);
  CHECK_OK(olMemcpy(NULL, copy, host, data, device, QUEUES * sizeof(int)));
  size_t wrong = 0;
  for (size_t q = 0; q < created; ++q)
    wrong += copy[q] != (int)q + 1;
  CHECK_EQ(wrong, 0);
  for (size_t q = 0; q < created; ++q)
    CHECK_OK(olDestroyQueue(queues[q]));
  free(copy);
  free(queues);
  CHECK_OK(olMemFree(data));
}

typedef struct {
  gate_t *gate;
  unsigned delay_ms;
} opener_t;

static void *open_later(void *arg) {
  opener_t *o = (opener_t *)arg;
  sleep_ms(o->delay_ms);
  gate_open(o->gate);
  return NULL;
}

static void destroy_queue_in_flight(void) {
  ol_queue_handle_t queue = NULL;
  REQUIRE_OK(olCreateQueue(device, &queue));
  void *data = NULL;
  REQUIRE_OK(olMemAlloc(device, OL_ALLOC_TYPE_DEVICE, 256 * sizeof(int), &data));
  const int seven = 7;
  CHECK_OK(olMemFill(NULL, data, sizeof seven, &seven, 256 * sizeof(int)));
  gate_t gate = {0, 0};
  opener_t opener = {&gate, 200};
  CHECK_OK(olLaunchHostFunction(queue, gate_callback, &gate));
  launch_add(queue, data, 5, 256);
  ol_event_handle_t done = NULL;
  REQUIRE_OK(olCreateEvent(queue, &done));
  pthread_t thread;
  REQUIRE(pthread_create(&thread, NULL, open_later, &opener) == 0);
  double start = now_ms();
  CHECK_OK(olDestroyQueue(queue));
  const double destroy_ms = now_ms() - start;
  CHECK(destroy_ms < 150); /* it does not wait for the gate */
  CHECK(!atomic_load(&gate.open));
  CHECK_OK(olSyncEvent(done));
  CHECK(atomic_load(&gate.open));
  bool complete = false;
  CHECK_OK(olGetEventInfo(done, OL_EVENT_INFO_IS_COMPLETE, sizeof complete, &complete));
  CHECK(complete);
  int copy[256];
  CHECK_OK(olMemcpy(NULL, copy, host, data, device, sizeof copy));
  size_t wrong = 0;
  for (size_t i = 0; i < 256; ++i)
    wrong += copy[i] != 12;
  CHECK_EQ(wrong, 0);
  CHECK_OK(olDestroyEvent(done));
  pthread_join(thread, NULL);
  /* The destroyed queue is gone. */
  CHECK_ERR(INVALID_QUEUE, olSyncQueue(queue));
  CHECK_OK(olMemFree(data));
}

static void destroy_program_in_flight(const char *path) {
  ol_program_handle_t program = load_program(device, path);
  ol_symbol_handle_t saxpy = get_kernel(program, "saxpy");
  enum { N = 100000 };
  /* Read and written by the kernel, then read here: memory both reach. */
  float *x = shared_alloc(device, N * sizeof *x), *y = shared_alloc(device, N * sizeof *y);
  for (size_t i = 0; i < N; ++i) {
    x[i] = (float)(i % 100);
    y[i] = 1.0f;
  }
  ol_queue_handle_t queue = NULL;
  REQUIRE_OK(olCreateQueue(device, &queue));
  unsigned ms = 100;
  CHECK_OK(olLaunchHostFunction(queue, sleep_callback, &ms));
  const struct saxpy_args args = {3.0f, x, y, N};
  ol_kernel_launch_size_args_t grid = grid_1d((N + 255) / 256, 256);
  CHECK_OK(olLaunchKernel(queue, device, saxpy, &args, sizeof args, &grid));
  double start = now_ms();
  CHECK_OK(olDestroyProgram(program));
  printf("olDestroyProgram with a launch in flight took %.1f ms\n", now_ms() - start);
  /* The program's handles are stale now; its launch still ran. */
  ol_symbol_handle_t again = NULL;
  CHECK_ERR(INVALID_ARGUMENT, olGetSymbol(program, "saxpy", OL_SYMBOL_KIND_KERNEL, &again));
  CHECK_ERR(INVALID_ARGUMENT, olLaunchKernel(queue, device, saxpy, &args, sizeof args, &grid));
  CHECK_OK(olSyncQueue(queue));
  size_t wrong = 0;
  for (size_t i = 0; i < N; ++i)
    wrong += y[i] != 3.0f * (float)(i % 100) + 1.0f;
  CHECK_EQ(wrong, 0);
  CHECK_OK(olDestroyQueue(queue));
  CHECK_OK(olMemFree(x));
  CHECK_OK(olMemFree(y));
}

int main(int argc, char **argv) {
  REQUIRE(argc == 3);
  REQUIRE_OK(olInit());
  device = test_device();
  host = host_device();
  ol_program_handle_t program = load_program(device, argv[1]);
  add_kernel = get_kernel(program, "add");

  threads_with_own_queues();
  a_thousand_queues();
  destroy_queue_in_flight();
  destroy_program_in_flight(argv[2]);

  CHECK_OK(olDestroyProgram(program));
  CHECK_OK(olShutDown());
  return test_finish("test_queue_threads");
}
