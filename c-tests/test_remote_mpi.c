/* Remote devices over MPI, run as `mpirun -np 2 offload-mpi-device : -np 1
 * test_remote_mpi QUEUE_WORK`: every device of both servers appears with the server's
 * info (its name says which rank), memory of each kind is allocated, written, read back
 * and freed on each, 0 and odd sizes included, copies go between the servers, a
 * server's failure comes back as the matching error code with the server's rank in its
 * details, and copies go on while a queue waits for a long kernel on the same server
 * (QUEUE_WORK: kernels/queue_work.c's program). Without an MPI launcher there are no
 * remote devices, and the test skips. */
#include "kernel_test.h"
#include "kernels/queue_work.h"

struct sync_job {
  ol_queue_handle_t queue;
  double done_ms;
  ol_errc_t code;
};

static void *sync_in_thread(void *arg) {
  struct sync_job *job = arg;
  job->code = result_code(olSyncQueue(job->queue));
  job->done_ms = now_ms();
  return NULL;
}

/* A queue waits for a 1.5 s kernel on `device` while this thread copies to and from the
 * same device: the copies are done long before the kernel (a server serves other
 * requests while a queue's kernels run and while the queue waits for them). */
static void copies_while_a_kernel_runs(ol_device_handle_t device, ol_device_handle_t host,
                                       const char *queue_work) {
  ol_program_handle_t program = load_program(device, queue_work);
  ol_symbol_handle_t nap = get_kernel(program, "nap");
  ol_queue_handle_t queue = NULL;
  REQUIRE_OK(olCreateQueue(device, &queue));
  struct nap_args args = {1500};
  ol_kernel_launch_size_args_t one = grid_1d(1, 1);
  const double start = now_ms();
  CHECK_OK(olLaunchKernel(queue, device, nap, &args, sizeof args, &one));
  struct sync_job job = {queue, 0, OL_ERRC_SUCCESS};
  pthread_t thread;
  REQUIRE(pthread_create(&thread, NULL, sync_in_thread, &job) == 0);
  sleep_ms(100); /* the queue's sync is on its way */
  enum { N = 1 << 20 };
  static unsigned char src[N], back[N];
  for (size_t i = 0; i < N; i++) src[i] = (unsigned char)(i * 7);
  void *mem = NULL;
  REQUIRE_OK(olMemAlloc(device, OL_ALLOC_TYPE_DEVICE, N, &mem));
  for (int round = 0; round < 10; round++) {
    CHECK_OK(olMemcpy(NULL, mem, device, src, host, N));
    CHECK_OK(olMemcpy(NULL, back, host, mem, device, N));
  }
  const double copied = now_ms() - start;
  CHECK(memcmp(src, back, N) == 0);
  pthread_join(thread, NULL);
  CHECK_EQ(job.code, OL_ERRC_SUCCESS);
  const double synced = job.done_ms - start;
  /* The copies end well before the kernel (how long each takes varies with the load). */
  if (!CHECK(copied + 200 < synced && synced >= 1400))
    fprintf(stderr, "copies done after %.0f ms, the kernel after %.0f ms\n", copied, synced);
  CHECK_OK(olMemFree(mem));
  CHECK_OK(olDestroyQueue(queue));
  CHECK_OK(olDestroyProgram(program));
}

/* Whether `address` lies in a range of this process mapped with permissions `want`:
 * "---p", a reservation (remote memory's addresses are reserved here, so no local memory
 * can ever have them), or "rw-s", shared memory (HOST and MANAGED memory of a server on
 * this node is the application's memory too). */
static bool mapped_here(const void *address, const char *want) {
  FILE *maps = fopen("/proc/self/maps", "r");
  if (!maps) return false;
  char line[512], perm[8];
  unsigned long lo = 0, hi = 0;
  bool found = false;
  while (!found && fgets(line, sizeof line, maps))
    if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perm) == 3 && (uintptr_t)address >= lo &&
        (uintptr_t)address < hi)
      found = strcmp(perm, want) == 0;
  fclose(maps);
  return found;
}

