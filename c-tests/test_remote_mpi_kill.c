/* A device server killed mid-run, as `mpirun --enable-recovery -np 1 offload-mpi-device
 * : -np 1 test_remote_mpi_kill` (--enable-recovery: OpenMPI keeps the job alive when a
 * rank dies): the next operation on its device fails within the timeout (never a hang)
 * with the server's rank in its details, every later one fails at once, a queue on it
 * reports the loss at its next sync, the local host device goes on working, and
 * olShutDown and the process's exit do not wait for the dead server.
 *
 * mpirun answers 0 under --enable-recovery whatever the application returns, so ctest
 * reads this test's verdict from its output (the closing tally, or the skip line). */
#include "offload_test.h"
#include <dirent.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

/* Kills the device servers of this job: the launcher's other children running
 * offload-mpi-device (the kernel names a process by 15 characters). */
static int kill_servers(void) {
  pid_t launcher = getppid();
  DIR *proc = opendir("/proc");
  if (!proc) return 0;
  int killed = 0;
  struct dirent *entry;
  while ((entry = readdir(proc))) {
    int pid = atoi(entry->d_name);
    if (pid <= 0 || pid == getpid()) continue;
    char path[64], command[64] = {0}, state = 0;
    int parent = 0;
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *stat = fopen(path, "r");
    if (!stat) continue;
    if (fscanf(stat, "%*d (%63[^)]) %c %d", command, &state, &parent) == 3 &&
        parent == launcher && strncmp(command, "offload-mpi-dev", 15) == 0 &&
        kill(pid, SIGKILL) == 0)
      killed++;
    fclose(stat);
  }
  closedir(proc);
  return killed;
}

static double seconds_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(void) {
  /* The timeout this test waits out once (the default is 5 s). */
  setenv("OFFLOAD_MPI_TIMEOUT", "2", 1);
  REQUIRE_OK(olInit());
  ol_device_handle_t host = host_device(), remote = remote_test_device();
  int value = 1234, back = 0;
  void *mem = NULL;
  ol_queue_handle_t queue = NULL;
  REQUIRE_OK(olMemAlloc(remote, OL_ALLOC_TYPE_DEVICE, 64, &mem));
  REQUIRE_OK(olCreateQueue(remote, &queue));
  CHECK_OK(olMemcpy(NULL, mem, remote, &value, host, sizeof value));
  CHECK_OK(olMemcpy(NULL, &back, host, mem, remote, sizeof back));
  CHECK_EQ(back, 1234);

  CHECK_EQ(kill_servers(), 1);
  double start = seconds_now();
  CHECK_DETAILS(BACKEND_FAILURE, "rank 0", olMemcpy(NULL, &back, host, mem, remote, sizeof back));
  double waited = seconds_now() - start;
  printf("the first operation after the kill failed after %.2f s\n", waited);
  /* The timeout (2 s), not a hang: the bound only catches one. */
  CHECK(waited < 30.0);
  /* Known lost: later operations fail without waiting the timeout again. */
  start = seconds_now();
  CHECK_DETAILS(BACKEND_FAILURE, "lost earlier", olMemcpy(NULL, mem, remote, &value, host, sizeof value));
  void *more = NULL;
  CHECK_DETAILS(BACKEND_FAILURE, "rank 0", olMemAlloc(remote, OL_ALLOC_TYPE_DEVICE, 64, &more));
  /* A queued operation: the queue reports it at its sync. */
  ol_result_t queued = olMemcpy(queue, &back, host, mem, remote, sizeof back);
  ol_result_t synced = olSyncQueue(queue);
  CHECK(queued != NULL || synced != NULL);
  CHECK(seconds_now() - start < 30.0);
  olDestroyQueue(queue);
  olMemFree(mem);

  /* The local device is untouched. */
  int *local = NULL;
  CHECK_OK(olMemAlloc(host, OL_ALLOC_TYPE_HOST, sizeof *local, (void **)&local));
  CHECK_OK(olMemcpy(NULL, local, host, &value, host, sizeof value));
  CHECK_EQ(*local, 1234);
  CHECK_OK(olMemFree(local));
  CHECK_OK(olShutDown());
  return test_finish("test_remote_mpi_kill");
}
