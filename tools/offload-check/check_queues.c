/* Queues, events and host functions: a queued copy and its sync, an event of one queue
 * that another queue of the device waits for, the same across two devices, and host
 * functions that run in the queue's order. The waits that make ordering visible are
 * host functions sleeping a fixed time on the queue, never waits on this program. */
#include "buffers.h"
#include "checks.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { HOLD_MS = 50 }; /* how long a queue is held so that a missing wait shows */

static void sleep_ms(unsigned ms) {
  struct timespec left = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  while (nanosleep(&left, &left) != 0) {
  }
}

static void hold_queue(void *user_data) {
  (void)user_data;
  sleep_ms(HOLD_MS);
}

static bool create_queue(const device_t *device, ol_queue_handle_t *queue,
                         check_result_t *result) {
  char what[64];
  snprintf(what, sizeof what, "olCreateQueue(device #%d)", device->index);
  return ol_ok(result, olCreateQueue(device->handle, queue), what);
}

/* Synced first: what its host functions and copies use lives on the caller's stack. */
static void destroy_queue(ol_queue_handle_t queue, check_result_t *result) {
  if (queue == NULL)
    return;
  ol_ok(result, olSyncQueue(queue), "olSyncQueue");
  ol_ok(result, olDestroyQueue(queue), "olDestroyQueue");
}

void check_queue_copy(check_env_t *env, check_result_t *result) {
  const size_t size = (1u << 20) + 7;
  ol_queue_handle_t queue = NULL;
  unsigned char *src = malloc(size), *back = malloc(size);
  unsigned char *memory = device_alloc(env->device, OL_ALLOC_TYPE_DEVICE, size, result);
  if (src == NULL || back == NULL) {
    fail(result, "malloc(%zu) failed", size);
    goto out;
  }
  if (memory == NULL || !create_queue(env->device, &queue, result))
    goto out;
  fill_pattern(src, size, 5);
  memset(back, 0, size);
  bool empty = false;
  ol_device_handle_t owner = NULL;
  if (!ol_ok(result, olMemcpy(queue, memory, env->device->handle, src, env->host->handle, size),
             "olMemcpy(queue, host -> device)") ||
      !ol_ok(result, olMemcpy(queue, back, env->host->handle, memory, env->device->handle, size),
             "olMemcpy(queue, device -> host)") ||
      !ol_ok(result, olSyncQueue(queue), "olSyncQueue") ||
      !same_bytes(result, "queued round trip", back, src, size) ||
      !ol_ok(result, olGetQueueInfo(queue, OL_QUEUE_INFO_EMPTY, sizeof empty, &empty),
             "olGetQueueInfo(EMPTY)") ||
      !ol_ok(result, olGetQueueInfo(queue, OL_QUEUE_INFO_DEVICE, sizeof owner, &owner),
             "olGetQueueInfo(DEVICE)"))
    goto out;
  if (!empty)
    fail(result, "olGetQueueInfo(EMPTY) is false after olSyncQueue");
  else if (owner != env->device->handle)
    fail(result, "olGetQueueInfo(DEVICE) names another device");
out:
  destroy_queue(queue, result);
  device_free(memory, result);
  free(src);
  free(back);
}

/* Queue `first` is held, then fills the buffer; queue `second` waits for an event
 * recorded after the fill and copies the buffer out: it must see the fill. */
void check_event_two_queues(check_env_t *env, check_result_t *result) {
  const size_t size = 4u << 20;
  const uint32_t pattern = 0x5ac3e17bu;
  ol_queue_handle_t first = NULL, second = NULL;
  ol_event_handle_t filled = NULL;
  unsigned char *memory = device_alloc(env->device, OL_ALLOC_TYPE_DEVICE, size, result);
  uint32_t *back = malloc(size);
  if (back == NULL) {
    fail(result, "malloc(%zu) failed", size);
    goto out;
  }
  memset(back, 0, size);
  if (memory == NULL || !copy_to(env, env->device, memory, back, size, result) ||
      !create_queue(env->device, &first, result) || !create_queue(env->device, &second, result))
    goto out;
  bool complete = false;
  if (!ol_ok(result, olLaunchHostFunction(first, hold_queue, NULL), "olLaunchHostFunction") ||
      !ol_ok(result, olMemFill(first, memory, sizeof pattern, &pattern, size), "olMemFill") ||
      !ol_ok(result, olCreateEvent(first, &filled), "olCreateEvent") ||
      !ol_ok(result, olWaitEvents(second, &filled, 1), "olWaitEvents") ||
      !ol_ok(result, olMemcpy(second, back, env->host->handle, memory, env->device->handle, size),
             "olMemcpy(second queue, device -> host)") ||
      !ol_ok(result, olSyncQueue(second), "olSyncQueue(second queue)") ||
      !ol_ok(result, olGetEventInfo(filled, OL_EVENT_INFO_IS_COMPLETE, sizeof complete, &complete),
             "olGetEventInfo(IS_COMPLETE)"))
    goto out;
  for (size_t i = 0; i < size / sizeof *back; ++i)
    if (back[i] != pattern) {
      fail(result, "the second queue read word %zu as 0x%08x before the first queue's fill "
                   "(0x%08x): olWaitEvents did not order them", i, back[i], pattern);
      goto out;
    }
  if (!complete)
    fail(result, "the event is not complete after a queue that waited for it was synced");
out:
  if (first != NULL)
    ol_ok(result, olSyncQueue(first), "olSyncQueue(first queue)");
  if (filled != NULL)
    ol_ok(result, olDestroyEvent(filled), "olDestroyEvent");
  destroy_queue(first, result);
  destroy_queue(second, result);
  device_free(memory, result);
  free(back);
}

