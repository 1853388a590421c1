/* --bench through liboffload: latencies of launches, host functions, events and
 * allocations (microseconds per operation) and copy bandwidth (GB/s), each the median
 * (and p90) of several repetitions after a warm-up. */
#include "bench.h"

#include "buffers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const bench_info_t BENCH_INFO[BENCH_COUNT] = {
    [BENCH_LAUNCH_SYNC] = {"launch_sync", "launch + sync, empty kernel", "us"},
    [BENCH_QUEUED_LAUNCH] = {"queued_launch", "queued launches, then one sync (per launch)",
                             "us"},
    [BENCH_HOST_FUNCTION] = {"host_function", "host function round trip", "us"},
    [BENCH_EVENT] = {"event_record_sync", "event record + sync", "us"},
    [BENCH_ALLOC_64] = {"alloc_free_64", "olMemAlloc + olMemFree, 64 B", "us"},
    [BENCH_ALLOC_4K] = {"alloc_free_4k", "olMemAlloc + olMemFree, 4 KiB", "us"},
    [BENCH_ALLOC_1M] = {"alloc_free_1m", "olMemAlloc + olMemFree, 1 MiB", "us"},
    [BENCH_H2D_PINNED] = {"copy_h2d_pinned", "copy host -> device, pinned", "GB/s"},
    [BENCH_D2H_PINNED] = {"copy_d2h_pinned", "copy device -> host, pinned", "GB/s"},
    [BENCH_H2D_PAGEABLE] = {"copy_h2d_pageable", "copy host -> device, pageable", "GB/s"},
    [BENCH_D2H_PAGEABLE] = {"copy_d2h_pageable", "copy device -> host, pageable", "GB/s"},
};

bench_plan_t bench_plan(bool quick) {
  bench_plan_t plan;
  plan.repetitions = quick ? 20 : 200;
  plan.queued_launches = quick ? 200 : 10000;
  plan.copy_bytes = quick ? (size_t)4 << 20 : (size_t)64 << 20;
  plan.copy_repetitions = quick ? 3 : 7;
  return plan;
}

enum { WARM_UP = 3 };

/* Records why a benchmark has no number: the failed call, its code and Details. */
static bool failed(measure_t *out, ol_result_t call, const char *what) {
  if (call == OL_SUCCESS)
    return false;
  out->valid = false;
  snprintf(out->why, sizeof out->why, "%s: %s", what, describe(call));
  return true;
}

static void nothing(void *user_data) { (void)user_data; }

static void bench_launch_sync(check_env_t *env, ol_queue_handle_t queue, ol_symbol_handle_t kernel,
                              const bench_plan_t *plan, double *samples, measure_t *out) {
  const ol_kernel_launch_size_args_t grid = grid_1d(1, 1, 0);
  size_t n = 0;
  for (size_t i = 0; i < plan->repetitions + WARM_UP; ++i) {
    const double start = now_seconds();
    if (failed(out, olLaunchKernel(queue, env->device->handle, kernel, NULL, 0, &grid),
               "olLaunchKernel") ||
        failed(out, olSyncQueue(queue), "olSyncQueue"))
      return;
    if (i >= WARM_UP)
      samples[n++] = (now_seconds() - start) * 1e6;
  }
  summarise(samples, n, out);
}

static void bench_queued_launches(check_env_t *env, ol_queue_handle_t queue,
                                  ol_symbol_handle_t kernel, const bench_plan_t *plan,
                                  double *samples, measure_t *out) {
  const ol_kernel_launch_size_args_t grid = grid_1d(1, 1, 0);
  size_t n = 0;
  for (size_t r = 0; r < plan->copy_repetitions; ++r) {
    const double start = now_seconds();
    for (size_t i = 0; i < plan->queued_launches; ++i)
      if (failed(out, olLaunchKernel(queue, env->device->handle, kernel, NULL, 0, &grid),
                 "olLaunchKernel"))
        return;
    if (failed(out, olSyncQueue(queue), "olSyncQueue"))
      return;
    samples[n++] = (now_seconds() - start) * 1e6 / (double)plan->queued_launches;
  }
  summarise(samples, n, out);
}

static void bench_host_function(ol_queue_handle_t queue, const bench_plan_t *plan,
                                double *samples, measure_t *out) {
  size_t n = 0;
  for (size_t i = 0; i < plan->repetitions + WARM_UP; ++i) {
    const double start = now_seconds();
    if (failed(out, olLaunchHostFunction(queue, nothing, NULL), "olLaunchHostFunction") ||
        failed(out, olSyncQueue(queue), "olSyncQueue"))
      return;
    if (i >= WARM_UP)
      samples[n++] = (now_seconds() - start) * 1e6;
  }
  summarise(samples, n, out);
}

static void bench_event(ol_queue_handle_t queue, const bench_plan_t *plan, double *samples,
                        measure_t *out) {
  size_t n = 0;
  for (size_t i = 0; i < plan->repetitions + WARM_UP; ++i) {
    ol_event_handle_t event = NULL;
    const double start = now_seconds();
    if (failed(out, olCreateEvent(queue, &event), "olCreateEvent"))
      return;
    const bool ok = !failed(out, olSyncEvent(event), "olSyncEvent");
    if (failed(out, olDestroyEvent(event), "olDestroyEvent") || !ok)
      return;
    if (i >= WARM_UP)
      samples[n++] = (now_seconds() - start) * 1e6;
  }
  summarise(samples, n, out);
}

