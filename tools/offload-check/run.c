/* The order of work: on each device the checks, then the benchmarks; then, once every
 * device is done, each device's fault check (a GPU's context is unusable after it, also
 * for the checks of another device that pairs with it). */
#include "run.h"

#include <stdio.h>
#include <string.h>

/* The device the two-device checks pair `device` with: another device of the same
 * backend first (two GPUs copy to each other directly), else the host device, else any
 * other; -1 when there is no other device. */
static int pick_peer(const device_list_t *devices, size_t device) {
  int other = -1;
  for (size_t i = 0; i < devices->count; ++i) {
    if (i == device)
      continue;
    if (devices->items[i].backend == devices->items[device].backend)
      return (int)i;
    if (other < 0 || i == devices->host)
      other = (int)i;
  }
  return other;
}

static void run_check(check_env_t *env, const check_t *check, check_result_t *result) {
  memset(result, 0, sizeof *result);
  check->run(env, result);
  if (result->status == STATUS_NOT_RUN)
    result->status = STATUS_OK;
}

static int cuda_ordinal(const device_list_t *devices, size_t device) {
  int ordinal = 0;
  for (size_t i = 0; i < device; ++i)
    ordinal += devices->items[i].backend == OL_PLATFORM_BACKEND_CUDA;
  return ordinal;
}

static void note_cuda_driver(report_t *report) {
  char why[256];
  size_t cuda_devices = 0;
  for (size_t i = 0; i < report->devices.count; ++i)
    cuda_devices += report->devices.items[i].backend == OL_PLATFORM_BACKEND_CUDA;
  if (!cuda_driver_present(why, sizeof why))
    snprintf(report->cuda_driver_note, sizeof report->cuda_driver_note,
             "raw CUDA driver: not present, no comparison (%s)", why);
  else if (cuda_devices == 0)
    snprintf(report->cuda_driver_note, sizeof report->cuda_driver_note,
             "raw CUDA driver: libcuda.so.1 is present but liboffload lists no CUDA device");
  else
    snprintf(report->cuda_driver_note, sizeof report->cuda_driver_note,
             "raw CUDA driver: libcuda.so.1, measured beside liboffload on each CUDA device");
}

static void env_open(check_env_t *env, report_t *report, size_t index) {
  const device_list_t *devices = &report->devices;
  memset(env, 0, sizeof *env);
  env->device = &devices->items[index];
  env->host = &devices->items[devices->host];
  report->peer[index] = pick_peer(devices, index);
  env->peer = report->peer[index] >= 0 ? &devices->items[report->peer[index]] : NULL;
}

/* Everything but the fault check on device `index`. */
static void run_device(report_t *report, size_t index, const options_t *options) {
  check_env_t env;
  env_open(&env, report, index);
  for (size_t c = 0; c < CHECK_COUNT; ++c)
    if (strcmp(CHECKS[c].id, LAST_CHECK_ID) != 0)
      run_check(&env, &CHECKS[c], &report->results[index][c]);
  if (options->bench) {
    bench_results_t *bench = &report->bench_results[index];
    run_bench(&env, &report->plan, bench);
    if (env.device->backend == OL_PLATFORM_BACKEND_CUDA)
      run_cuda_raw_bench(cuda_ordinal(&report->devices, index), &report->plan, bench);
  }
  env_release(&env);
  report->tested[index] = true;
}

static void run_fault_check(report_t *report, size_t index) {
  check_env_t env;
  env_open(&env, report, index);
  for (size_t c = 0; c < CHECK_COUNT; ++c)
    if (strcmp(CHECKS[c].id, LAST_CHECK_ID) == 0)
      run_check(&env, &CHECKS[c], &report->results[index][c]);
  env_release(&env);
}

void run_all(report_t *report, const options_t *options) {
  report->bench = options->bench;
  report->plan = bench_plan(options->quick);
  if (options->bench)
    note_cuda_driver(report);
  for (size_t i = 0; i < report->devices.count; ++i) {
    report->peer[i] = -1;
    if (options->device < 0 || (size_t)options->device == i)
      run_device(report, i, options);
  }
  for (size_t i = 0; i < report->devices.count; ++i)
    if (report->tested[i])
      run_fault_check(report, i);
}

int report_exit_status(const report_t *report) {
  for (size_t d = 0; d < report->devices.count; ++d)
    for (size_t c = 0; report->tested[d] && c < CHECK_COUNT; ++c)
      if (report->results[d][c].status == STATUS_FAILED)
        return EXIT_SOMETHING_FAILED;
  return EXIT_ALL_OK;
}