/* What the host functions of the cross-device check share. */
typedef struct {
  atomic_int first_done;   /* set by device A's queue after its hold */
  atomic_int seen_by_second; /* what device B's queue saw of it: -1 = not run yet */
} handoff_t;

static void finish_first(void *user_data) {
  handoff_t *handoff = user_data;
  sleep_ms(HOLD_MS);
  atomic_store(&handoff->first_done, 1);
}

static void observe_first(void *user_data) {
  handoff_t *handoff = user_data;
  atomic_store(&handoff->seen_by_second, atomic_load(&handoff->first_done));
}

void check_event_two_devices(check_env_t *env, check_result_t *result) {
  if (env->peer == NULL) {
    unsupported(result, "this machine has one device: there is no second device to wait on");
    return;
  }
  handoff_t handoff;
  atomic_init(&handoff.first_done, 0);
  atomic_init(&handoff.seen_by_second, -1);
  ol_queue_handle_t mine = NULL, theirs = NULL;
  ol_event_handle_t done = NULL;
  char what[96];
  snprintf(what, sizeof what, "olWaitEvents(queue of device #%d, event of device #%d)",
           env->peer->index, env->device->index);
  if (!create_queue(env->device, &mine, result) || !create_queue(env->peer, &theirs, result) ||
      !ol_ok(result, olLaunchHostFunction(mine, finish_first, &handoff), "olLaunchHostFunction") ||
      !ol_ok(result, olCreateEvent(mine, &done), "olCreateEvent") ||
      !ol_ok(result, olWaitEvents(theirs, &done, 1), what) ||
      !ol_ok(result, olLaunchHostFunction(theirs, observe_first, &handoff),
             "olLaunchHostFunction(other device's queue)") ||
      !ol_ok(result, olSyncQueue(theirs), "olSyncQueue(other device's queue)"))
    goto out;
  if (atomic_load(&handoff.seen_by_second) != 1)
    fail(result, "device #%d's queue ran past its wait before device #%d's event completed",
         env->peer->index, env->device->index);
out:
  /* Both queues are synced before `handoff` goes out of scope. */
  if (mine != NULL)
    ol_ok(result, olSyncQueue(mine), "olSyncQueue");
  if (theirs != NULL)
    ol_ok(result, olSyncQueue(theirs), "olSyncQueue(other device's queue)");
  if (done != NULL)
    ol_ok(result, olDestroyEvent(done), "olDestroyEvent");
  destroy_queue(mine, result);
  destroy_queue(theirs, result);
}

/* What the host functions of the order check share. */
typedef struct {
  atomic_int calls;
  int order[3];
  const unsigned char *copied; /* the host buffer a queued copy fills before step 2 */
  const unsigned char *expected;
  size_t size;
  atomic_int copy_seen; /* step 2 saw the copy's bytes */
} order_log_t;

static void log_step(order_log_t *log, int step) {
  int slot = atomic_fetch_add(&log->calls, 1);
  if (slot < 3)
    log->order[slot] = step;
}
static void step_one(void *user_data) { log_step(user_data, 1); }
static void step_two(void *user_data) {
  order_log_t *log = user_data;
  atomic_store(&log->copy_seen, memcmp(log->copied, log->expected, log->size) == 0);
  log_step(log, 2);
}
static void step_three(void *user_data) { log_step(user_data, 3); }

void check_host_function_order(check_env_t *env, check_result_t *result) {
  const size_t size = 65536 + 5;
  ol_queue_handle_t queue = NULL;
  unsigned char *src = malloc(size), *back = malloc(size);
  unsigned char *memory = device_alloc(env->device, OL_ALLOC_TYPE_DEVICE, size, result);
  order_log_t log;
  memset(&log, 0, sizeof log);
  atomic_init(&log.calls, 0);
  atomic_init(&log.copy_seen, 0);
  if (src == NULL || back == NULL) {
    fail(result, "malloc(%zu) failed", size);
    goto out;
  }
  fill_pattern(src, size, 11);
  memset(back, 0, size);
  log.copied = back;
  log.expected = src;
  log.size = size;
  if (memory == NULL || !create_queue(env->device, &queue, result) ||
      !ol_ok(result, olLaunchHostFunction(queue, step_one, &log), "olLaunchHostFunction(1)") ||
      !ol_ok(result, olMemcpy(queue, memory, env->device->handle, src, env->host->handle, size),
             "olMemcpy(queue, host -> device)") ||
      !ol_ok(result, olMemcpy(queue, back, env->host->handle, memory, env->device->handle, size),
             "olMemcpy(queue, device -> host)") ||
      !ol_ok(result, olLaunchHostFunction(queue, step_two, &log), "olLaunchHostFunction(2)") ||
      !ol_ok(result, olLaunchHostFunction(queue, step_three, &log), "olLaunchHostFunction(3)") ||
      !ol_ok(result, olSyncQueue(queue), "olSyncQueue"))
    goto out;
  const int calls = atomic_load(&log.calls);
  if (calls != 3)
    fail(result, "%d of 3 host functions ran by the time olSyncQueue returned", calls);
  else if (log.order[0] != 1 || log.order[1] != 2 || log.order[2] != 3)
    fail(result, "host functions ran in the order %d, %d, %d", log.order[0], log.order[1],
         log.order[2]);
  else if (!atomic_load(&log.copy_seen))
    fail(result, "a host function queued after a device -> host copy ran before the copy "
                 "had finished");
out:
  destroy_queue(queue, result);
  device_free(memory, result);
  free(src);
  free(back);
}