static void bench_alloc(check_env_t *env, size_t size, const bench_plan_t *plan, double *samples,
                        measure_t *out) {
  size_t n = 0;
  for (size_t i = 0; i < plan->repetitions + WARM_UP; ++i) {
    void *memory = NULL;
    const double start = now_seconds();
    if (failed(out, olMemAlloc(env->device->handle, OL_ALLOC_TYPE_DEVICE, size, &memory),
               "olMemAlloc") ||
        failed(out, olMemFree(memory), "olMemFree"))
      return;
    if (i >= WARM_UP)
      samples[n++] = (now_seconds() - start) * 1e6;
  }
  summarise(samples, n, out);
}

/* Synchronous copies of plan->copy_bytes between `host_memory` and device memory. */
static void bench_copy(check_env_t *env, unsigned char *host_memory, unsigned char *device_memory,
                       bool to_device, const bench_plan_t *plan, double *samples,
                       measure_t *out) {
  const size_t bytes = plan->copy_bytes;
  ol_device_handle_t host = env->host->handle, device = env->device->handle;
  size_t n = 0;
  for (size_t i = 0; i < plan->copy_repetitions + 1; ++i) {
    const double start = now_seconds();
    ol_result_t r = to_device ? olMemcpy(NULL, device_memory, device, host_memory, host, bytes)
                              : olMemcpy(NULL, host_memory, host, device_memory, device, bytes);
    if (failed(out, r, "olMemcpy"))
      return;
    if (i >= 1) /* the first copy warms up pages and staging buffers */
      samples[n++] = (double)bytes / (now_seconds() - start) / 1e9;
  }
  summarise_bandwidth(samples, n, out);
}

static void bench_copies(check_env_t *env, const bench_plan_t *plan, double *samples,
                         bench_results_t *out) {
  check_result_t problem = {STATUS_NOT_RUN, ""};
  const size_t bytes = plan->copy_bytes;
  unsigned char *device_memory = device_alloc(env->device, OL_ALLOC_TYPE_DEVICE, bytes, &problem);
  unsigned char *pageable = device_memory != NULL ? host_buffer(env, false, bytes, &problem) : NULL;
  if (pageable != NULL) {
    memset(pageable, 1, bytes); /* pages are mapped before the clock starts */
    bench_copy(env, pageable, device_memory, true, plan, samples, &out->ours[BENCH_H2D_PAGEABLE]);
    bench_copy(env, pageable, device_memory, false, plan, samples, &out->ours[BENCH_D2H_PAGEABLE]);
  }
  check_result_t pinned_problem = {STATUS_NOT_RUN, ""};
  unsigned char *pinned = device_memory != NULL ? host_buffer(env, true, bytes, &pinned_problem)
                                                : NULL;
  if (pinned != NULL) {
    memset(pinned, 1, bytes);
    bench_copy(env, pinned, device_memory, true, plan, samples, &out->ours[BENCH_H2D_PINNED]);
    bench_copy(env, pinned, device_memory, false, plan, samples, &out->ours[BENCH_D2H_PINNED]);
  } else if (problem.status == STATUS_NOT_RUN) {
    problem = pinned_problem;
  }
  free_host_buffer(env, false, pageable, &problem);
  free_host_buffer(env, true, pinned, &problem);
  device_free(device_memory, &problem);
  if (problem.status != STATUS_NOT_RUN)
    for (int id = BENCH_H2D_PINNED; id <= BENCH_D2H_PAGEABLE; ++id)
      if (!out->ours[id].valid && out->ours[id].why[0] == '\0')
        snprintf(out->ours[id].why, sizeof out->ours[id].why, "%s", problem.reason);
}

void run_bench(check_env_t *env, const bench_plan_t *plan, bench_results_t *out) {
  memset(out->ours, 0, sizeof out->ours);
  out->ran = true;
  size_t most = plan->repetitions + WARM_UP;
  if (plan->copy_repetitions + 1 > most)
    most = plan->copy_repetitions + 1;
  double *samples = malloc(most * sizeof *samples);
  if (samples == NULL) {
    for (int id = 0; id < BENCH_COUNT; ++id)
      snprintf(out->ours[id].why, sizeof out->ours[id].why, "out of memory for the samples");
    return;
  }
  check_result_t problem = {STATUS_NOT_RUN, ""};
  ol_symbol_handle_t empty = NULL;
  ol_queue_handle_t queue = NULL;
  const bool have_queue =
      ol_ok(&problem, olCreateQueue(env->device->handle, &queue), "olCreateQueue");
  if (have_queue && env_kernel(env, "empty", &empty, &problem)) {
    bench_launch_sync(env, queue, empty, plan, samples, &out->ours[BENCH_LAUNCH_SYNC]);
    bench_queued_launches(env, queue, empty, plan, samples, &out->ours[BENCH_QUEUED_LAUNCH]);
  }
  if (have_queue) {
    bench_host_function(queue, plan, samples, &out->ours[BENCH_HOST_FUNCTION]);
    bench_event(queue, plan, samples, &out->ours[BENCH_EVENT]);
    ol_ok(&problem, olDestroyQueue(queue), "olDestroyQueue");
  }
  bench_alloc(env, 64, plan, samples, &out->ours[BENCH_ALLOC_64]);
  bench_alloc(env, 4096, plan, samples, &out->ours[BENCH_ALLOC_4K]);
  bench_alloc(env, (size_t)1 << 20, plan, samples, &out->ours[BENCH_ALLOC_1M]);
  bench_copies(env, plan, samples, out);
  for (int id = 0; id < BENCH_COUNT; ++id)
    if (!out->ours[id].valid && out->ours[id].why[0] == '\0')
      snprintf(out->ours[id].why, sizeof out->ours[id].why, "%s",
               problem.status != STATUS_NOT_RUN ? problem.reason : "not measured");
  free(samples);
}
