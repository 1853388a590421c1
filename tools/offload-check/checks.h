/* The conformance checks, in the order they run on each device (the fault check last:
 * on a GPU it spoils the device's context). Each is independent: it makes what it needs
 * and frees it, and its failure does not stop the others. */
#ifndef OFFLOAD_CHECK_CHECKS_H
#define OFFLOAD_CHECK_CHECKS_H

#include "env.h"

typedef void (*check_fn_t)(check_env_t *env, check_result_t *result);

typedef struct {
  const char *id;    /* JSON key */
  const char *title; /* table row */
  check_fn_t run;
} check_t;

extern const check_t CHECKS[];
extern const size_t CHECK_COUNT;

/* The id of the check that must run after everything else on a device (the fault). */
#define LAST_CHECK_ID "kernel_fault"

/* check_memory.c */
void check_memory_device(check_env_t *env, check_result_t *result);
void check_memory_host(check_env_t *env, check_result_t *result);
void check_memory_managed(check_env_t *env, check_result_t *result);
/* check_copies.c */
void check_copy_pageable(check_env_t *env, check_result_t *result);
void check_copy_pinned(check_env_t *env, check_result_t *result);
void check_copy_within_device(check_env_t *env, check_result_t *result);
void check_copy_between_devices(check_env_t *env, check_result_t *result);
/* check_fill.c */
void check_fill_even(check_env_t *env, check_result_t *result);
void check_fill_odd(check_env_t *env, check_result_t *result);
/* check_queues.c */
void check_queue_copy(check_env_t *env, check_result_t *result);
void check_event_two_queues(check_env_t *env, check_result_t *result);
void check_event_two_devices(check_env_t *env, check_result_t *result);
void check_host_function_order(check_env_t *env, check_result_t *result);
/* check_kernels.c */
void check_kernel_arguments(check_env_t *env, check_result_t *result);
void check_kernel_global(check_env_t *env, check_result_t *result);
void check_kernel_shared_memory(check_env_t *env, check_result_t *result);
void check_kernel_cooperative(check_env_t *env, check_result_t *result);
void check_kernel_fault(check_env_t *env, check_result_t *result);

#endif
