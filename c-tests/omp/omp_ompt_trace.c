// An OMPT tool inside the program that traces the default device through the buffer
// interface the lookup of device_initialize hands out, and checks what it gets: every
// tracing function offered; ompt_set_trace_ompt's answers; the records of a target region
// (construct begin and end with one target id, allocations, copies with their byte
// counts, the kernel, deletions) in buffers small enough to need several, each record's
// end not before its start and the times in order; a pause that collects nothing; a kind
// turned off that is not collected; device times that advance and translate to
// omp_get_wtime's clock; regions on four threads while the main thread pauses, resumes
// and flushes (every record whole); a stop after which nothing is collected and the
// records waiting are delivered; bad arguments answered, not crashed on; and what is
// collected after the last flush delivered at the end, before the tool is finalized.
// Prints "trace: all checks passed" when every check holds, "FAIL ..." for each that
// does not.
#include <omp-tools.h>
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 1000
#define RECORDS_PER_BUFFER 4
#define MAX_RECORDS 4096

static int failures;
#define CHECK(cond, ...)                                                               \
  do {                                                                                 \
    if (!(cond)) {                                                                     \
      failures++;                                                                      \
      printf("FAIL line %d: ", __LINE__);                                              \
      printf(__VA_ARGS__);                                                             \
      printf("\n");                                                                    \
    }                                                                                  \
  } while (0)

static ompt_set_trace_ompt_t set_trace;
static ompt_start_trace_t start_trace;
static ompt_pause_trace_t pause_trace;
static ompt_flush_trace_t flush_trace;
static ompt_stop_trace_t stop_trace;
static ompt_advance_buffer_cursor_t advance;
static ompt_get_record_type_t record_type;
static ompt_get_record_ompt_t get_record;
static ompt_get_device_time_t device_time;
static ompt_translate_time_t translate_time;

static ompt_device_t *traced;  // the default device's handle
static int traced_num = -1;
static int initial_device = -1;  // how records name the host

// What the complete callback copied out, in delivery order.
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static ompt_record_ompt_t records[MAX_RECORDS];
static int nrecords;
static int buffers_full, buffers_empty, buffer_too_big;
static int api_in_callback = -1;

static void on_request(int device_num, ompt_buffer_t **buffer, size_t *bytes) {
  (void)device_num;
  *bytes = RECORDS_PER_BUFFER * sizeof(ompt_record_ompt_t);
  *buffer = malloc(*bytes);
}

static void on_complete(int device_num, ompt_buffer_t *buffer, size_t bytes,
                        ompt_buffer_cursor_t begin, int owned) {
  CHECK(device_num == traced_num, "buffer of device %d, traced %d", device_num, traced_num);
  // A tool may call the OpenMP API from here.
  api_in_callback = omp_get_num_devices();
  pthread_mutex_lock(&lock);
  if (bytes == 0) {
    buffers_empty++;
    CHECK(record_type(buffer, begin) == ompt_record_invalid, "an empty buffer's cursor");
  } else {
    buffers_full++;
    if (bytes > RECORDS_PER_BUFFER * sizeof(ompt_record_ompt_t))
      buffer_too_big++;
    ompt_buffer_cursor_t at = begin;
    int more = 1;
    while (more) {
      CHECK(record_type(buffer, at) == ompt_record_ompt, "a record's type");
      ompt_record_ompt_t *r = get_record(buffer, at);
      if (r && nrecords < MAX_RECORDS)
        records[nrecords++] = *r;
      more = advance(traced, buffer, bytes, at, &at);
    }
  }
  pthread_mutex_unlock(&lock);
  if (owned)
    free(buffer);
}

