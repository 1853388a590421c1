/* One cell of the remote-device fault matrix, run as the application of
 *
 *   mpirun --enable-recovery -np 2 offload-mpi-device : -np 1 remote_fault_cell.sh \
 *          test_remote_mpi_faults FAULT MOMENT QUEUE_WORK
 *
 * with OFFLOAD_MPI_TIMEOUT=T. Server rank 0 (the victim) is struck by FAULT: killed
 * (SIGKILL), stopped (SIGSTOP: alive but silent), or slowed (SIGUSR1 to a server started
 * with OFFLOAD_MPI_TEST_SLOW: every reply and piece of data delayed beyond the timeout)
 * at MOMENT: idle, during a host->remote or remote->host copy of 64 MiB + 3 bytes,
 * during a copy between the two servers with the victim sending (r2r_send) or
 * receiving (r2r_recv), during a queued kernel, olCreateProgram, olSyncQueue,
 * olSyncEvent, olWaitEvents, olShutDown, or at process exit.
 *
 * Checked: the first failing call returns an error naming rank 0 within T + 2 s of the
 * fault; later calls on the victim's device fail at once; the other server's device and
 * the host device keep working, their data intact byte by byte; the process then exits
 * with the status it chose (the wrapper script checks that, and the time exit took).
 *
 * Network faults, for a job across test hosts (multihost/across_hosts.sh, which names the
 * victim's link in OFFLOAD_TEST_LINK_*): `linkdown` takes the victim's link down (checked
 * as above); `loss` makes it lose 5% of its packets and `flap` takes it down for 2 s (T
 * above 2 s): copies in either direction (h2r, r2h) then complete, with the right bytes,
 * within LOSSY_BOUND_S. The link is restored before the process ends. */
#include "kernel_test.h"
#include "kernels/queue_work.h"
#include <dirent.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

enum { BIG = (64 << 20) + 3, SMALL = 4096 };

static double timeout_s;
static const char *fault;
static const char *moment;
static double fault_at_ms;

/* Wall-clock seconds, for the wrapper to compare with its own clock. */
static double wall_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Whether /proc/PID/environ holds NAME=VALUE. */
static bool environ_has(int pid, const char *name, const char *value) {
  char path[64], buf[1 << 16];
  snprintf(path, sizeof path, "/proc/%d/environ", pid);
  FILE *f = fopen(path, "r");
  if (!f) return false;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  char want[256];
  snprintf(want, sizeof want, "%s=%s", name, value);
  for (size_t i = 0; i < n; i += strlen(buf + i) + 1)
    if (strcmp(buf + i, want) == 0) return true;
  return false;
}

/* The pid of this job's device server of rank `rank` (same PMIx namespace), or 0. */
static int server_pid(int rank) {
  const char *job = getenv("PMIX_NAMESPACE");
  if (!job) return 0;
  char rank_text[16];
  snprintf(rank_text, sizeof rank_text, "%d", rank);
  DIR *proc = opendir("/proc");
  if (!proc) return 0;
  int found = 0;
  struct dirent *entry;
  while (!found && (entry = readdir(proc))) {
    int pid = atoi(entry->d_name);
    if (pid <= 0 || pid == getpid()) continue;
    char path[64], command[64] = {0};
    snprintf(path, sizeof path, "/proc/%d/comm", pid);
    FILE *comm = fopen(path, "r");
    if (!comm) continue;
    bool server = fgets(command, sizeof command, comm) &&
                  strncmp(command, "offload-mpi-dev", 15) == 0;
    fclose(comm);
    if (server && environ_has(pid, "PMIX_NAMESPACE", job) &&
        environ_has(pid, "OMPI_COMM_WORLD_RANK", rank_text))
      found = pid;
  }
  closedir(proc);
  return found;
}

/* Runs the shell command the environment variable `name` holds (the test hosts' own). */
static void run_network_command(const char *name) {
  const char *command = getenv(name);
  if (!command) {
    printf("skipped: no remote device across test hosts (%s is not set)\n", name);
    fflush(stdout);
    exit(77);
  }
  REQUIRE(system(command) == 0);
}