static size_t shared_seen;

static void round_trip(ol_device_handle_t remote, ol_device_handle_t host,
                       ol_alloc_type_t type, size_t size) {
  unsigned char *src = malloc(size + 1), *back = malloc(size + 1);
  REQUIRE(src && back);
  for (size_t i = 0; i < size; i++) src[i] = (unsigned char)(i * 31 + size);
  memset(back, 0xee, size + 1);
  void *mem = NULL;
  if (!CHECK_OK(olMemAlloc(remote, type, size, &mem))) return;
  const bool shared = type != OL_ALLOC_TYPE_DEVICE && mapped_here(mem, "rw-s");
  CHECK(shared || mapped_here(mem, "---p"));
  CHECK_OK(olMemcpy(NULL, mem, remote, src, host, size));
  CHECK_OK(olMemcpy(NULL, back, host, mem, remote, size));
  CHECK(memcmp(src, back, size) == 0);
  CHECK_EQ(back[size], 0xee); /* nothing written past the end */
  if (shared) {
    /* One memory: what the server wrote is here, and what is written here is read back
     * from the server. */
    shared_seen++;
    CHECK(memcmp(mem, src, size) == 0);
    memset(mem, 0x5a, size);
    CHECK_OK(olMemcpy(NULL, back, host, mem, remote, size));
    CHECK(back[0] == 0x5a && back[size - 1] == 0x5a);
  }
  CHECK_OK(olMemFree(mem));
  free(src);
  free(back);
}

