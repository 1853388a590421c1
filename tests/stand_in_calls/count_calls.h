/* Calls of each entry point of a stand-in vendor library, by name (`__func__`), counted
 * at entry by COUNTED: what an operation costs in vendor calls (tests/cuda_call_counts.rs,
 * tests/amdgpu_call_counts.rs, read through tests/stand_in_calls/mod.rs). A thread of the
 * stand-in's own sets `stand_in_thread`, and its calls do not count.
 * mock_calls(name) reads one (NULL: all together), mock_calls_reset() starts again,
 * mock_calls_list(buf, cap) writes "name count" lines for those called since. */
#ifndef STAND_IN_COUNT_CALLS_H
#define STAND_IN_COUNT_CALLS_H
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

static __thread int stand_in_thread;
enum { MAX_NAMES = 128 };
static struct { const char *_Atomic name; _Atomic long long calls; } call_counts[MAX_NAMES];
static void count_call(const char *name) {
  if (stand_in_thread) return;
  for (int i = 0; i < MAX_NAMES; i++) {
    const char *seen = atomic_load(&call_counts[i].name);
    if (seen == NULL) {
      const char *none = NULL;
      if (atomic_compare_exchange_strong(&call_counts[i].name, &none, name))
        seen = name;
      else
        seen = none; /* another thread took the slot: for which name? */
    }
    if (seen == name || !strcmp(seen, name)) {
      atomic_fetch_add_explicit(&call_counts[i].calls, 1, memory_order_relaxed);
      return;
    }
  }
}
long long mock_calls(const char *name) {
  long long total = 0;
  for (int i = 0; i < MAX_NAMES; i++) {
    const char *seen = atomic_load(&call_counts[i].name);
    if (seen == NULL) break;
    if (name == NULL || !strcmp(seen, name))
      total += atomic_load_explicit(&call_counts[i].calls, memory_order_relaxed);
  }
  return total;
}
void mock_calls_reset(void) {
  for (int i = 0; i < MAX_NAMES; i++) atomic_store_explicit(&call_counts[i].calls, 0, memory_order_relaxed);
}
/* "name count" lines for the entry points called since the last reset. */
size_t mock_calls_list(char *out, size_t cap) {
  size_t at = 0;
  if (cap) out[0] = 0;
  for (int i = 0; i < MAX_NAMES; i++) {
    const char *seen = atomic_load(&call_counts[i].name);
    if (seen == NULL) break;
    long long n = atomic_load_explicit(&call_counts[i].calls, memory_order_relaxed);
    if (n && at < cap) at += (size_t)snprintf(out + at, cap - at, "%s %lld\n", seen, n);
  }
  return at < cap ? at : cap;
}
#define COUNTED count_call(__func__);
#endif