static bool network_fault(void) {
  return strcmp(fault, "linkdown") == 0 || strcmp(fault, "loss") == 0 ||
         strcmp(fault, "flap") == 0;
}

/* The link comes back 2 s after a flap. */
static void *link_back(void *unused) {
  (void)unused;
  sleep_ms(2000);
  printf("link back at wall %.3f\n", wall_now());
  run_network_command("OFFLOAD_TEST_LINK_UP");
  return NULL;
}

/* Strikes server rank 0 with the fault; the moment it happened. */
static void strike(void) {
  if (network_fault()) {
    fault_at_ms = now_ms();
    printf("fault %s struck rank 0's link at wall %.3f\n", fault, wall_now());
    fflush(stdout);
    run_network_command(strcmp(fault, "loss") == 0 ? "OFFLOAD_TEST_LINK_LOSS"
                                                   : "OFFLOAD_TEST_LINK_DOWN");
    pthread_t thread;
    if (strcmp(fault, "flap") == 0) REQUIRE(pthread_create(&thread, NULL, link_back, NULL) == 0);
    return;
  }
  int pid = server_pid(0);
  REQUIRE(pid > 0);
  int signal = strcmp(fault, "kill") == 0   ? SIGKILL
               : strcmp(fault, "stop") == 0 ? SIGSTOP
                                            : SIGUSR1;
  fault_at_ms = now_ms();
  printf("fault %s struck rank 0 (pid %d) at wall %.3f\n", fault, pid, wall_now());
  fflush(stdout);
  REQUIRE(kill(pid, signal) == 0);
}

/* Checks that `result` is the first failure, naming rank 0, within T + 2 s of the fault. */
static void check_first_failure(const char *what, ol_result_t result, double returned_ms) {
  double after = (returned_ms - fault_at_ms) / 1000.0;
  printf("first failing call (%s) returned after %.2f s: %s\n", what, after,
         result ? details(result) : "(no error)");
  printf("MATRIX %s %s %.2f\n", fault, moment, after);
  CHECK(result != NULL);
  if (result) CHECK(strstr(details(result), "rank 0") != NULL);
  CHECK(after <= timeout_s + 2.0);
}

/* The application's world: the two servers' devices and the host device. */
struct world {
  ol_device_handle_t host, victim, other;
  void *victim_mem, *other_mem, *victim_small;
  unsigned char *pattern, *back;
  ol_queue_handle_t queue;
  ol_program_handle_t program;
  ol_symbol_handle_t nap;
  const char *queue_work;
};

/* The worker's loop: one operation, again and again, until it fails. */
typedef ol_result_t (*operation)(struct world *);

static ol_result_t op_h2r(struct world *w) {
  return olMemcpy(NULL, w->victim_mem, w->victim, w->pattern, w->host, BIG);
}
static ol_result_t op_r2h(struct world *w) {
  return olMemcpy(NULL, w->back, w->host, w->victim_mem, w->victim, BIG);
}
static ol_result_t op_r2r_send(struct world *w) {
  return olMemcpy(NULL, w->other_mem, w->other, w->victim_mem, w->victim, BIG);
}
static ol_result_t op_r2r_recv(struct world *w) {
  return olMemcpy(NULL, w->victim_mem, w->victim, w->other_mem, w->other, BIG);
}
static ol_result_t op_program(struct world *w) {
  size_t size = 0;
  unsigned char *image = read_file(w->queue_work, &size);
  ol_program_handle_t program = NULL;
  ol_result_t r = olCreateProgram(w->victim, image, size, &program);
  free(image);
  if (!r) r = olDestroyProgram(program);
  return r;
}
static ol_result_t launch_nap(struct world *w, ol_queue_handle_t queue, unsigned ms) {
  struct nap_args args = {ms};
  ol_kernel_launch_size_args_t one = grid_1d(1, 1);
  return olLaunchKernel(queue, w->victim, w->nap, &args, sizeof args, &one);
}
static ol_result_t op_syncqueue(struct world *w) {
  ol_result_t r = launch_nap(w, w->queue, 30);
  return r ? r : olSyncQueue(w->queue);
}
static ol_result_t op_syncevent(struct world *w) {
  ol_event_handle_t event = NULL;
  ol_result_t r = launch_nap(w, w->queue, 30);
  if (!r) r = olCreateEvent(w->queue, &event);
  if (!r) r = olSyncEvent(event);
  if (event) olDestroyEvent(event);
  return r;
}
static ol_queue_handle_t host_queue;
static ol_result_t op_waitevents(struct world *w) {
  ol_event_handle_t event = NULL;
  ol_result_t r = launch_nap(w, w->queue, 30);
  if (!r) r = olCreateEvent(w->queue, &event);
  if (!r) r = olWaitEvents(host_queue, &event, 1);
  if (!r) r = olSyncQueue(host_queue);
  if (event) olDestroyEvent(event);
  return r;
}

