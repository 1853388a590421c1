/* Benchmarks of kernel launches, queues and events on the host device. Each result is
 * the median over many batches; the table says what each row measures and the target.
 *
 *   bench_kernels [path/to/bench_kernels.so|- [all|launch|saxpy|events]]
 *   (the program defaults to the one built beside it; "-" picks that one too)
 *
 * Lines "RESULT <name> <value>" repeat the numbers for scripts. */
#include <offload/liboffload.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_timing.h"
#include "bench_offload_util.h"
#include "kernels/bench.h"

#ifndef BENCH_PROGRAM
#define BENCH_PROGRAM "bench_kernels.so"
#endif

static ol_device_handle_t host;
static ol_symbol_handle_t empty_kernel, saxpy_kernel, saxpy_heavy_kernel;

static ol_kernel_launch_size_args_t grid_1d(uint32_t groups, uint32_t size) {
  ol_kernel_launch_size_args_t grid = {1, {groups, 1, 1}, {size, 1, 1}, 0};
  return grid;
}

static void launch_empty(ol_queue_handle_t queue) {
  static const ol_kernel_launch_size_args_t one = {1, {1, 1, 1}, {1, 1, 1}, 0};
  check(olLaunchKernel(queue, host, empty_kernel, NULL, 0, &one), "olLaunchKernel");
}

/* ---- the table ---- */

typedef struct {
  const char *name, *what, *unit;
  double value, target;
  bool higher_is_better;
  bool has_target;
} row_t;

static row_t rows[32];
static size_t row_count;

static void report(const char *name, const char *what, const char *unit, double value,
                   bool has_target, double target, bool higher_is_better) {
  rows[row_count++] = (row_t){name, what, unit, value, target, higher_is_better, has_target};
  printf("RESULT %s %.4f\n", name, value);
  fflush(stdout);
}

/* ---- launches ---- */

enum { BATCHES = 31 };

static double sync_launch_us(void) {
  enum { PER_BATCH = 2000 };
  double t[BATCHES];
  for (int i = 0; i < PER_BATCH; ++i)
    launch_empty(NULL);
  for (int b = 0; b < BATCHES; ++b) {
    double start = now_us();
    for (int i = 0; i < PER_BATCH; ++i)
      launch_empty(NULL);
    t[b] = (now_us() - start) / PER_BATCH;
  }
  return median(t, BATCHES);
}

static void *sync_launch_thread(void *out) {
  *(double *)out = sync_launch_us();
  return NULL;
}

/* The same from `threads` threads at once, each launching the same kernel: the median of
 * the threads' medians (launches that share nothing should not slow each other down). */
static double sync_launch_threads_us(unsigned threads) {
  pthread_t tid[8];
  double each[8];
  if (threads > 8)
    threads = 8;
  for (unsigned t = 0; t < threads; ++t)
    if (pthread_create(&tid[t], NULL, sync_launch_thread, &each[t]) != 0)
      exit(1);
  for (unsigned t = 0; t < threads; ++t)
    pthread_join(tid[t], NULL);
  return median(each, threads);
}

static double round_trip_us(ol_queue_handle_t queue) {
  enum { PER_BATCH = 500 };
  double t[BATCHES];
  for (int i = 0; i < PER_BATCH; ++i) {
    launch_empty(queue);
    check(olSyncQueue(queue), "olSyncQueue");
  }
  for (int b = 0; b < BATCHES; ++b) {
    double start = now_us();
    for (int i = 0; i < PER_BATCH; ++i) {
      launch_empty(queue);
      check(olSyncQueue(queue), "olSyncQueue");
    }
    t[b] = (now_us() - start) / PER_BATCH;
  }
  return median(t, BATCHES);
}

static double queued_launch_us(ol_queue_handle_t queue) {
  enum { LAUNCHES = 10000, ROUNDS = 21 };
  double t[ROUNDS];
  for (int r = -2; r < ROUNDS; ++r) { /* two rounds of warm-up */
    double start = now_us();
    for (int i = 0; i < LAUNCHES; ++i)
      launch_empty(queue);
    check(olSyncQueue(queue), "olSyncQueue");
    if (r >= 0)
      t[r] = (now_us() - start) / LAUNCHES;
  }
  return median(t, ROUNDS);
}

