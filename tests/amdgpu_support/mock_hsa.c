/* A stand-in HSA runtime (libhsa-runtime64.so.1) for tests/amdgpu_mock_hsa.rs: every
 * entry point the AMDGPU backend resolves, with hsa.h's prototypes and host-memory
 * semantics. One CPU agent and one gfx1030 GPU agent; pools are malloc; signals are
 * atomics; a queue has a thread that plays the packet processor (barrier-AND packets
 * wait for their signals, a dispatch calls the host function its kernel_object points
 * to); async copies run on threads after their dependencies. It checks what the backend
 * gives it (an async copy must not touch pageable memory) and counts what happened,
 * and the calls of each entry point (tests/amdgpu_call_counts.rs). ROCm 6.0's virtual
 * memory management (hsa_amd_vmem_*) is there unless built with -DMOCK_NO_VMEM (a ROCm 5
 * runtime): reservations take the address as a hint and answer another range when that
 * one is taken; mapped memory cannot be touched until hsa_amd_vmem_set_access gives the
 * GPU agent access; a handle released while mapped keeps its memory until the unmap. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <time.h>

typedef uint32_t st;
typedef struct { uint64_t handle; } H;
typedef struct { _Atomic int64_t value; uint64_t start, end; } sig_t_;
#define SIG(h) ((sig_t_ *)(uintptr_t)(h).handle)

typedef struct {
  uint32_t type, features;
  void *base;
  H doorbell;
  uint32_t size, reserved1;
  uint64_t id;
} queue_t;
typedef void (*queue_cb)(st, queue_t *, void *);
typedef struct {
  queue_t q; /* first: the backend's pointer is this */
  _Atomic uint64_t write, read;
  pthread_t thread;
  _Atomic int stop;
  queue_cb cb;
  void *data;
} mq_t;

static _Atomic long long bad_access;
static _Atomic long long live_reservations, live_vmem_handles, live_mappings;
static _Atomic long long live_allocs, async_copies, bad_copies, barriers, dispatches, locks, fills,
    queues, signals_created;
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct { char *p; size_t n; int locked; } table[4096];
static mq_t *all_queues[64];
static st (*event_handler)(const void *, void *);
static void *event_data;
int mock_counter = 7;

long long mock_get(const char *key) {
#define K(x) if (!strcmp(key, #x)) return x;
  K(live_allocs) K(async_copies) K(bad_copies) K(barriers) K(dispatches) K(locks) K(fills)
  K(queues) K(signals_created) K(bad_access) K(live_reservations) K(live_vmem_handles)
  K(live_mappings)
  return -1;
}

/* Calls of each entry point, counted at entry (tests/amdgpu_call_counts.rs): only calls
 * from outside count; the stand-in's own threads (packet processor, copies, signal
 * handlers) set `stand_in_thread`, so what they do (or a handler of the backend they
 * run) is not the caller's. */
#include "../stand_in_calls/count_calls.h"

/* mock_hold(1): the test's thread stands for a host faster than everything else, so
 * that what an operation polls is the same every time (tests/amdgpu_call_counts.rs).
 * Until mock_hold(0), nothing completes: the packet processors take no packet, async
 * copies do not start, and a signal that another thread of the process (a host step
 * of the backend) stores with release semantics waits before it is stored. */
static _Atomic int held;
static pthread_t holder;
void mock_hold(int on) {
  if (on) holder = pthread_self();
  atomic_store(&held, on);
}
static void wait_while_held(void) {
  while (atomic_load(&held)) sched_yield();
}

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void remember(void *p, size_t n, int locked) {
  pthread_mutex_lock(&table_lock);
  for (int i = 0; i < 4096; ++i)
    if (table[i].p == NULL) { table[i].p = p; table[i].n = n; table[i].locked = locked; break; }
  pthread_mutex_unlock(&table_lock);
}
static int forget(void *p, int locked) {
  int found = 0;
  pthread_mutex_lock(&table_lock);
  for (int i = 0; i < 4096; ++i)
    if (table[i].p == p && table[i].locked == locked) { table[i].p = NULL; found = 1; break; }
  pthread_mutex_unlock(&table_lock);
  return found;
}
/* 0: unknown (pageable), 1: pool memory, 2: locked. */
static int kind_of(const void *p, size_t n) {
  int kind = 0;
  pthread_mutex_lock(&table_lock);
  for (int i = 0; i < 4096; ++i)
    if (table[i].p != NULL && (const char *)p >= table[i].p &&
        (const char *)p + n <= table[i].p + table[i].n) { kind = table[i].locked ? 2 : 1; break; }
  pthread_mutex_unlock(&table_lock);
  return kind;
}