struct worker {
  struct world *w;
  operation op;
  ol_result_t result;
  double returned_ms;
  int rounds;
  atomic_int done;
};

static void *work(void *arg) {
  struct worker *job = arg;
  for (;;) {
    ol_result_t r = job->op(job->w);
    job->rounds++;
    if (r) {
      job->result = r;
      job->returned_ms = now_ms();
      break;
    }
  }
  atomic_store(&job->done, 1);
  return NULL;
}

/* Runs `op` in a loop on a thread, strikes while it runs, and checks its first failure.
 * A worker that does not end within T + 10 s is a hang: reported, and the process
 * leaves (the thread cannot be taken back). */
static void during(struct world *w, const char *what, operation op) {
  struct worker job = {w, op, NULL, 0, 0, 0};
  pthread_t thread;
  REQUIRE(pthread_create(&thread, NULL, work, &job) == 0);
  while (job.rounds < 1 && !atomic_load(&job.done)) sleep_ms(5);
  sleep_ms(150);
  strike();
  while (!atomic_load(&job.done)) {
    if (now_ms() - fault_at_ms > (timeout_s + 10.0) * 1000.0) {
      printf("HANG: %s still running %.0f s after the fault\n", what,
             (now_ms() - fault_at_ms) / 1000.0);
      printf("test_remote_mpi_faults: hang\n");
      fflush(stdout);
      _exit(1);
    }
    sleep_ms(10);
  }
  pthread_join(thread, NULL);
  check_first_failure(what, job.result, job.returned_ms);
}

/* After the failure: the victim fails at once, the other server and the host go on,
 * their data intact. */
static void check_survivors(struct world *w) {
  double start = now_ms();
  int word = 7;
  CHECK_DETAILS(BACKEND_FAILURE, "rank 0",
                olMemcpy(NULL, w->victim_small, w->victim, &word, w->host, sizeof word));
  double later = (now_ms() - start) / 1000.0;
  printf("a later call on the victim failed after %.3f s\n", later);
  CHECK(later < 1.0);

  /* The other server's memory still holds the pattern written before the fault (a copy
   * between the servers may have written it meanwhile: with the same pattern). */
  memset(w->back, 0, BIG);
  CHECK_OK(olMemcpy(NULL, w->back, w->host, w->other_mem, w->other, BIG));
  CHECK(memcmp(w->back, w->pattern, BIG) == 0);
  /* ... and takes new data. */
  for (size_t i = 0; i < BIG; i++) w->pattern[i] = (unsigned char)(i * 13 + 5);
  CHECK_OK(olMemcpy(NULL, w->other_mem, w->other, w->pattern, w->host, BIG));
  memset(w->back, 0, BIG);
  CHECK_OK(olMemcpy(NULL, w->back, w->host, w->other_mem, w->other, BIG));
  CHECK(memcmp(w->back, w->pattern, BIG) == 0);

  /* The host device. */
  unsigned char *local = NULL;
  CHECK_OK(olMemAlloc(w->host, OL_ALLOC_TYPE_HOST, SMALL, (void **)&local));
  CHECK_OK(olMemcpy(NULL, local, w->host, w->pattern, w->host, SMALL));
  CHECK(local && memcmp(local, w->pattern, SMALL) == 0);
  CHECK_OK(olMemFree(local));
}

/* Finds the two servers' first devices and sets up memory, a queue and a program. */
/* A lossy or flapping link: copies in the moment's direction go on through it and
 * complete with the right bytes; then the link is restored and the victim still works. */