/* ---- saxpy: many groups, one group, pthreads ---- */

typedef struct {
  float a;
  const float *x;
  float *y;
  size_t begin, end;
  bool heavy; /* the saxpy_heavy kernel's loop */
} slice_t;

static void *saxpy_slice(void *arg) {
  const slice_t *s = (const slice_t *)arg;
  const float a = s->a;
  const float *x = s->x;
  float *y = s->y;
  if (!s->heavy) {
    for (size_t i = s->begin; i < s->end; ++i)
      y[i] = a * x[i] + y[i];
    return NULL;
  }
  for (size_t i = s->begin; i < s->end; ++i) {
    float v = a * x[i] + y[i];
    for (int k = 0; k < 64; ++k)
      v = v * 0.999f + a;
    y[i] = v;
  }
  return NULL;
}

/* The hand-written baseline: the same loop split over `threads` pthreads, created and
 * joined each time (as a launch's groups are handed out each time). */
static void saxpy_pthreads(float a, const float *x, float *y, size_t n, unsigned threads,
                           bool heavy) {
  pthread_t tid[256];
  slice_t slices[256];
  for (unsigned t = 0; t < threads; ++t) {
    slices[t] = (slice_t){a, x, y, n * t / threads, n * (t + 1) / threads, heavy};
    if (t > 0 && pthread_create(&tid[t], NULL, saxpy_slice, &slices[t]) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      exit(1);
    }
  }
  saxpy_slice(&slices[0]);
  for (unsigned t = 1; t < threads; ++t)
    pthread_join(tid[t], NULL);
}

/* Runs saxpy over `n` floats `reps` times per sample, as many groups, as one group and
 * as the pthreads loop, interleaved so that a change of machine load hits all three
 * alike; writes the medians (ms per saxpy) to out[0..2]. */
static void time_saxpy(ol_symbol_handle_t kernel, size_t n, int reps, unsigned cores,
                       uint32_t many, double out[3]) {
  const bool heavy = kernel == saxpy_heavy_kernel;
  enum { RUNS = 15 };
  float *x = NULL, *y = NULL;
  check(olMemAlloc(host, OL_ALLOC_TYPE_DEVICE, n * sizeof(float), (void **)&x), "olMemAlloc");
  check(olMemAlloc(host, OL_ALLOC_TYPE_DEVICE, n * sizeof(float), (void **)&y), "olMemAlloc");
  for (size_t i = 0; i < n; ++i) {
    x[i] = (float)(i % 1000) * 1e-3f;
    y[i] = 0.0f;
  }
  const float a = 0.5f;
  const struct saxpy_args args = {a, x, y, n};
  ol_kernel_launch_size_args_t all = grid_1d(many, 1), one = grid_1d(1, 1);
  double t[3][RUNS];
  for (int r = -1; r < RUNS; ++r) {
    double start = now_us();
    for (int i = 0; i < reps; ++i)
      check(olLaunchKernel(NULL, host, kernel, &args, sizeof args, &all), "saxpy");
    double t1 = now_us();
    for (int i = 0; i < reps; ++i)
      check(olLaunchKernel(NULL, host, kernel, &args, sizeof args, &one), "saxpy");
    double t2 = now_us();
    for (int i = 0; i < reps; ++i)
      saxpy_pthreads(a, x, y, n, cores, heavy);
    double t3 = now_us();
    if (r >= 0) {
      t[0][r] = (t1 - start) / 1e3 / reps;
      t[1][r] = (t2 - t1) / 1e3 / reps;
      t[2][r] = (t3 - t2) / 1e3 / reps;
    }
  }
  for (int k = 0; k < 3; ++k)
    out[k] = median(t[k], RUNS);
  check(olMemFree(x), "olMemFree");
  check(olMemFree(y), "olMemFree");
}