static void on_device_initialize(int device_num, const char *type, ompt_device_t *device,
                                 ompt_function_lookup_t lookup, const char *doc) {
  (void)type, (void)doc;
  if (device_num != omp_get_default_device() || traced)
    return;
  CHECK(device != NULL, "device_initialize gives no device handle");
  CHECK(lookup != NULL, "device_initialize gives no lookup");
  if (!device || !lookup)
    return;
  traced = device;
  traced_num = device_num;
#define FIND(var, type, name)                                                          \
  var = (type)lookup(name);                                                            \
  CHECK(var != NULL, "lookup(\"%s\") is NULL", name);
  FIND(set_trace, ompt_set_trace_ompt_t, "ompt_set_trace_ompt");
  FIND(start_trace, ompt_start_trace_t, "ompt_start_trace");
  FIND(pause_trace, ompt_pause_trace_t, "ompt_pause_trace");
  FIND(flush_trace, ompt_flush_trace_t, "ompt_flush_trace");
  FIND(stop_trace, ompt_stop_trace_t, "ompt_stop_trace");
  FIND(advance, ompt_advance_buffer_cursor_t, "ompt_advance_buffer_cursor");
  FIND(record_type, ompt_get_record_type_t, "ompt_get_record_type");
  FIND(get_record, ompt_get_record_ompt_t, "ompt_get_record_ompt");
  FIND(device_time, ompt_get_device_time_t, "ompt_get_device_time");
  FIND(translate_time, ompt_translate_time_t, "ompt_translate_time");
  CHECK(lookup("ompt_no_such_function") == NULL, "an unknown name is found");
  if (!set_trace || !start_trace)
    return;
  CHECK(set_trace(device, 1, ompt_callback_target) == ompt_set_always, "trace target");
  CHECK(set_trace(device, 1, ompt_callback_target_data_op_emi) == ompt_set_always,
        "trace data ops");
  CHECK(set_trace(device, 1, ompt_callback_target_submit) == ompt_set_always,
        "trace kernels");
  CHECK(set_trace(device, 1, ompt_callback_thread_begin) == ompt_set_never,
        "a host event is never traced on a device");
  CHECK(set_trace((ompt_device_t *)&records, 1, ompt_callback_target) == ompt_set_error,
        "a handle that is no device");
  CHECK(start_trace((ompt_device_t *)&records, on_request, on_complete) == 0,
        "start on a handle that is no device");
  CHECK(start_trace(device, on_request, on_complete) == 1, "start_trace");
}

static int expected_final = -1;  // records the last region leaves for the end
static int at_flush, at_return;

static void on_finalize(ompt_data_t *data) {
  (void)data;
  // Everything collected after the last flush arrives before the tool is finalized.
  CHECK(nrecords - at_flush == expected_final,
        "%d records delivered at the end, %d expected", nrecords - at_flush, expected_final);
  CHECK(nrecords > at_return, "nothing was left for the end");
  if (failures == 0)
    printf("trace: all checks passed\n");
  else
    printf("trace: %d checks failed\n", failures);
  fflush(stdout);
}

static int initialize(ompt_function_lookup_t lookup, int initial, ompt_data_t *data) {
  (void)data, (void)initial;
  ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
  set(ompt_callback_device_initialize, (ompt_callback_t)on_device_initialize);
  return 1;
}

ompt_start_tool_result_t *ompt_start_tool(unsigned int version, const char *runtime) {
  (void)version, (void)runtime;
  static ompt_start_tool_result_t result = {initialize, on_finalize, {0}};
  return &result;
}

static int a[N], b[N];

static void region(int teams) {
#pragma omp target teams num_teams(teams) map(to : a) map(from : b)
  {
#pragma omp distribute
    for (int i = 0; i < N; i++)
      b[i] = a[i] + 1;
  }
}