#ifndef MOCK_NO_VMEM
/* ---- ROCm 6.0's virtual memory management --------------------------------------------- */
#define GRANULE 4096u
typedef struct { uint32_t permissions; H agent; } access_desc;
struct vrange { uintptr_t base; size_t size; };
struct vhandle { int fd; size_t size; unsigned magic; };
static struct vrange reservations[64], mappings[64];
static pthread_mutex_t vmem_lock = PTHREAD_MUTEX_INITIALIZER;

static struct vrange *find_range(struct vrange *set, uintptr_t p, size_t n, int exact) {
  for (int i = 0; i < 64; i++) {
    struct vrange *r = &set[i];
    if (!r->size) continue;
    if (exact ? (r->base == p && r->size == n) : (p >= r->base && p + n <= r->base + r->size)) return r;
  }
  return NULL;
}
static int overlaps_mapping(uintptr_t p, size_t n) {
  for (int i = 0; i < 64; i++)
    if (mappings[i].size && mappings[i].base < p + n && p < mappings[i].base + mappings[i].size) return 1;
  return 0;
}
static struct vrange *free_slot(struct vrange *set) {
  for (int i = 0; i < 64; i++)
    if (!set[i].size) return &set[i];
  return NULL;
}
/* `address` is a hint: a range in use gets another, as ROCr does. */
st hsa_amd_vmem_address_reserve(void **va, size_t size, uint64_t address, uint64_t flags) { COUNTED
  if (!va || !size || size % GRANULE || flags || address % GRANULE) return 0x1001;
  int nr = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
  void *got = MAP_FAILED;
  if (address) got = mmap((void *)(uintptr_t)address, size, PROT_NONE, nr | MAP_FIXED_NOREPLACE, -1, 0);
  if (got == MAP_FAILED) got = mmap(NULL, size, PROT_NONE, nr, -1, 0);
  if (got == MAP_FAILED) return 0x1008;
  pthread_mutex_lock(&vmem_lock);
  struct vrange *r = free_slot(reservations);
  if (r) { *r = (struct vrange){(uintptr_t)got, size}; live_reservations++; }
  pthread_mutex_unlock(&vmem_lock);
  if (!r) { munmap(got, size); return 0x1008; }
  *va = got;
  return 0;
}
st hsa_amd_vmem_address_free(void *va, size_t size) { COUNTED
  pthread_mutex_lock(&vmem_lock);
  struct vrange *r = find_range(reservations, (uintptr_t)va, size, 1);
  if (!r || overlaps_mapping((uintptr_t)va, size)) { pthread_mutex_unlock(&vmem_lock); return 0x1001; }
  munmap(va, size);
  r->size = 0;
  live_reservations--;
  pthread_mutex_unlock(&vmem_lock);
  return 0;
}
/* Device memory comes from the GPU's own pool (10), where runtime allocation is allowed. */
st hsa_amd_vmem_handle_create(H pool, size_t size, uint32_t type, uint64_t flags, H *handle) { COUNTED
  if (pool.handle != 10 || !size || size % GRANULE || type > 1 || flags || !handle) return 0x1001;
  int fd = memfd_create("hsa_amd_vmem", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, (off_t)size)) { if (fd >= 0) close(fd); return 0x1008; }
  struct vhandle *m = malloc(sizeof *m);
  *m = (struct vhandle){fd, size, 0xA3D};
  live_vmem_handles++;
  handle->handle = (uint64_t)(uintptr_t)m;
  return 0;
}
st hsa_amd_vmem_handle_release(H handle) { COUNTED
  struct vhandle *m = (struct vhandle *)(uintptr_t)handle.handle;
  if (!m || m->magic != 0xA3D) return 0x1001;
  m->magic = 0;
  close(m->fd);
  free(m);
  live_vmem_handles--;
  return 0;
}
/* Mapped memory is not accessible until hsa_amd_vmem_set_access. */
st hsa_amd_vmem_map(void *va, size_t size, size_t offset, H handle, uint64_t flags) { COUNTED
  struct vhandle *m = (struct vhandle *)(uintptr_t)handle.handle;
  if (!m || m->magic != 0xA3D) return 0x1001;
  if (!size || size % GRANULE || (uintptr_t)va % GRANULE || offset || flags || size > m->size) return 0x1001;
  pthread_mutex_lock(&vmem_lock);
  struct vrange *slot = free_slot(mappings);
  if (!find_range(reservations, (uintptr_t)va, size, 0) || overlaps_mapping((uintptr_t)va, size) || !slot ||
      mmap(va, size, PROT_NONE, MAP_SHARED | MAP_FIXED, m->fd, 0) == MAP_FAILED) {
    pthread_mutex_unlock(&vmem_lock);
    return 0x1001;
  }
  *slot = (struct vrange){(uintptr_t)va, size};
  live_mappings++;
  pthread_mutex_unlock(&vmem_lock);
  return 0;
}
st hsa_amd_vmem_unmap(void *va, size_t size) { COUNTED
  pthread_mutex_lock(&vmem_lock);
  struct vrange *r = find_range(mappings, (uintptr_t)va, size, 1);
  if (!r) { pthread_mutex_unlock(&vmem_lock); return 0x1001; }
  mmap(va, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
  r->size = 0;
  live_mappings--;
  pthread_mutex_unlock(&vmem_lock);
  forget(va, 0);
  return 0;
}
/* The GPU (agent 2) must be given access; the memory then counts as pool memory. */
st hsa_amd_vmem_set_access(void *va, size_t size, const access_desc *desc, size_t n) { COUNTED
  if (!desc || !n) return 0x1001;
  int gpu_rw = 0;
  for (size_t i = 0; i < n; i++) {
    if (desc[i].permissions > 3 || (desc[i].agent.handle != 1 && desc[i].agent.handle != 2)) return 0x1001;
    if (desc[i].agent.handle == 2 && desc[i].permissions == 3) gpu_rw = 1;
  }
  pthread_mutex_lock(&vmem_lock);
  struct vrange *r = find_range(mappings, (uintptr_t)va, size, 1);
  pthread_mutex_unlock(&vmem_lock);
  if (!r) return 0x1001;
  if (!gpu_rw) return 0;
  if (mprotect(va, size, PROT_READ | PROT_WRITE)) return 0x1001;
  remember(va, size, 0);
  return 0;
}
#endif

st hsa_init(void) { COUNTED return 0; }
st hsa_status_string(st s, const char **t) { COUNTED
  *t = s == 0x1008 ? "HSA_STATUS_ERROR_OUT_OF_RESOURCES: mock out of memory" : "mock status";
  return 0;
}
st hsa_system_get_info(uint32_t a, void *v) { COUNTED
  if (a == 0 || a == 1) { *(uint16_t *)v = 1; return 0; }
  if (a == 3) { *(uint64_t *)v = 1000000000ull; return 0; } /* ticks are ns */
  return 0x1001;
}
st hsa_iterate_agents(st (*cb)(H, void *), void *d) { COUNTED
  st s = cb((H){1}, d);
  return s ? s : cb((H){2}, d);
}
st hsa_agent_get_info(H a, uint32_t attr, void *v) { COUNTED
  int gpu = a.handle == 2;
  switch (attr) {
  case 17: case 2: *(uint32_t *)v = gpu ? 1 : 0; return 0;
  case 0: strcpy(v, gpu ? "gfx1030" : "Mock CPU"); return 0;
  case 1: strcpy(v, "AMD"); return 0;
  case 0xA009: strcpy(v, "Mock Radeon"); return 0;
  case 0xA011: strcpy(v, "GPU-feedfacecafebeef"); return 0;
  case 0xA002: *(uint32_t *)v = 36; return 0;
  case 6: *(uint32_t *)v = 32; return 0;
  case 7: { uint16_t *d = v; d[0] = d[1] = d[2] = 1024; return 0; }
  case 8: *(uint32_t *)v = 1024; return 0;
  case 9: { uint32_t *d = v; d[0] = d[1] = d[2] = 0xffffffffu; return 0; }
  case 10: *(uint32_t *)v = 0xffffffffu; return 0;
  case 12: *(uint32_t *)v = 4; return 0;
  case 14: *(uint32_t *)v = 131072; return 0;
  case 0xA003: *(uint32_t *)v = 2450; return 0;
  case 0xA008: *(uint32_t *)v = 1000; return 0;
  }
  return 0x1001;
}
static const char isa_name[] = "amdgcn-amd-amdhsa--gfx1030";
st hsa_agent_iterate_isas(H a, st (*cb)(H, void *), void *d) { COUNTED (void)a; return cb((H){100}, d); }
st hsa_isa_get_info_alt(H isa, uint32_t attr, void *v) { COUNTED
  (void)isa;
  if (attr == 0) { *(uint32_t *)v = (uint32_t)strlen(isa_name); return 0; }
  if (attr == 1) { memcpy(v, isa_name, strlen(isa_name)); return 0; }
  return 0x1001;
}

/* GPU: 10 coarse-grained, 11 group segment. CPU: 20 fine-grained + kernarg, 21 fine. */
st hsa_amd_agent_iterate_memory_pools(H a, st (*cb)(H, void *), void *d) { COUNTED
  st s = cb((H){a.handle == 2 ? 10 : 20}, d);
  return s ? s : cb((H){a.handle == 2 ? 11 : 21}, d);
}
st hsa_amd_memory_pool_get_info(H p, uint32_t attr, void *v) { COUNTED
  switch (attr) {
  case 0: *(uint32_t *)v = p.handle == 11 ? 3 : 0; return 0;
  case 1: *(uint32_t *)v = p.handle == 10 ? 4 : p.handle == 20 ? 3 : p.handle == 21 ? 2 : 0; return 0;
  case 2: case 16: *(size_t *)v = p.handle == 11 ? 65536 : p.handle == 10 ? (16ull << 30) : (64ull << 30); return 0;
  case 5: *(bool *)v = p.handle != 11; return 0;
  case 6: *(size_t *)v = 4096; return 0; /* RUNTIME_ALLOC_GRANULE */
  }
  return 0x1001;
}
st hsa_amd_memory_pool_allocate(H pool, size_t size, uint32_t flags, void **p) { COUNTED
  (void)flags;
  if (pool.handle == 11) return 0x1001;
  if (posix_memalign(p, 64, size)) return 0x1008;
  memset(*p, 0, size);
  remember(*p, size, 0);
  ++live_allocs;
  return 0;
}
st hsa_amd_memory_pool_free(void *p) { COUNTED
  if (!forget(p, 0)) return 0x1001;
  free(p);
  --live_allocs;
  return 0;
}
/* Only GPU 2 exists: it reaches its own pool 10 by default, the host pools once allowed;
 * the CPU never reaches VRAM (as without a large BAR). */
st hsa_amd_agent_memory_pool_get_info(H agent, H pool, uint32_t attr, void *v) { COUNTED
  if (attr != 0) return 0x1001;
  *(uint32_t *)v = agent.handle == 2 ? (pool.handle == 10 ? 1 : 2) : (pool.handle == 10 ? 0 : 1);
  return 0;
}
st hsa_amd_agents_allow_access(uint32_t n, const H *agents, const uint32_t *flags, const void *p) { COUNTED
  if (n == 0 || flags != NULL) return 0x1001;
  for (uint32_t i = 0; i < n; ++i)
    if (agents[i].handle != 2) { ++bad_access; return 0x1001; } /* e.g. the CPU for VRAM */
  (void)p;
  return 0;
}

typedef struct { char *dst; const char *src; size_t n; sig_t_ *deps[8]; uint32_t ndeps; sig_t_ *done; } copy_job;
static void *run_copy(void *arg) {
  stand_in_thread = 1;
  copy_job *j = arg;
  wait_while_held();
  for (uint32_t i = 0; i < j->ndeps; ++i)
    while (atomic_load(&j->deps[i]->value) >= 1) sched_yield();
  memmove(j->dst, j->src, j->n);
  if (j->done) { j->done->end = now_ns(); atomic_fetch_sub(&j->done->value, 1); }
  free(j);
  return NULL;
}
st hsa_amd_memory_async_copy(void *dst, H da, const void *src, H sa, size_t n, uint32_t ndeps,
                             const H *deps, H done) { COUNTED
  (void)da; (void)sa;
  if (ndeps > 8) return 0x1001;
  if (kind_of(dst, n) == 0 || kind_of(src, n) == 0) ++bad_copies; /* pageable memory */
  ++async_copies;
  copy_job *j = calloc(1, sizeof *j);
  j->dst = dst; j->src = src; j->n = n; j->ndeps = ndeps; j->done = SIG(done);
  for (uint32_t i = 0; i < ndeps; ++i) j->deps[i] = SIG(deps[i]);
  pthread_t t;
  pthread_create(&t, NULL, run_copy, j);
  pthread_detach(t);
  return 0;
}
st hsa_amd_memory_lock(void *host, size_t n, H *agents, int na, void **agent_ptr) { COUNTED
  (void)agents;
  if (na < 1) return 0x1001;
  remember(host, n, 1);
  ++locks;
  *agent_ptr = host;
  return 0;
}
st hsa_amd_memory_unlock(void *host) { COUNTED return forget(host, 1) ? 0 : 0x1001; }
st hsa_amd_memory_fill(void *p, uint32_t value, size_t count) { COUNTED
  for (size_t i = 0; i < count; ++i) ((uint32_t *)p)[i] = value;
  ++fills;
  return 0;
}
st hsa_memory_copy(void *dst, const void *src, size_t n) { COUNTED memmove(dst, src, n); return 0; }
typedef struct { uint32_t size, type; void *agent_base, *host_base; size_t bytes; void *user; H owner; uint32_t flags; } pointer_info;
st hsa_amd_pointer_info(const void *p, pointer_info *info, void *alloc, uint32_t *n, H **acc) { COUNTED
  (void)alloc; (void)n; (void)acc;
  if (info->size < sizeof(pointer_info)) return 0x1001;
  info->type = (uint32_t)kind_of(p, 1);
  info->host_base = info->agent_base = NULL;
  info->bytes = 0;
  pthread_mutex_lock(&table_lock);
  for (int i = 0; i < 4096; ++i)
    if (table[i].p != NULL && (const char *)p >= table[i].p && (const char *)p < table[i].p + table[i].n) {
      info->host_base = info->agent_base = table[i].p;
      info->bytes = table[i].n;
      break;
    }
  pthread_mutex_unlock(&table_lock);
  return 0;
}

static void new_signal(int64_t initial, H *out) {
  sig_t_ *s = calloc(1, sizeof *s);
  atomic_store(&s->value, initial);
  out->handle = (uint64_t)(uintptr_t)s;
  ++signals_created;
}
st hsa_signal_create(int64_t initial, uint32_t n, const H *consumers, H *out) { COUNTED
  (void)n; (void)consumers;
  new_signal(initial, out);
  return 0;
}
st hsa_signal_destroy(H s) { COUNTED free(SIG(s)); return 0; }
void hsa_signal_store_relaxed(H s, int64_t v) { COUNTED atomic_store(&SIG(s)->value, v); }
void hsa_signal_store_screlease(H s, int64_t v) { COUNTED
  if (!stand_in_thread && atomic_load(&held) && !pthread_equal(pthread_self(), holder)) wait_while_held();
  SIG(s)->end = now_ns(); atomic_store(&SIG(s)->value, v); }
int64_t hsa_signal_load_scacquire(H s) { COUNTED return atomic_load(&SIG(s)->value); }
static int holds(int64_t v, uint32_t cond, int64_t cmp) {
  return cond == 0 ? v == cmp : cond == 1 ? v != cmp : cond == 2 ? v < cmp : v >= cmp;
}
int64_t hsa_signal_wait_scacquire(H s, uint32_t cond, int64_t cmp, uint64_t timeout, uint32_t state) { COUNTED
  (void)state;
  const uint64_t end = now_ns() + timeout;
  for (;;) {
    int64_t v = atomic_load(&SIG(s)->value);
    if (holds(v, cond, cmp) || now_ns() >= end) return v;
    sched_yield();
  }
}
typedef struct { sig_t_ *s; uint32_t cond; int64_t value; bool (*handler)(int64_t, void *); void *arg; } handler_job;
static void *run_handler(void *arg) {
  stand_in_thread = 1;
  handler_job *j = arg;
  int64_t v;
  while (!holds(v = atomic_load(&j->s->value), j->cond, j->value)) sched_yield();
  j->handler(v, j->arg);
  free(j);
  return NULL;
}
st hsa_amd_signal_async_handler(H s, uint32_t cond, int64_t value, bool (*handler)(int64_t, void *), void *arg) { COUNTED
  handler_job *j = malloc(sizeof *j);
  j->s = SIG(s); j->cond = cond; j->value = value; j->handler = handler; j->arg = arg;
  pthread_t t;
  pthread_create(&t, NULL, run_handler, j);
  pthread_detach(t);
  return 0;
}

/* The packet processor: one packet at a time, in order. */
typedef void (*mock_kernel)(const void *kernarg, const void *packet);
static void *process(void *arg) {
  stand_in_thread = 1;
  mq_t *m = arg;
  while (!atomic_load(&m->stop)) {
    if (atomic_load(&held)) { sched_yield(); continue; }
    uint64_t r = atomic_load(&m->read);
    unsigned char *slot = (unsigned char *)m->q.base + (r % m->q.size) * 64;
    _Atomic uint32_t *word = (_Atomic uint32_t *)slot;
    uint32_t header = atomic_load_explicit(word, memory_order_acquire);
    uint32_t type = header & 0xff;
    if (type == 1 || r >= atomic_load(&m->write)) { sched_yield(); continue; }
    uint64_t signal;
    memcpy(&signal, slot + 56, 8);
    uint64_t start = now_ns();
    if (type == 3) {
      for (int i = 0; i < 5; ++i) {
        uint64_t dep;
        memcpy(&dep, slot + 8 + 8 * i, 8);
        while (dep && atomic_load(&((sig_t_ *)(uintptr_t)dep)->value) >= 1 && !atomic_load(&m->stop))
          sched_yield();
      }
      ++barriers;
    } else if (type == 2) {
      uint64_t object, kernarg;
      memcpy(&object, slot + 32, 8);
      memcpy(&kernarg, slot + 40, 8);
      ((mock_kernel)(uintptr_t)object)((const void *)(uintptr_t)kernarg, slot);
      ++dispatches;
    }
    if (signal) {
      sig_t_ *s = (sig_t_ *)(uintptr_t)signal;
      s->start = start;
      s->end = now_ns();
      atomic_fetch_sub(&s->value, 1);
    }
    atomic_store_explicit(word, (header & ~0xffu) | 1u, memory_order_release);
    atomic_store(&m->read, r + 1);
  }
  return NULL;
}
st hsa_queue_create(H agent, uint32_t size, uint32_t type, queue_cb cb, void *data, uint32_t p,
                    uint32_t g, queue_t **out) { COUNTED
  (void)p; (void)g;
  if (agent.handle != 2 || type != 0 || size == 0 || (size & (size - 1))) return 0x1001;
  mq_t *m = calloc(1, sizeof *m);
  if (posix_memalign(&m->q.base, 64, (size_t)size * 64)) return 0x1008;
  for (uint32_t i = 0; i < size; ++i) *(uint16_t *)((char *)m->q.base + i * 64) = 1;
  new_signal(0, &m->q.doorbell);
  m->q.size = size;
  m->cb = cb;
  m->data = data;
  for (int i = 0; i < 64; ++i) if (all_queues[i] == NULL) { all_queues[i] = m; break; }
  pthread_create(&m->thread, NULL, process, m);
  ++queues;
  *out = &m->q;
  return 0;
}
st hsa_queue_destroy(queue_t *q) { COUNTED
  mq_t *m = (mq_t *)q;
  atomic_store(&m->stop, 1);
  pthread_join(m->thread, NULL);
  for (int i = 0; i < 64; ++i) if (all_queues[i] == m) all_queues[i] = NULL;
  free(m->q.base);
  free(m);
  return 0;
}
uint64_t hsa_queue_add_write_index_relaxed(const queue_t *q, uint64_t n) { COUNTED
  return atomic_fetch_add(&((mq_t *)q)->write, n);
}
uint64_t hsa_queue_load_read_index_scacquire(const queue_t *q) { COUNTED return atomic_load(&((mq_t *)q)->read); }
st hsa_amd_profiling_set_profiler_enabled(queue_t *q, int on) { COUNTED (void)q; (void)on; return 0; }
typedef struct { uint64_t start, end; } dispatch_time;
st hsa_amd_profiling_get_dispatch_time(H agent, H s, dispatch_time *t) { COUNTED
  (void)agent;
  t->start = SIG(s)->start;
  t->end = SIG(s)->end;
  return 0;
}
st hsa_amd_register_system_event_handler(st (*cb)(const void *, void *), void *data) { COUNTED
  event_handler = cb;
  event_data = data;
  return 0;
}
/* The test's way to make the GPU fault: the system event, then every queue's callback. */
void mock_raise_fault(uint64_t address, uint32_t reasons) {
  struct { uint32_t type; uint32_t pad; H agent; uint64_t address; uint32_t reasons; } event = {0, 0, {2}, address, reasons};
  if (event_handler) event_handler(&event, event_data);
  for (int i = 0; i < 64; ++i)
    if (all_queues[i] && all_queues[i]->cb) all_queues[i]->cb(0x1027, &all_queues[i]->q, all_queues[i]->data);
}

st hsa_code_object_reader_create_from_memory(const void *bytes, size_t n, H *reader) { COUNTED
  if (n < 4 || memcmp(bytes, "\177ELF", 4)) return 0x1010;
  reader->handle = 1;
  return 0;
}
st hsa_code_object_reader_destroy(H r) { COUNTED (void)r; return 0; }
st hsa_executable_create_alt(uint32_t profile, uint32_t rounding, const char *o, H *exe) { COUNTED
  (void)o;
  if (profile != 1 || rounding != 0) return 0x1001;
  exe->handle = (uint64_t)(uintptr_t)malloc(1);
  ++live_allocs;
  return 0;
}
st hsa_executable_load_agent_code_object(H e, H a, H r, const char *o, H *loaded) { COUNTED
  (void)e; (void)o;
  if (a.handle != 2 || r.handle != 1) return 0x1001;
  loaded->handle = 1;
  return 0;
}
st hsa_executable_freeze(H e, const char *o) { COUNTED (void)e; (void)o; return 0; }
st hsa_executable_validate(H e, uint32_t *result) { COUNTED (void)e; *result = 0; return 0; }
st hsa_executable_destroy(H e) { COUNTED free((void *)(uintptr_t)e.handle); --live_allocs; return 0; }

/* vector_add(a, b, c, n): c[i] = a[i] + b[i] for every i below n, on the host. */
static void mock_vector_add(const void *kernarg, const void *packet) {
  (void)packet;
  const float *a, *b;
  float *c;
  int n;
  memcpy(&a, (const char *)kernarg, 8);
  memcpy(&b, (const char *)kernarg + 8, 8);
  memcpy(&c, (const char *)kernarg + 16, 8);
  memcpy(&n, (const char *)kernarg + 24, 4);
  for (int i = 0; i < n; ++i) c[i] = a[i] + b[i];
}
st hsa_executable_get_symbol_by_name(H e, const char *name, const H *agent, H *sym) { COUNTED
  (void)e;
  if (agent == NULL || agent->handle != 2) return 0x1001;
  if (!strcmp(name, "vector_add.kd")) { sym->handle = 1; return 0; }
  if (!strcmp(name, "counter")) { sym->handle = 2; return 0; }
  return 0x101A;
}
st hsa_executable_symbol_get_info(H sym, uint32_t attr, void *v) { COUNTED
  int kernel = sym.handle == 1;
  switch (attr) {
  case 0: *(uint32_t *)v = kernel ? 1 : 0; return 0;
  case 22: if (!kernel) return 0x1001; *(uint64_t *)v = (uint64_t)(uintptr_t)mock_vector_add; return 0;
  case 11: *(uint32_t *)v = 28; return 0;
  case 13: case 14: *(uint32_t *)v = 0; return 0;
  case 15: *(bool *)v = false; return 0;
  case 21: if (kernel) return 0x1001; *(uint64_t *)v = (uint64_t)(uintptr_t)&mock_counter; return 0;
  case 9: *(uint32_t *)v = kernel ? 0 : 4; return 0;
  }
  return 0x1001;
}