static void bench_saxpy(unsigned cores) {
  const uint32_t many = 64 * cores;
  double ms[3];
  char what[128];
  time_saxpy(saxpy_kernel, (size_t)1 << 24, 1, cores, many, ms);
  snprintf(what, sizeof what, "saxpy 2^24 floats, %u groups (all cores), ms", many);
  report("saxpy_all_cores_ms", strdup(what), "ms", ms[0], false, 0, false);
  report("saxpy_one_group_ms", "saxpy 2^24 floats, 1 group (one core), ms", "ms", ms[1], false,
         0, false);
  snprintf(what, sizeof what, "saxpy 2^24 floats, C loop on %u pthreads, ms", cores);
  report("saxpy_pthreads_ms", strdup(what), "ms", ms[2], false, 0, false);
  report("saxpy_speedup_all_vs_one", "speed-up: all cores / one group", "x", ms[1] / ms[0],
         true, 1.8, true);
  report("saxpy_all_vs_pthreads", "time ratio: all cores / pthreads loop", "x", ms[0] / ms[2],
         true, 1.25, false);
  /* 2^24 floats (192 MiB of traffic) are bound by memory bandwidth, which one core may
   * already use up; 2^18 floats (2 MiB for x and y) stay in the caches and show the
   * cores' compute and the cost of spreading a launch over them. */
  time_saxpy(saxpy_kernel, (size_t)1 << 18, 32, cores, 4 * cores, ms);
  snprintf(what, sizeof what, "in cache, 2^18 floats: %u groups, ms", 4 * cores);
  report("saxpy_cached_all_cores_ms", strdup(what), "ms", ms[0], false, 0, false);
  report("saxpy_cached_one_group_ms", "in cache, 2^18 floats: 1 group, ms", "ms", ms[1], false,
         0, false);
  report("saxpy_cached_pthreads_ms", "in cache, 2^18 floats: pthreads loop, ms", "ms", ms[2],
         false, 0, false);
  report("saxpy_cached_speedup_all_vs_one", "in cache: speed-up all cores / one group", "x",
         ms[1] / ms[0], false, 0, true);
  report("saxpy_cached_all_vs_pthreads", "in cache: time ratio all cores / pthreads loop", "x",
         ms[0] / ms[2], false, 0, false);
  /* The same traffic with 65 times the arithmetic: what spreading over cores gives when
   * memory bandwidth is not the limit. */
  time_saxpy(saxpy_heavy_kernel, (size_t)1 << 22, 1, cores, many, ms);
  snprintf(what, sizeof what, "compute-bound saxpy, 2^22 floats: %u groups, ms", many);
  report("heavy_all_cores_ms", strdup(what), "ms", ms[0], false, 0, false);
  report("heavy_one_group_ms", "compute-bound saxpy, 2^22 floats: 1 group, ms", "ms", ms[1],
         false, 0, false);
  report("heavy_pthreads_ms", "compute-bound saxpy, 2^22 floats: pthreads loop, ms", "ms", ms[2],
         false, 0, false);
  report("heavy_speedup_all_vs_one", "compute-bound: speed-up all cores / one group", "x",
         ms[1] / ms[0], false, 0, true);
  report("heavy_all_vs_pthreads", "compute-bound: time ratio all cores / pthreads loop", "x",
         ms[0] / ms[2], false, 0, false);
}

/* ---- events across queues ---- */

static void bench_dependencies(void) {
  enum { PAIRS = 2000, ROUNDS = 21 };
  ol_queue_handle_t qa = NULL, qb = NULL;
  check(olCreateQueue(host, &qa), "olCreateQueue");
  check(olCreateQueue(host, &qb), "olCreateQueue");
  double plain[ROUNDS], linked[ROUNDS];
  for (int r = -2; r < ROUNDS; ++r) {
    /* A launch on each queue per step, without and with B waiting for A's step. */
    double start = now_us();
    for (int i = 0; i < PAIRS; ++i) {
      launch_empty(qa);
      launch_empty(qb);
    }
    check(olSyncQueue(qa), "olSyncQueue");
    check(olSyncQueue(qb), "olSyncQueue");
    double middle = now_us();
    for (int i = 0; i < PAIRS; ++i) {
      ol_event_handle_t e = NULL;
      launch_empty(qa);
      check(olCreateEvent(qa, &e), "olCreateEvent");
      check(olWaitEvents(qb, &e, 1), "olWaitEvents");
      launch_empty(qb);
      check(olDestroyEvent(e), "olDestroyEvent");
    }
    check(olSyncQueue(qa), "olSyncQueue");
    check(olSyncQueue(qb), "olSyncQueue");
    double end = now_us();
    if (r >= 0) {
      plain[r] = (middle - start) / PAIRS;
      linked[r] = (end - middle) / PAIRS;
    }
  }
  const double p = median(plain, ROUNDS), l = median(linked, ROUNDS);
  report("dependency_step_us", "A launch on each of 2 queues, B waits for A (event), us/step",
         "us", l, false, 0, false);
  report("independent_step_us", "the same without the event and the wait, us/step", "us", p,
         false, 0, false);
  report("dependency_cost_us", "olCreateEvent + olWaitEvents + olDestroyEvent, us/dependency",
         "us", l - p, false, 0, false);
  check(olDestroyQueue(qa), "olDestroyQueue");
  check(olDestroyQueue(qb), "olDestroyQueue");
}