// The records of one region from `from` on, checked as a whole.
static void check_region(int from, int with_data_ops) {
  int n = nrecords - from;
  CHECK(n == (with_data_ops ? 9 : 3), "%d records for one region", n);
  if (n < 3)
    return;
  ompt_record_ompt_t *r = &records[from];
  CHECK(r[0].type == ompt_callback_target && r[0].record.target.endpoint == ompt_scope_begin,
        "the first record is the construct's begin (type %d)", r[0].type);
  CHECK(r[n - 1].type == ompt_callback_target &&
            r[n - 1].record.target.endpoint == ompt_scope_end,
        "the last record is the construct's end (type %d)", r[n - 1].type);
  CHECK(r[0].record.target.kind == ompt_target && r[0].record.target.device_num == traced_num,
        "the construct's kind and device");
  CHECK(r[0].record.target.target_id != 0 &&
            r[0].record.target.target_id == r[n - 1].record.target.target_id,
        "begin and end share a target id");
  int allocs = 0, to = 0, from_dev = 0, deletes = 0, kernels = 0;
  for (int i = 0; i < n; i++) {
    CHECK(r[i].target_id == r[0].record.target.target_id, "record %d names the construct", i);
    CHECK(r[i].time != 0, "record %d has a time", i);
    if (i > 0)
      CHECK(r[i].time >= r[i - 1].time, "record %d starts before record %d", i, i - 1);
    if (r[i].type == ompt_callback_target_data_op) {
      ompt_record_target_data_op_t *op = &r[i].record.target_data_op;
      CHECK(op->end_time >= r[i].time, "data op %d ends before it starts", i);
      CHECK(op->host_op_id != 0, "data op %d has an operation id", i);
      switch (op->optype) {
      case ompt_target_data_alloc:
        allocs++;
        CHECK(op->bytes == sizeof a && op->dest_device_num == traced_num, "an allocation");
        break;
      case ompt_target_data_transfer_to_device:
        to++;
        CHECK(op->bytes == sizeof a && op->src_addr == (void *)a &&
                  op->src_device_num == initial_device && op->dest_device_num == traced_num,
              "the copy to the device: %zu bytes from %p on %d to %d (host %d)", op->bytes, op->src_addr, op->src_device_num, op->dest_device_num, initial_device);
        break;
      case ompt_target_data_transfer_from_device:
        from_dev++;
        CHECK(op->bytes == sizeof b && op->dest_addr == (void *)b &&
                  op->dest_device_num == initial_device && op->src_device_num == traced_num,
              "the copy from the device");
        break;
      case ompt_target_data_delete:
        deletes++;
        CHECK(op->src_device_num == traced_num, "a deletion's device");
        break;
      default:
        CHECK(0, "data op kind %d", op->optype);
      }
    } else if (r[i].type == ompt_callback_target_submit) {
      kernels++;
      CHECK(r[i].record.target_kernel.end_time >= r[i].time, "the kernel ends before it starts");
      CHECK(r[i].record.target_kernel.requested_num_teams == 2, "requested %u teams",
            r[i].record.target_kernel.requested_num_teams);
      CHECK(r[i].record.target_kernel.granted_num_teams >= 1, "granted no team");
    }
  }
  CHECK(kernels == 1, "%d kernel records", kernels);
  if (with_data_ops)
    CHECK(allocs == 2 && to == 1 && from_dev == 1 && deletes == 2,
          "allocs %d, copies to %d, from %d, deletes %d", allocs, to, from_dev, deletes);
  else
    CHECK(allocs + to + from_dev + deletes == 0, "data ops collected while turned off");
}

static void *regions_on_a_thread(void *arg) {
  (void)arg;
  for (int i = 0; i < 25; i++)
    region(2);
  return NULL;
}

