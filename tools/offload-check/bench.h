/* --bench: what is measured on each device through liboffload and, where the CUDA driver
 * is installed, through the driver directly (bench_cuda_raw.c), side by side. */
#ifndef OFFLOAD_CHECK_BENCH_H
#define OFFLOAD_CHECK_BENCH_H

#include "env.h"
#include "stats.h"

typedef enum {
  BENCH_LAUNCH_SYNC,
  BENCH_QUEUED_LAUNCH,
  BENCH_HOST_FUNCTION,
  BENCH_EVENT,
  BENCH_ALLOC_64,
  BENCH_ALLOC_4K,
  BENCH_ALLOC_1M,
  BENCH_H2D_PINNED,
  BENCH_D2H_PINNED,
  BENCH_H2D_PAGEABLE,
  BENCH_D2H_PAGEABLE,
  BENCH_COUNT
} bench_id_t;

typedef struct {
  const char *id;    /* JSON key */
  const char *title; /* table row */
  const char *unit;  /* "us" (lower is better) or "GB/s" (higher is better) */
} bench_info_t;

extern const bench_info_t BENCH_INFO[BENCH_COUNT];

/* The sizes and repetitions of one run (--quick shrinks them). */
typedef struct {
  size_t repetitions;    /* per latency benchmark */
  size_t queued_launches;/* launches per BENCH_QUEUED_LAUNCH repetition */
  size_t copy_bytes;     /* per copy */
  size_t copy_repetitions;
} bench_plan_t;

bench_plan_t bench_plan(bool quick);

typedef struct {
  bool ran;
  measure_t ours[BENCH_COUNT];
  bool has_raw;            /* raw[] was measured (a CUDA device with the driver present) */
  measure_t raw[BENCH_COUNT];
  char raw_note[300];      /* why there is no raw column, for a CUDA device */
} bench_results_t;

/* Measures every benchmark on env's device through liboffload. */
void run_bench(check_env_t *env, const bench_plan_t *plan, bench_results_t *out);

/* The same through the CUDA driver (dlopen("libcuda.so.1")), on the CUDA device of
 * ordinal `ordinal`. Where the driver is absent, says so in out->raw_note. */
void run_cuda_raw_bench(int ordinal, const bench_plan_t *plan, bench_results_t *out);

/* Whether the CUDA driver library can be opened here; `why` gets dlerror's text if not. */
bool cuda_driver_present(char *why, size_t why_size);

#endif
