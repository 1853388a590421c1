// An OMPT tool for measuring what the device callbacks cost: loaded with
// OMP_TOOL_LIBRARIES=libompt_count_tool.so, it registers every device callback (the
// EMI forms) and counts the calls; at the end it prints the count on stderr. With
// OMPT_COUNT_TRACE=1 it also traces every device that offers tracing (every record
// kind, 1 MiB buffers) and counts the records.
#include <omp-tools.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static atomic_ulong calls, records;
static ompt_advance_buffer_cursor_t advance;

static void on_request(int d, ompt_buffer_t **buffer, size_t *bytes) {
  (void)d;
  *bytes = 1 << 20;
  *buffer = malloc(*bytes);
}

static void on_complete(int d, ompt_buffer_t *buffer, size_t bytes, ompt_buffer_cursor_t at,
                        int owned) {
  (void)d;
  for (int more = bytes > 0; more; more = advance(NULL, buffer, bytes, at, &at))
    atomic_fetch_add_explicit(&records, 1, memory_order_relaxed);
  if (owned)
    free(buffer);
}

static void trace(ompt_device_t *dev, ompt_function_lookup_t lookup) {
  ompt_set_trace_ompt_t set = (ompt_set_trace_ompt_t)lookup("ompt_set_trace_ompt");
  ompt_start_trace_t start = (ompt_start_trace_t)lookup("ompt_start_trace");
  advance = (ompt_advance_buffer_cursor_t)lookup("ompt_advance_buffer_cursor");
  if (set && start && advance) {
    set(dev, 1, 0);
    start(dev, on_request, on_complete);
  }
}

static void count(void) { atomic_fetch_add_explicit(&calls, 1, memory_order_relaxed); }

static void on_device_initialize(int d, const char *t, ompt_device_t *dev,
                                 ompt_function_lookup_t l, const char *doc) {
  (void)d, (void)t, (void)doc;
  const char *tracing = getenv("OMPT_COUNT_TRACE");
  if (l && tracing && atoi(tracing))
    trace(dev, l);
  count();
}
static void on_device_load(int d, const char *f, int64_t o, void *v, size_t b, void *h,
                           void *da, uint64_t m) {
  (void)d, (void)f, (void)o, (void)v, (void)b, (void)h, (void)da, (void)m;
  count();
}
static void on_target_emi(ompt_target_t k, ompt_scope_endpoint_t e, int d, ompt_data_t *t,
                          ompt_data_t *tt, ompt_data_t *td, const void *c) {
  (void)k, (void)e, (void)d, (void)t, (void)tt, (void)c;
  td->value = 1;
  count();
}
static void on_data_op_emi(ompt_scope_endpoint_t e, ompt_data_t *tt, ompt_data_t *td,
                           ompt_id_t *id, ompt_target_data_op_t op, void *s, int sd,
                           void *dp, int dd, size_t b, const void *c) {
  (void)e, (void)tt, (void)td, (void)op, (void)s, (void)sd, (void)dp, (void)dd, (void)b,
      (void)c;
  *id = 1;
  count();
}
static void on_submit_emi(ompt_scope_endpoint_t e, ompt_data_t *td, ompt_id_t *id,
                          unsigned int teams) {
  (void)e, (void)td, (void)teams;
  *id = 1;
  count();
}

static int initialize(ompt_function_lookup_t lookup, int initial_device_num,
                      ompt_data_t *tool_data) {
  (void)initial_device_num, (void)tool_data;
  ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
  set(ompt_callback_device_initialize, (ompt_callback_t)on_device_initialize);
  set(ompt_callback_device_load, (ompt_callback_t)on_device_load);
  set(ompt_callback_target_emi, (ompt_callback_t)on_target_emi);
  set(ompt_callback_target_data_op_emi, (ompt_callback_t)on_data_op_emi);
  set(ompt_callback_target_submit_emi, (ompt_callback_t)on_submit_emi);
  return 1;
}

static void finalize(ompt_data_t *tool_data) {
  (void)tool_data;
  fprintf(stderr, "ompt_count_tool: %lu device callbacks, %lu trace records\n",
          (unsigned long)atomic_load(&calls), (unsigned long)atomic_load(&records));
}

ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime) {
  (void)omp_version, (void)runtime;
  static ompt_start_tool_result_t result = {initialize, finalize, {0}};
  return &result;
}
