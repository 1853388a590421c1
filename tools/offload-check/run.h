/* Running the checks (and benchmarks) on every selected device, and what came of it. */
#ifndef OFFLOAD_CHECK_RUN_H
#define OFFLOAD_CHECK_RUN_H

#include "bench.h"
#include "checks.h"
#include "devices.h"
#include "options.h"

#define MAX_CHECKS 32

typedef struct {
  uint32_t version[3]; /* olGetVersion */
  device_list_t devices;
  bool tested[MAX_DEVICES];
  int peer[MAX_DEVICES]; /* the device the two-device checks used, or -1 */
  check_result_t results[MAX_DEVICES][MAX_CHECKS];
  bool bench;
  bench_plan_t plan;
  bench_results_t bench_results[MAX_DEVICES];
  char cuda_driver_note[300]; /* one line about the raw CUDA comparison */
} report_t;

/* Runs everything `options` asks for on the devices of report->devices. */
void run_all(report_t *report, const options_t *options);

/* EXIT_ALL_OK unless a check FAILED. */
int report_exit_status(const report_t *report);

#endif