enum { LOSSY_BOUND_S = 60 };
static void survive(struct world *w) {
  bool to_remote = strcmp(moment, "h2r") == 0;
  REQUIRE(to_remote || strcmp(moment, "r2h") == 0);
  for (size_t i = 0; i < BIG; i++) w->pattern[i] = (unsigned char)(i * 7 + 3);
  if (!to_remote)
    CHECK_OK(olMemcpy(NULL, w->victim_mem, w->victim, w->pattern, w->host, BIG));
  strike();
  for (int round = 0; round < 3; round++) {
    if (to_remote) {
      w->pattern[round] ^= 0xff; /* each round other bytes */
      CHECK_OK(olMemcpy(NULL, w->victim_mem, w->victim, w->pattern, w->host, BIG));
    } else {
      memset(w->back, 0, BIG);
      CHECK_OK(olMemcpy(NULL, w->back, w->host, w->victim_mem, w->victim, BIG));
      CHECK(memcmp(w->back, w->pattern, BIG) == 0);
    }
  }
  double took = (now_ms() - fault_at_ms) / 1000.0;
  printf("3 copies of %d bytes through the %s link took %.2f s\n", BIG, fault, took);
  printf("MATRIX %s %s %.2f\n", fault, moment, took);
  CHECK(took <= LOSSY_BOUND_S);
  run_network_command("OFFLOAD_TEST_NET_RESTORE");
  /* The bytes arrived whole, and the victim goes on. */
  memset(w->back, 0, BIG);
  CHECK_OK(olMemcpy(NULL, w->back, w->host, w->victim_mem, w->victim, BIG));
  CHECK(memcmp(w->back, w->pattern, BIG) == 0);
}

/* The host buffers set_up made, given back before the program ends (LeakSanitizer). */
static void release(struct world *w) {
  free(w->pattern);
  free(w->back);
}

static void set_up(struct world *w) {
  device_list_t list = all_devices();
  w->host = host_device();
  for (size_t i = 0; i < list.count; ++i) {
    if (!device_is_remote(list.devices[i])) continue;
    char name[256] = {0};
    olGetDeviceInfo(list.devices[i], OL_DEVICE_INFO_NAME, sizeof name, name);
    if (!w->victim && strncmp(name, "rank 0:", 7) == 0) w->victim = list.devices[i];
    if (!w->other && strncmp(name, "rank 1:", 7) == 0) w->other = list.devices[i];
  }
  if (!w->victim || !w->other) {
    printf("skipped: no remote device (run under mpirun with two offload-mpi-device ranks)\n");
    exit(TEST_SKIP_CODE);
  }
  w->pattern = malloc(BIG);
  w->back = malloc(BIG);
  REQUIRE(w->pattern && w->back);
  for (size_t i = 0; i < BIG; i++) w->pattern[i] = (unsigned char)(i * 7 + 1);
  REQUIRE_OK(olMemAlloc(w->victim, OL_ALLOC_TYPE_DEVICE, BIG, &w->victim_mem));
  REQUIRE_OK(olMemAlloc(w->victim, OL_ALLOC_TYPE_DEVICE, SMALL, &w->victim_small));
  REQUIRE_OK(olMemAlloc(w->other, OL_ALLOC_TYPE_DEVICE, BIG, &w->other_mem));
  REQUIRE_OK(olMemcpy(NULL, w->other_mem, w->other, w->pattern, w->host, BIG));
  REQUIRE_OK(olMemcpy(NULL, w->victim_mem, w->victim, w->pattern, w->host, BIG));
  REQUIRE_OK(olCreateQueue(w->victim, &w->queue));
  REQUIRE_OK(olCreateQueue(w->host, &host_queue));
  w->program = load_program(w->victim, w->queue_work);
  w->nap = get_kernel(w->program, "nap");
}