int main(int argc, char **argv) {
  const char *path = argc > 1 && strcmp(argv[1], "-") != 0 ? argv[1] : BENCH_PROGRAM;
  const char *which = argc > 2 ? argv[2] : "all";
  const bool all = strcmp(which, "all") == 0;
  check(olInit(), "olInit");
  check(olIterateDevices(find_host, &host), "olIterateDevices");
  if (host == NULL)
    return 1;
  uint32_t cores = 0;
  check(olGetDeviceInfo(host, OL_DEVICE_INFO_NUM_COMPUTE_UNITS, sizeof cores, &cores),
        "olGetDeviceInfo");
  if (cores == 0 || cores > 256)
    cores = cores == 0 ? 1 : 256;
  size_t size = 0;
  unsigned char *image = (unsigned char *)read_whole_file(path, &size);
  ol_program_handle_t program = NULL;
  check(olCreateProgram(host, image, size, &program), "olCreateProgram");
  free(image);
  check(olGetSymbol(program, "empty", OL_SYMBOL_KIND_KERNEL, &empty_kernel), "olGetSymbol");
  check(olGetSymbol(program, "saxpy", OL_SYMBOL_KIND_KERNEL, &saxpy_kernel), "olGetSymbol");
  check(olGetSymbol(program, "saxpy_heavy", OL_SYMBOL_KIND_KERNEL, &saxpy_heavy_kernel),
        "olGetSymbol");
  ol_queue_handle_t queue = NULL;
  check(olCreateQueue(host, &queue), "olCreateQueue");

  if (all || strcmp(which, "launch") == 0) {
    char threaded[96];
    report("launch_sync_us", "empty kernel, NULL queue (synchronous), 1 group, us/launch", "us",
           sync_launch_us(), true, 0.3, false);
    snprintf(threaded, sizeof threaded,
             "the same from %u threads at once, us/launch per thread", cores);
    report("launch_sync_threads_us", strdup(threaded), "us", sync_launch_threads_us(cores), false, 0,
           false);
    report("launch_round_trip_us", "empty kernel on a queue + olSyncQueue, us/round trip", "us",
           round_trip_us(queue), true, 5.0, false);
    report("launch_queued_us", "10,000 queued empty launches + 1 sync, us/launch", "us",
           queued_launch_us(queue), true, 1.0, false);
  }
  if (all || strcmp(which, "saxpy") == 0)
    bench_saxpy(cores);
  if (all || strcmp(which, "events") == 0)
    bench_dependencies();

  check(olDestroyQueue(queue), "olDestroyQueue");
  check(olDestroyProgram(program), "olDestroyProgram");
  check(olShutDown(), "olShutDown");

  FILE *load = fopen("/proc/loadavg", "r");
  char loadavg[128] = "unknown";
  if (load != NULL) {
    if (fgets(loadavg, sizeof loadavg, load) == NULL)
      strcpy(loadavg, "unknown\n");
    fclose(load);
  }
  printf("\nkernels on the host device (%u compute units), medians; load average: %s", cores,
         loadavg);
  printf("%-62s %10s  %-8s %s\n", "what", "value", "target", "");
  for (size_t i = 0; i < row_count; ++i) {
    const row_t *r = &rows[i];
    char target[32] = "";
    const char *verdict = "";
    if (r->has_target) {
      snprintf(target, sizeof target, "%s %g", r->higher_is_better ? ">=" : "<=", r->target);
      bool met = r->higher_is_better ? r->value >= r->target : r->value <= r->target;
      verdict = met ? "met" : "MISSED";
    }
    printf("%-62s %10.3f  %-8s %s\n", r->what, r->value, target, verdict);
  }
  return 0;
}