int main(int argc, char **argv) {
  REQUIRE(argc == 2);
  REQUIRE_OK(olInit());
  device_list_t list = all_devices();
  ol_device_handle_t host = host_device();
  size_t remotes = 0;
  for (size_t i = 0; i < list.count; i++) {
    ol_device_handle_t d = list.devices[i];
    if (!device_is_remote(d)) continue;
    remotes++;
    char name[256] = {0};
    CHECK_OK(olGetDeviceInfo(d, OL_DEVICE_INFO_NAME, sizeof name, name));
    CHECK(strncmp(name, "rank ", 5) == 0);
    CHECK_EQ(device_type(d), OL_DEVICE_TYPE_CPU);
    uint32_t units = 0;
    CHECK_OK(olGetDeviceInfo(d, OL_DEVICE_INFO_NUM_COMPUTE_UNITS, sizeof units, &units));
    CHECK(units > 0);
    round_trip(d, host, OL_ALLOC_TYPE_DEVICE, 4096);
    round_trip(d, host, OL_ALLOC_TYPE_HOST, 1);
    round_trip(d, host, OL_ALLOC_TYPE_MANAGED, (3u << 20) + 7);
    /* The server cannot allocate this: its error, its words, its rank. */
    void *huge = NULL;
    ol_result_t r = olMemAlloc(d, OL_ALLOC_TYPE_DEVICE, (size_t)1 << 60, &huge);
    CHECK_DETAILS(OUT_OF_RESOURCES, "rank ", r);
  }
  /* Between two servers' devices. */
  ol_device_handle_t first = NULL, second = NULL;
  for (size_t i = 0; i < list.count; i++) {
    if (!device_is_remote(list.devices[i])) continue;
    if (!first) first = list.devices[i];
    else if (!second) second = list.devices[i];
  }
  if (first) copies_while_a_kernel_runs(first, host, argv[1]);
  if (first && second) {
    enum { M = 100000 };
    static unsigned char a[M], b[M];
    for (size_t i = 0; i < M; i++) a[i] = (unsigned char)(i * 13);
    void *on_first = NULL, *on_second = NULL;
    REQUIRE_OK(olMemAlloc(first, OL_ALLOC_TYPE_DEVICE, M, &on_first));
    REQUIRE_OK(olMemAlloc(second, OL_ALLOC_TYPE_DEVICE, M, &on_second));
    CHECK_OK(olMemcpy(NULL, on_first, first, a, host, M));
    CHECK_OK(olMemcpy(NULL, on_second, second, on_first, first, M));
    CHECK_OK(olMemcpy(NULL, b, host, on_second, second, M));
    CHECK(memcmp(a, b, M) == 0);
    /* The same on queues of either server, both ways, at offsets inside the ranges:
     * the servers copy to each other directly. */
    ol_queue_handle_t q1 = NULL, q2 = NULL;
    REQUIRE_OK(olCreateQueue(first, &q1));
    REQUIRE_OK(olCreateQueue(second, &q2));
    memset(b, 0, M);
    CHECK_OK(olMemcpy(q1, on_second, second, a, host, M)); /* host -> second, on q1 */
    CHECK_OK(olMemcpy(q1, (char *)on_first + 16, first, (char *)on_second + 32, second, 1000));
    CHECK_OK(olSyncQueue(q1));
    CHECK_OK(olMemcpy(q2, (char *)on_second + 5000, second, (char *)on_first + 16, first, 1000));
    CHECK_OK(olMemcpy(q2, b, host, (char *)on_second + 5000, second, 1000));
    CHECK_OK(olSyncQueue(q2));
    CHECK(memcmp(a + 32, b, 1000) == 0);
    CHECK_OK(olDestroyQueue(q1));
    CHECK_OK(olDestroyQueue(q2));
    CHECK_OK(olMemFree(on_first));
    CHECK_OK(olMemFree(on_second));
    /* More than one fragment (64 MiB each) from server to server. */
    size_t big = ((size_t)64 << 20) + 4099;
    unsigned char *pattern = malloc(big), *got = malloc(big);
    REQUIRE(pattern && got);
    for (size_t i = 0; i < big; i++) pattern[i] = (unsigned char)(i % 251);
    REQUIRE_OK(olMemAlloc(first, OL_ALLOC_TYPE_DEVICE, big, &on_first));
    REQUIRE_OK(olMemAlloc(second, OL_ALLOC_TYPE_DEVICE, big, &on_second));
    CHECK_OK(olMemcpy(NULL, on_first, first, pattern, host, big));
    CHECK_OK(olMemcpy(NULL, on_second, second, on_first, first, big));
    CHECK_OK(olMemcpy(NULL, got, host, on_second, second, big));
    CHECK(memcmp(pattern, got, big) == 0);
    CHECK_OK(olMemFree(on_first));
    CHECK_OK(olMemFree(on_second));
    free(pattern);
    free(got);
    /* An image the server's device cannot run: refused with the server's reason. */
    static const char junk[64] = "not an image of any device";
    bool valid = true;
    CHECK_OK(olIsValidBinary(first, junk, sizeof junk, &valid));
    CHECK(!valid);
    ol_program_handle_t program = NULL;
    CHECK_DETAILS(INVALID_BINARY, "rank ", olCreateProgram(first, junk, sizeof junk, &program));
  }
  if (remotes == 0) {
    printf("skipped: no remote devices (run under mpirun with offload-mpi-device)\n");
    olShutDown();
    return TEST_SKIP_CODE;
  }
  CHECK(remotes >= 2); /* two servers, each with its host device */
  /* Servers on this node share HOST and MANAGED memory with the application, unless
   * they were told not to place memory (OFFLOAD_MPI_PLACE=0, exported to every rank);
   * servers on other nodes (OFFLOAD_TEST_ACROSS_HOSTS=1, multihost/across_hosts.sh)
   * never do, even where they could open the same shared-memory object. */
  const char *place = getenv("OFFLOAD_MPI_PLACE");
  const char *across = getenv("OFFLOAD_TEST_ACROSS_HOSTS");
  if (across && strcmp(across, "1") == 0)
    CHECK(shared_seen == 0);
  else if (!(place && strcmp(place, "0") == 0))
    CHECK(shared_seen == 4);
  CHECK_OK(olShutDown());
  return test_finish("test_remote_mpi");
}