int main(void) {
  for (int i = 0; i < N; i++)
    a[i] = i;
  region(2);  // initialises the device: the tool starts tracing there
  initial_device = omp_get_initial_device();  // (the initializer's is from before)
  if (!traced || !flush_trace) {
    printf("FAIL: the default device was not offered for tracing\n");
    return 1;
  }
  CHECK(flush_trace(traced) == 1, "flush");
  CHECK(b[N - 1] == N, "the region's result");
  check_region(0, 1);
  CHECK(buffers_full >= 3, "%d buffers for 9 records of %d each", buffers_full,
        RECORDS_PER_BUFFER);
  CHECK(buffer_too_big == 0, "a buffer delivered with more bytes than it holds");
  CHECK(api_in_callback == omp_get_num_devices(), "omp_get_num_devices in a callback");

  // Paused: nothing collected.
  int before = nrecords;
  CHECK(pause_trace(traced, 1) == 1, "pause");
  region(2);
  CHECK(pause_trace(traced, 0) == 1, "resume");
  CHECK(flush_trace(traced) == 1, "flush after a pause");
  CHECK(nrecords == before, "%d records collected while paused", nrecords - before);

  // Data ops turned off: only the construct and the kernel.
  CHECK(set_trace(traced, 0, ompt_callback_target_data_op) == ompt_set_always, "turn off");
  before = nrecords;
  region(2);
  flush_trace(traced);
  check_region(before, 0);
  set_trace(traced, 1, ompt_callback_target_data_op);
  before = nrecords;
  region(2);
  flush_trace(traced);
  check_region(before, 1);

  // Device time: advances, and translates to omp_get_wtime's clock.
  ompt_device_time_t t1 = device_time(traced);
  double w = omp_get_wtime();
  ompt_device_time_t t2 = device_time(traced);
  CHECK(t1 != 0 && t2 >= t1, "device times %llu then %llu", (unsigned long long)t1,
        (unsigned long long)t2);
  double h1 = translate_time(traced, t1), h2 = translate_time(traced, t2);
  CHECK(h2 >= h1, "translated times out of order");
  CHECK(h1 > w - 0.5 && h1 < w + 0.5, "device time %f s on the host's clock, wtime %f s",
        h1, w);
  CHECK(records[0].time <= t1, "a record after the device's time now");
  CHECK(device_time(NULL) == 0 && translate_time(NULL, t1) == 0.0, "a NULL device's time");

  // Four threads run regions while this one pauses, resumes and flushes.
  before = nrecords;
  pthread_t threads[4];
  for (int i = 0; i < 4; i++)
    pthread_create(&threads[i], NULL, regions_on_a_thread, NULL);
  for (int i = 0; i < 50; i++) {
    pause_trace(traced, i % 2 == 0);
    flush_trace(traced);
  }
  for (int i = 0; i < 4; i++)
    pthread_join(threads[i], NULL);
  pause_trace(traced, 0);
  flush_trace(traced);
  int collected = nrecords - before;
  CHECK(collected <= 4 * 25 * 9, "%d records from 100 regions",
        collected);
  for (int i = before; i < nrecords; i++) {
    ompt_record_ompt_t *r = &records[i];
    CHECK(r->type == ompt_callback_target || r->type == ompt_callback_target_data_op ||
              r->type == ompt_callback_target_submit,
          "record %d of type %d", i, r->type);
    if (r->type == ompt_callback_target_data_op)
      CHECK(r->record.target_data_op.end_time >= r->time &&
                (r->record.target_data_op.bytes == sizeof a ||
                 r->record.target_data_op.optype == ompt_target_data_delete),
            "a data op record torn");
    if (r->type == ompt_callback_target_submit)
      CHECK(r->record.target_kernel.requested_num_teams == 2, "a kernel record torn");
  }
  // Each construct collected whole has its begin before its end, on one thread.
  for (int i = before; i < nrecords; i++) {
    if (records[i].type != ompt_callback_target ||
        records[i].record.target.endpoint != ompt_scope_end)
      continue;
    for (int j = before; j < i; j++)
      if (records[j].type == ompt_callback_target &&
          records[j].record.target.target_id == records[i].record.target.target_id)
        CHECK(records[j].thread_id == records[i].thread_id &&
                  records[j].time <= records[i].time,
              "a construct's begin and end");
  }

  // Bad arguments.
  ompt_buffer_cursor_t next = 1;
  CHECK(advance(traced, NULL, 0, 0, &next) == 0 && next == 0, "advance without a buffer");
  CHECK(record_type(NULL, 0) == ompt_record_invalid, "the type of no record");
  CHECK(get_record(NULL, 0) == NULL, "no record");
  CHECK(pause_trace(NULL, 1) == 0 && flush_trace(NULL) == 0 && stop_trace(NULL) == 0,
        "control of a NULL device");

  // Stopped: nothing collected; the unused buffer comes back; a second stop fails.
  before = nrecords;
  region(2);  // what its records do not fill of a buffer waits for the stop
  int waiting = 9 - (nrecords - before);
  CHECK(waiting > 0, "a buffer delivered before it was full");
  CHECK(stop_trace(traced) == 1, "stop");
  CHECK(nrecords - before == 9, "%d records after the stop, 9 expected", nrecords - before);
  before = nrecords;
  region(2);
  CHECK(flush_trace(traced) == 0, "a flush after the stop");
  CHECK(nrecords == before, "%d records after the stop", nrecords - before);
  CHECK(stop_trace(traced) == 0, "a second stop");

  // Started again: the last region's records wait for the end of the program.
  CHECK(start_trace(traced, on_request, on_complete) == 1, "start again");
  at_flush = nrecords;
  region(2);
  at_return = nrecords;
  expected_final = 9;
  printf("trace: %d records checked\n", nrecords);
  return failures != 0;
}