/* The status this application chooses to exit with (the wrapper checks it came). */
static int finish(struct world *w) {
  release(w);
  int failed = test_finish("test_remote_mpi_faults");
  int status = failed ? 1 : 0;
  printf("exit status chosen: %d at wall %.3f\n", status, wall_now());
  fflush(stdout);
  return status;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s kill|stop|slow|linkdown|loss|flap MOMENT QUEUE_WORK\n", argv[0]);
    return 2;
  }
  fault = argv[1];
  moment = argv[2];
  const char *t = getenv("OFFLOAD_MPI_TIMEOUT");
  timeout_s = t ? atof(t) : 5.0;
  struct world w = {0};
  w.queue_work = argv[3];
  REQUIRE_OK(olInit());
  set_up(&w);

  if (strcmp(fault, "loss") == 0 || strcmp(fault, "flap") == 0) {
    survive(&w);
    CHECK_OK(olShutDown());
    return finish(&w);
  }
  struct {
    const char *name;
    operation op;
  } loops[] = {{"h2r", op_h2r},           {"r2h", op_r2h},
               {"r2r_send", op_r2r_send}, {"r2r_recv", op_r2r_recv},
               {"program", op_program},   {"syncqueue", op_syncqueue},
               {"syncevent", op_syncevent}, {"waitevents", op_waitevents}};
  for (size_t i = 0; i < sizeof loops / sizeof loops[0]; i++) {
    if (strcmp(moment, loops[i].name) == 0) {
      during(&w, loops[i].name, loops[i].op);
      check_survivors(&w);
      CHECK_OK(olShutDown());
      return finish(&w);
    }
  }
  if (strcmp(moment, "idle") == 0 || strcmp(moment, "kernel") == 0) {
    bool kernel = strcmp(moment, "kernel") == 0;
    if (kernel) CHECK_OK(launch_nap(&w, w.queue, 5000));
    sleep_ms(150);
    strike();
    int word = 1;
    ol_result_t r = kernel ? olSyncQueue(w.queue)
                           : olMemcpy(NULL, w.victim_small, w.victim, &word, w.host,
                                      sizeof word);
    check_first_failure(kernel ? "olSyncQueue" : "olMemcpy", r, now_ms());
    check_survivors(&w);
    CHECK_OK(olShutDown());
    return finish(&w);
  }
  if (strcmp(moment, "shutdown") == 0) {
    strike();
    ol_result_t r = olShutDown();
    double took = (now_ms() - fault_at_ms) / 1000.0;
    printf("olShutDown returned after %.2f s: %s\n", took, r ? details(r) : "success");
    printf("MATRIX %s %s %.2f\n", fault, moment, took);
    CHECK(took <= timeout_s + 2.0);
    /* Started again: the lost server has no devices any more, the other one works. */
    REQUIRE_OK(olInit());
    struct world again = {0};
    device_list_t list = all_devices();
    again.host = host_device();
    for (size_t i = 0; i < list.count; ++i) {
      char name[256] = {0};
      olGetDeviceInfo(list.devices[i], OL_DEVICE_INFO_NAME, sizeof name, name);
      CHECK(strncmp(name, "rank 0:", 7) != 0);
      if (device_is_remote(list.devices[i]) && strncmp(name, "rank 1:", 7) == 0)
        again.other = list.devices[i];
    }
    REQUIRE(again.other != NULL);
    unsigned char *back = malloc(BIG);
    void *mem = NULL;
    REQUIRE(back);
    CHECK_OK(olMemAlloc(again.other, OL_ALLOC_TYPE_DEVICE, BIG, &mem));
    CHECK_OK(olMemcpy(NULL, mem, again.other, w.pattern, again.host, BIG));
    CHECK_OK(olMemcpy(NULL, back, again.host, mem, again.other, BIG));
    CHECK(memcmp(back, w.pattern, BIG) == 0);
    CHECK_OK(olMemFree(mem));
    free(back);
    CHECK_OK(olShutDown());
    return finish(&w);
  }
  if (strcmp(moment, "exit") == 0) {
    /* The fault comes as the application leaves: the exit path (stopping the servers,
     * finalising MPI) must not wait for ever. */
    strike();
    printf("MATRIX %s %s (see the wrapper's exit time)\n", fault, moment);
    return finish(&w);
  }
  fprintf(stderr, "unknown moment %s\n", moment);
  return 2;
}
