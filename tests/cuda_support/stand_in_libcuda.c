/* A stand-in libcuda.so.1, built at test time, that behaves as NVIDIA's driver API
 * documentation says where a backend can get it wrong. Every entry point the backend
 * resolves is here with cuda.h's prototype, over host memory:
 *
 * - Streams are asynchronous: each has a worker thread running its commands in order;
 *   cuStreamQuery / cuEventQuery answer CUDA_ERROR_NOT_READY while work is pending.
 * - Host functions (cuLaunchHostFunc) run on one callback thread of the driver's,
 *   serialised across every stream, never on the caller's thread.
 * - A kernel named "fault" is a memory fault: the context's error becomes sticky
 *   (CUDA_ERROR_ILLEGAL_ADDRESS from every later call, queries included), the work
 *   still queued is discarded and its host functions are never called.
 * - A kernel named "hold" runs until the test calls mock_release().
 * - Copies from or to pageable host memory on a stream are synchronous with the stream
 *   as the "API synchronization behavior" page says: host to device waits for the stream
 *   before copying, device to host returns once copied.
 * - Events made with CU_EVENT_DISABLE_TIMING cannot be timed (CUDA_ERROR_INVALID_HANDLE).
 * - Streams, events and modules belong to the context current when they were made.
 *   Whose context a call on one of them uses, the thread's current one or the handle's,
 *   the documentation says only for a CUkernel launch (the stream's); the stand-in takes
 *   the stricter reading by default: the handle's context must be current, else
 *   CUDA_ERROR_INVALID_CONTEXT. mock_set_handle_context(1) takes the other: the handle's
 *   context is used whatever is current, none included.
 * - Dynamic shared memory: a launch whose static + dynamic shared memory is above
 *   48 KiB needs the function's CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES raised
 *   to cover its dynamic part; "big_static" has 40 KiB of static shared memory.
 * - cuStreamWaitValue32_v2 holds a stream until a 32-bit word reaches a value.
 * - Releasing the primary context with work still queued loses that work (counted).
 * - Virtual memory management works in 2 MiB granules: cuMemAddressReserve takes its
 *   address as a hint and answers another range when that one is taken; memory made by
 *   cuMemCreate and mapped by cuMemMap cannot be touched until cuMemSetAccess; a handle
 *   released while mapped keeps its memory until the unmap.
 *
 * mock_get(name) reads the counters below; mock_last_args copies the last launch's
 * argument block; mock_release() lets held kernels finish. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef void *CUcontext, *CUmodule, *CUfunction;
typedef struct stream *CUstream;
typedef struct event *CUevent;
typedef struct { char bytes[16]; } CUuuid;
typedef struct { unsigned id; char pad[4]; union { char raw[64]; int cooperative; } value; } CUlaunchAttribute;
typedef struct {
  unsigned gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
  CUstream hStream; CUlaunchAttribute *attrs; unsigned numAttrs;
} CUlaunchConfig;

enum {
  SUCCESS = 0, INVALID_VALUE = 1, OUT_OF_MEMORY = 2, INVALID_CONTEXT = 201,
  INVALID_HANDLE = 400, NOT_FOUND = 500, NOT_READY = 600, ILLEGAL_ADDRESS = 700,
  HOST_MEMORY_NOT_REGISTERED = 713
};
enum { DISABLE_TIMING = 2 };
enum { DEFAULT_SHARED = 49152, OPTIN_SHARED = 166912 };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;

static char contexts[2];
static long long ctx_refs, ctx_sets, live_allocs, live_modules, d8, d16, d32, copies;
static long long register_flags, last_shared, last_cooperative, b2d, bad_extra;
static long long events_created, events_timed, events_live, lost_work, host_funcs_run;
static long long host_funcs_discarded, pageable_syncs, waits_on_value, loaded_fatbins;
static long long callback_thread_calls_driver, held, launches;
static long long live_reservations, live_vmm_handles, live_mappings, vmm_supported = 1;
/* cuCtxSetLimit's: CU_LIMIT_STACK_SIZE (1 KiB by default), CU_LIMIT_MALLOC_HEAP_SIZE
 * (8 MiB), which "cannot be changed" once a kernel that uses malloc has run (here: any). */
static long long stack_limit = 1024, heap_limit = 8 << 20;
static unsigned last_grid[3], last_block[3];
static unsigned char last_args[256];
static size_t last_args_size;
static __thread CUcontext current;
static int handle_context; /* mock_set_handle_context */
static __thread int on_callback_thread;
static int counter_global = 41;
static int sticky;      /* the context's sticky error, 0 while none */
static long released;   /* mock_release() calls: held kernels end */
#define NKERNELS 7
enum { EMPTY = 6 }; /* "empty": no parameters, does nothing (the benchmarks' kernel) */
static char kernel_names[NKERNELS][24] = {"scale", "fault", "hold", "big_static",
                                          "nvptx$device$init", "nvptx$device$fini", "empty"};
static int dyn_allowed[NKERNELS] = {DEFAULT_SHARED, DEFAULT_SHARED, DEFAULT_SHARED,
                                    DEFAULT_SHARED - 40960, DEFAULT_SHARED, DEFAULT_SHARED,
                                    DEFAULT_SHARED};
static const int static_shared[NKERNELS] = {0, 0, 0, 40960, 0, 0, 0};
/* NVPTX's global constructors: one global per function holding its address (here an id),
 * the bounds the runtime points at the array it builds, and what the init and fini
 * kernels called, in order (the init kernel walks the array forwards, fini backwards). */
static unsigned long long ctor_objects[3] = {0xB200, 0xA101, 0xD000};
static const char *ctor_object_names[3] = {"__init_array_object_b_5eed_200",
                                           "__init_array_object_a_5eed_101",
                                           "__fini_array_object_d_5eed_65535"};
static unsigned long long *array_bounds[4]; /* init start, init end, fini start, fini end */
static const char *bound_names[4] = {"__init_array_start", "__init_array_end",
                                     "__fini_array_start", "__fini_array_end"};
static CUmodule ctor_module; /* the module loaded from PTX that names the objects */
static long long ctor_calls[8];
static int nctor_calls;

long long mock_get(const char *key) {
#define K(x) if (!strcmp(key, #x)) return x;
  K(ctx_refs) K(ctx_sets) K(live_allocs) K(live_modules) K(d8) K(d16) K(d32) K(copies)
  K(register_flags) K(last_shared) K(last_cooperative) K(b2d) K(bad_extra)
  K(events_created) K(events_timed) K(events_live) K(lost_work) K(host_funcs_run)
  K(host_funcs_discarded) K(pageable_syncs) K(waits_on_value) K(loaded_fatbins) K(sticky)
  K(callback_thread_calls_driver) K(held) K(stack_limit) K(heap_limit)
  K(live_reservations) K(live_vmm_handles) K(live_mappings)
  if (!strcmp(key, "dyn_allowed")) return dyn_allowed[0];
  if (!strcmp(key, "dyn_allowed_big_static")) return dyn_allowed[3];
  if (!strcmp(key, "grid")) return last_grid[0] * 10000LL + last_grid[1] * 100 + last_grid[2];
  if (!strcmp(key, "block")) return last_block[0] * 10000LL + last_block[1] * 100 + last_block[2];
  if (!strcmp(key, "current_is_primary")) return current == &contexts[0];
  if (!strcmp(key, "ctor_calls")) return nctor_calls;
  if (!strncmp(key, "ctor_call_", 10)) return ctor_calls[atoi(key + 10) & 7];
  return -1;
}
size_t mock_last_args(unsigned char *out, size_t cap) {
  memcpy(out, last_args, last_args_size < cap ? last_args_size : cap);
  return last_args_size;
}
void mock_release(void) {
  pthread_mutex_lock(&lock); released++; pthread_cond_broadcast(&changed); pthread_mutex_unlock(&lock);
}
/* Makes `c` current on the calling thread, as an application's own CUDA code would. */
void mock_set_current(void *c) { current = c; }
/* A GPU without virtual memory management (attribute 102 answers 0). */
void mock_set_vmm(long long on) { vmm_supported = on; }
void *mock_current(void) { return current; }
/* 0: a stream's or event's calls need its context current; 1: they use its context. */
void mock_set_handle_context(long long on) { handle_context = (int)on; }

/* Host functions must not call CUDA: counts the calls made from the callback thread. */
#define ENTRY                                                                              \
  do {                                                                                     \
    if (on_callback_thread) __atomic_add_fetch(&callback_thread_calls_driver, 1, __ATOMIC_RELAXED); \
  } while (0)
#define NEED_CONTEXT ENTRY; if (!current) return INVALID_CONTEXT;
/* A call on stream, event or module `h` (of a context; NULL: the current context's stream). */
#define ON_CONTEXT_OF(h)                                                                   \
  ENTRY;                                                                                   \
  if ((h) == NULL ? !current : !handle_context && (h)->ctx != current) return INVALID_CONTEXT;
#define STICKY if (__atomic_load_n(&sticky, __ATOMIC_ACQUIRE)) return sticky;

/* Calls of each entry point, counted at entry (tests/cuda_call_counts.rs); the callback
 * thread's own do not count (it calls nothing of the driver). */
#include "../stand_in_calls/count_calls.h"

/* ---- memory: what an address is ---------------------------------------------------- */
enum { PAGEABLE, DEVICE, PINNED };
struct range { uintptr_t base; size_t size; int kind; };
static struct range ranges[4096];
static int nranges;

static void add_range(void *p, size_t n, int kind) {
  pthread_mutex_lock(&lock);
  if (nranges < 4096) ranges[nranges++] = (struct range){(uintptr_t)p, n, kind};
  pthread_mutex_unlock(&lock);
}
static void remove_range(void *p) {
  pthread_mutex_lock(&lock);
  for (int i = 0; i < nranges; i++)
    if (ranges[i].base == (uintptr_t)p) { ranges[i] = ranges[--nranges]; break; }
  pthread_mutex_unlock(&lock);
}
static int kind_of(uintptr_t p) {
  int kind = PAGEABLE;
  pthread_mutex_lock(&lock);
  for (int i = 0; i < nranges; i++)
    if (p >= ranges[i].base && p < ranges[i].base + ranges[i].size) { kind = ranges[i].kind; break; }
  pthread_mutex_unlock(&lock);
  return kind;
}

/* ---- the driver's callback thread ----------------------------------------------------- */
struct callback { void (*fn)(void *); void *data; int done; struct callback *next; };
static struct callback *callbacks, **callbacks_tail = &callbacks;
static pthread_t callback_thread;
static int callback_thread_started;

static void *run_callbacks(void *unused) {
  (void)unused;
  on_callback_thread = 1;
  stand_in_thread = 1;
  pthread_mutex_lock(&lock);
  for (;;) {
    while (!callbacks) pthread_cond_wait(&changed, &lock);
    struct callback *c = callbacks;
    callbacks = c->next;
    if (!callbacks) callbacks_tail = &callbacks;
    pthread_mutex_unlock(&lock);
    c->fn(c->data);
    pthread_mutex_lock(&lock);
    host_funcs_run++;
    c->done = 1;
    pthread_cond_broadcast(&changed);
  }
  return NULL;
}

/* Runs fn(data) on the callback thread and waits for it (lock held). */
static void call_back(void (*fn)(void *), void *data) {
  if (!callback_thread_started) {
    pthread_create(&callback_thread, NULL, run_callbacks, NULL);
    pthread_detach(callback_thread);
    callback_thread_started = 1;
  }
  struct callback c = {fn, data, 0, NULL};
  *callbacks_tail = &c;
  callbacks_tail = &c.next;
  pthread_cond_broadcast(&changed);
  while (!c.done) pthread_cond_wait(&changed, &lock);
}

/* ---- streams ----------------------------------------------------------------------- */
enum { C_COPY, C_SET, C_KERNEL, C_HOST, C_RECORD, C_WAIT_EVENT, C_WAIT_VALUE };
struct command {
  int kind;
  uintptr_t dst, src;
  size_t size, count;
  unsigned value, unit;
  int function;
  unsigned char args[24]; /* scale's parameters, as launched */
  unsigned long long threads;
  void (*fn)(void *);
  void *data;
  struct event *event;
  long target;
  struct command *next;
};
struct stream {
  CUcontext ctx;
  struct command *head, **tail;
  int busy, destroyed;
  long pending;
};
struct module { CUcontext ctx; };
struct event { CUcontext ctx; unsigned flags; long recorded, completed; double at; int live; };

static struct stream *streams[256];
static int nstreams;
/* How long the "GPU" takes to reach each command of a stream (mock_set_latency_us): a
 * real GPU passes even an event record on an idle stream microseconds after the call,
 * and cuEventQuery / cuStreamQuery answer "not ready" until then. */
static unsigned latency_us;
void mock_set_latency_us(unsigned us) { latency_us = us; }

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void set_memory(uintptr_t dst, unsigned value, unsigned unit, size_t count) {
  for (size_t i = 0; i < count; i++) {
    if (unit == 1) ((unsigned char *)dst)[i] = (unsigned char)value;
    else if (unit == 2) ((unsigned short *)dst)[i] = (unsigned short)value;
    else ((unsigned *)dst)[i] = value;
  }
}

/* scale(float *x, float a, size_t n): each of the grid's threads t < n multiplies x[t]
 * by a, when x is device memory (a launch that passes no such pointer does nothing). */
static void run_scale(struct command *c) {
  float *x, a;
  unsigned long long n;
  memcpy(&x, c->args, 8); memcpy(&a, c->args + 8, 4); memcpy(&n, c->args + 16, 8);
  unsigned long long count = n < c->threads ? n : c->threads;
  if (!count || kind_of((uintptr_t)x) != DEVICE || kind_of((uintptr_t)(x + count) - 1) != DEVICE)
    return;
  for (unsigned long long t = 0; t < count; t++) x[t] *= a;
}

/* Runs one command (lock held; released around work that takes time). */
static void execute(struct command *c) {
  switch (c->kind) {
  case C_COPY:
    pthread_mutex_unlock(&lock);
    memmove((void *)c->dst, (void *)c->src, c->size);
    pthread_mutex_lock(&lock);
    copies++;
    break;
  case C_SET:
    pthread_mutex_unlock(&lock);
    set_memory(c->dst, c->value, c->unit, c->count);
    pthread_mutex_lock(&lock);
    break;
  case C_KERNEL:
    if (c->function == 0) {
      pthread_mutex_unlock(&lock);
      run_scale(c);
      pthread_mutex_lock(&lock);
    } else if (c->function == 1) {
      __atomic_store_n(&sticky, ILLEGAL_ADDRESS, __ATOMIC_RELEASE);
    } else if (c->function == 2) {
      /* Held until a mock_release() after its launch. */
      held++;
      pthread_cond_broadcast(&changed);
      while (released <= c->target) pthread_cond_wait(&changed, &lock);
      held--;
    } else if (c->function == 4 || c->function == 5) {
      unsigned long long *from = array_bounds[c->function == 4 ? 0 : 2];
      unsigned long long *to = array_bounds[c->function == 4 ? 1 : 3];
      for (long n = to - from, k = 0; k < n && nctor_calls < 8; k++)
        ctor_calls[nctor_calls++] = (long long)(c->function == 4 ? from[k] : from[n - 1 - k]);
    }
    break;
  case C_HOST:
    call_back(c->fn, c->data);
    break;
  case C_RECORD:
    c->event->completed = c->target;
    c->event->at = now_ms();
    break;
  case C_WAIT_EVENT:
    while (c->event->completed < c->target && !sticky) pthread_cond_wait(&changed, &lock);
    break;
  case C_WAIT_VALUE:
    waits_on_value++;
    while (__atomic_load_n((volatile unsigned *)c->dst, __ATOMIC_ACQUIRE) < c->value && !sticky) {
      pthread_mutex_unlock(&lock);
      usleep(50);
      pthread_mutex_lock(&lock);
    }
    break;
  }
}

static void *run_stream(void *arg) {
  struct stream *s = arg;
  pthread_mutex_lock(&lock);
  for (;;) {
    while (!s->head && !s->destroyed) pthread_cond_wait(&changed, &lock);
    if (!s->head) break;
    struct command *c = s->head;
    s->head = c->next;
    if (!s->head) s->tail = &s->head;
    if (latency_us) {
      pthread_mutex_unlock(&lock);
      usleep(latency_us);
      pthread_mutex_lock(&lock);
    }
    if (sticky) {
      /* The context is lost: queued work never runs, host functions are never called. */
      if (c->kind == C_HOST) host_funcs_discarded++;
    } else {
      s->busy = 1;
      execute(c);
      s->busy = 0;
    }
    s->pending--;
    free(c);
    pthread_cond_broadcast(&changed);
  }
  for (int i = 0; i < nstreams; i++)
    if (streams[i] == s) { streams[i] = streams[--nstreams]; break; }
  pthread_mutex_unlock(&lock);
  free(s);
  return NULL;
}

static CUresult enqueue(struct stream *s, struct command c) {
  struct command *copy = malloc(sizeof c);
  *copy = c;
  copy->next = NULL;
  pthread_mutex_lock(&lock);
  *s->tail = copy;
  s->tail = &copy->next;
  s->pending++;
  pthread_cond_broadcast(&changed);
  pthread_mutex_unlock(&lock);
  return SUCCESS;
}

/* Waits until `s` has nothing pending (lock held). */
static void drain(struct stream *s) {
  while (s->pending && !sticky) pthread_cond_wait(&changed, &lock);
  while (s->pending) pthread_cond_wait(&changed, &lock); /* discarding */
}

/* Runs `c` now on the calling thread: the NULL stream, whose work here is synchronous. */
static CUresult run_now(struct command c) {
  pthread_mutex_lock(&lock);
  execute(&c);
  pthread_mutex_unlock(&lock);
  return SUCCESS;
}

static CUresult submit(CUstream s, struct command c) {
  return s ? enqueue(s, c) : run_now(c);
}

/* Puts a held kernel on stream `s`, as a launch of "hold" would. */
void mock_hold(struct stream *s) {
  pthread_mutex_lock(&lock);
  long now = released;
  pthread_mutex_unlock(&lock);
  enqueue(s, (struct command){.kind = C_KERNEL, .function = 2, .target = now});
}

/* ---- initialisation, devices, contexts ------------------------------------------------- */
CUresult cuInit(unsigned flags) { COUNTED return flags ? INVALID_VALUE : SUCCESS; }
CUresult cuDriverGetVersion(int *v) { COUNTED *v = 12080; return SUCCESS; }
CUresult cuGetErrorName(CUresult r, const char **s) { COUNTED
  switch (r) {
  case 1: *s = "CUDA_ERROR_INVALID_VALUE"; return 0;
  case 2: *s = "CUDA_ERROR_OUT_OF_MEMORY"; return 0;
  case 218: *s = "CUDA_ERROR_INVALID_PTX"; return 0;
  case 400: *s = "CUDA_ERROR_INVALID_HANDLE"; return 0;
  case 500: *s = "CUDA_ERROR_NOT_FOUND"; return 0;
  case 700: *s = "CUDA_ERROR_ILLEGAL_ADDRESS"; return 0;
  case 701: *s = "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"; return 0;
  default: *s = NULL; return 1;
  }
}
CUresult cuGetErrorString(CUresult r, const char **s) { COUNTED
  switch (r) {
  case 1: *s = "invalid argument"; return 0;
  case 2: *s = "out of memory"; return 0;
  case 218: *s = "a PTX JIT compilation failed"; return 0;
  case 400: *s = "invalid resource handle"; return 0;
  case 500: *s = "named symbol not found"; return 0;
  case 700: *s = "an illegal memory access was encountered"; return 0;
  case 701: *s = "too many resources requested for launch"; return 0;
  default: *s = NULL; return 1;
  }
}
CUresult cuDeviceGetCount(int *n) { COUNTED *n = 1; return SUCCESS; }
CUresult cuDeviceGet(CUdevice *d, int ordinal) { COUNTED if (ordinal != 0) return 101; *d = ordinal; return SUCCESS; }
CUresult cuDeviceGetName(char *name, int len, CUdevice d) { COUNTED snprintf(name, len, "Mock GPU %d", d); return SUCCESS; }
CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice d) { COUNTED
  (void)d;
  switch (attr) {
  case 1: *v = 1024; break;            /* threads per block */
  case 2: case 3: *v = 1024; break;    /* block x, y */
  case 4: *v = 64; break;
  case 5: *v = 2147483647; break;      /* grid x */
  case 6: case 7: *v = 65535; break;
  case 8: *v = DEFAULT_SHARED; break;  /* shared per block */
  case 10: *v = 32; break;             /* warp */
  case 13: *v = 1410000; break;        /* clock, kHz */
  case 16: *v = 108; break;            /* SMs */
  case 36: *v = 1593000; break;        /* memory clock, kHz */
  case 75: *v = 8; break;              /* compute capability 8.0 */
  case 76: *v = 0; break;
  case 95: *v = 1; break;              /* cooperative launch */
  case 97: *v = OPTIN_SHARED; break;   /* shared opt-in */
  case 102: *v = (int)vmm_supported; break; /* virtual memory management */
  default: *v = 0;
  }
  return SUCCESS;
}
CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice d) { COUNTED (void)d; *bytes = 40ull << 30; return SUCCESS; }
CUresult cuDeviceGetUuid(CUuuid *u, CUdevice d) { COUNTED (void)d; memset(u->bytes, 0xff, 16); return SUCCESS; }
CUresult cuDeviceGetUuid_v2(CUuuid *u, CUdevice d) { COUNTED
  (void)d; for (int i = 0; i < 16; i++) u->bytes[i] = (char)(i * 17); return SUCCESS;
}
CUresult cuDeviceCanAccessPeer(int *can, CUdevice a, CUdevice b) { COUNTED (void)a; (void)b; *can = 0; return SUCCESS; }
CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) { COUNTED ENTRY; ctx_refs++; *c = &contexts[d]; return SUCCESS; }
/* The last release destroys the context: work still queued on its streams is lost. */
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) { COUNTED
  ENTRY; (void)d;
  if (ctx_refs <= 0) return INVALID_CONTEXT;
  if (--ctx_refs == 0) {
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nstreams; i++) lost_work += streams[i]->pending;
    pthread_mutex_unlock(&lock);
  }
  return SUCCESS;
}
CUresult cuCtxSetCurrent(CUcontext c) { COUNTED ENTRY; current = c; ctx_sets++; return SUCCESS; }
CUresult cuCtxGetCurrent(CUcontext *c) { COUNTED ENTRY; *c = current; return SUCCESS; }
CUresult cuCtxSetLimit(int limit, size_t value) { COUNTED
  NEED_CONTEXT STICKY
  switch (limit) {
  case 0: stack_limit = (long long)value; return SUCCESS;
  case 2:
    if (launches) return INVALID_VALUE;
    heap_limit = (long long)value;
    return SUCCESS;
  default: return INVALID_VALUE;
  }
}
CUresult cuCtxSynchronize(void) { COUNTED
  NEED_CONTEXT
  pthread_mutex_lock(&lock);
  for (int i = 0; i < nstreams; i++) drain(streams[i]);
  pthread_mutex_unlock(&lock);
  STICKY return SUCCESS;
}
CUresult cuCtxEnablePeerAccess(CUcontext c, unsigned f) { COUNTED ENTRY; (void)c; (void)f; return 704; }

/* ---- memory ---------------------------------------------------------------------------- */
static void *take(size_t n, size_t align) {
  void *p = aligned_alloc(align, (n + align - 1) / align * align);
  if (p) __atomic_add_fetch(&live_allocs, 1, __ATOMIC_RELAXED);
  return p;
}
static void give_back(void *p) {
  remove_range(p);
  free(p);
  __atomic_sub_fetch(&live_allocs, 1, __ATOMIC_RELAXED);
}
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) { COUNTED
  NEED_CONTEXT STICKY if (n > (1ull << 40)) return OUT_OF_MEMORY;
  void *m = take(n, 256); add_range(m, n, DEVICE); *p = (CUdeviceptr)m; return SUCCESS;
}
/* Frees once the device is done with it (cuMemFree synchronises). */
CUresult cuMemFree_v2(CUdeviceptr p) { COUNTED
  NEED_CONTEXT
  pthread_mutex_lock(&lock);
  for (int i = 0; i < nstreams; i++) drain(streams[i]);
  pthread_mutex_unlock(&lock);
  give_back((void *)p); return SUCCESS;
}
CUresult cuMemAllocHost_v2(void **p, size_t n) { COUNTED NEED_CONTEXT STICKY *p = take(n, 4096); add_range(*p, n, PINNED); return SUCCESS; }
CUresult cuMemFreeHost(void *p) { COUNTED NEED_CONTEXT give_back(p); return SUCCESS; }
CUresult cuMemAllocManaged(CUdeviceptr *p, size_t n, unsigned flags) { COUNTED
  NEED_CONTEXT STICKY if (flags != 1) return INVALID_VALUE;
  void *m = take(n, 4096); add_range(m, n, PINNED); *p = (CUdeviceptr)m; return SUCCESS;
}
CUresult cuMemHostRegister_v2(void *p, size_t n, unsigned flags) { COUNTED
  NEED_CONTEXT add_range(p, n, PINNED); register_flags = flags; return SUCCESS;
}
CUresult cuMemHostUnregister(void *p) { COUNTED
  NEED_CONTEXT
  if (kind_of((uintptr_t)p) != PINNED) return HOST_MEMORY_NOT_REGISTERED;
  remove_range(p); return SUCCESS;
}
/* 2: CU_POINTER_ATTRIBUTE_MEMORY_TYPE, 3: _DEVICE_POINTER; pageable host memory is
 * memory the driver does not know: CUDA_ERROR_INVALID_VALUE. */
CUresult cuPointerGetAttribute(void *data, int attr, CUdeviceptr p) { COUNTED
  ENTRY;
  int kind = kind_of(p);
  if (attr == 3) { *(CUdeviceptr *)data = p; return SUCCESS; }
  if (attr == 2 && kind != PAGEABLE) { *(unsigned *)data = kind == DEVICE ? 2 : 1; return SUCCESS; }
  return INVALID_VALUE;
}

/* ---- virtual memory management ---------------------------------------------------------- */
typedef unsigned long long CUmemGenericAllocationHandle;
typedef struct { int type, id; } CUmemLocation;
typedef struct {
  int type, requestedHandleTypes; CUmemLocation location; void *win32HandleMetaData;
  unsigned char allocFlags[8];
} CUmemAllocationProp;
typedef struct { CUmemLocation location; int flags; } CUmemAccessDesc;
#define GRANULE (2ull << 20)
struct reservation { uintptr_t base; size_t size; };
struct mapping { uintptr_t base; size_t size; };
struct physical { int fd; size_t size; unsigned magic; };
static struct reservation reservations[64];
static struct mapping mappings[64];

static int good_prop(const CUmemAllocationProp *p) {
  return p && p->type == 1 && p->location.type == 1 && p->location.id == 0 &&
         p->requestedHandleTypes == 0;
}
static struct reservation *reservation_holding(uintptr_t p, size_t n) {
  for (int i = 0; i < 64; i++)
    if (reservations[i].size && p >= reservations[i].base &&
        p + n <= reservations[i].base + reservations[i].size)
      return &reservations[i];
  return NULL;
}
static struct mapping *mapping_at(uintptr_t p, size_t n) {
  for (int i = 0; i < 64; i++)
    if (mappings[i].size && mappings[i].base == p && mappings[i].size == n) return &mappings[i];
  return NULL;
}
static int mapped_within(uintptr_t p, size_t n) {
  for (int i = 0; i < 64; i++)
    if (mappings[i].size && mappings[i].base < p + n && p < mappings[i].base + mappings[i].size)
      return 1;
  return 0;
}
CUresult cuMemGetAllocationGranularity(size_t *g, const CUmemAllocationProp *p, int option) { COUNTED
  ENTRY;
  if (!g || !good_prop(p) || (option != 0 && option != 1)) return INVALID_VALUE;
  *g = GRANULE;
  return SUCCESS;
}
/* `addr` is a hint: a range already in use gets another, as the driver does. */
CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t align, CUdeviceptr addr,
                             unsigned long long flags) { COUNTED
  NEED_CONTEXT
  if (!ptr || !size || size % GRANULE || flags || (align & (align - 1)) || addr % GRANULE)
    return INVALID_VALUE;
  void *got = MAP_FAILED;
  int nr = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
  if (addr) got = mmap((void *)addr, size, PROT_NONE, nr | MAP_FIXED_NOREPLACE, -1, 0);
  if (got == MAP_FAILED) {
    char *any = mmap(NULL, size + GRANULE, PROT_NONE, nr, -1, 0);
    if (any == MAP_FAILED) return OUT_OF_MEMORY;
    char *aligned = (char *)(((uintptr_t)any + GRANULE - 1) & ~(uintptr_t)(GRANULE - 1));
    if (aligned > any) munmap(any, aligned - any);
    munmap(aligned + size, any + size + GRANULE - (aligned + size));
    got = aligned;
  }
  pthread_mutex_lock(&lock);
  int i = 0;
  while (i < 64 && reservations[i].size) i++;
  if (i == 64) { pthread_mutex_unlock(&lock); munmap(got, size); return OUT_OF_MEMORY; }
  reservations[i] = (struct reservation){(uintptr_t)got, size};
  live_reservations++;
  pthread_mutex_unlock(&lock);
  *ptr = (CUdeviceptr)got;
  return SUCCESS;
}
CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size) { COUNTED
  ENTRY;
  pthread_mutex_lock(&lock);
  struct reservation *r = reservation_holding(ptr, size);
  if (!r || r->base != ptr || r->size != size || mapped_within(ptr, size)) {
    pthread_mutex_unlock(&lock);
    return INVALID_VALUE;
  }
  munmap((void *)ptr, size);
  r->size = 0;
  live_reservations--;
  pthread_mutex_unlock(&lock);
  return SUCCESS;
}
CUresult cuMemCreate(CUmemGenericAllocationHandle *h, size_t size, const CUmemAllocationProp *p,
                     unsigned long long flags) { COUNTED
  NEED_CONTEXT STICKY
  if (!h || !size || size % GRANULE || flags || !good_prop(p)) return INVALID_VALUE;
  if (size > (40ull << 30)) return OUT_OF_MEMORY;
  int fd = memfd_create("cuMemCreate", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, (off_t)size)) { if (fd >= 0) close(fd); return OUT_OF_MEMORY; }
  struct physical *m = malloc(sizeof *m);
  *m = (struct physical){fd, size, 0xC0DA};
  __atomic_add_fetch(&live_vmm_handles, 1, __ATOMIC_RELAXED);
  *h = (CUmemGenericAllocationHandle)(uintptr_t)m;
  return SUCCESS;
}
/* The mapping keeps the memory: a handle released while mapped stays until the unmap. */
CUresult cuMemRelease(CUmemGenericAllocationHandle h) { COUNTED
  ENTRY;
  struct physical *m = (struct physical *)(uintptr_t)h;
  if (!m || m->magic != 0xC0DA) return INVALID_VALUE;
  m->magic = 0;
  close(m->fd);
  free(m);
  __atomic_sub_fetch(&live_vmm_handles, 1, __ATOMIC_RELAXED);
  return SUCCESS;
}
/* Mapped memory is not accessible until cuMemSetAccess. */
CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle h,
                  unsigned long long flags) { COUNTED
  NEED_CONTEXT
  struct physical *m = (struct physical *)(uintptr_t)h;
  if (!m || m->magic != 0xC0DA) return INVALID_HANDLE;
  if (!size || size % GRANULE || ptr % GRANULE || offset || flags || size > m->size)
    return INVALID_VALUE;
  pthread_mutex_lock(&lock);
  int i = 0;
  while (i < 64 && mappings[i].size) i++;
  if (!reservation_holding(ptr, size) || mapped_within(ptr, size) || i == 64) {
    pthread_mutex_unlock(&lock);
    return INVALID_VALUE;
  }
  void *got = mmap((void *)ptr, size, PROT_NONE, MAP_SHARED | MAP_FIXED, m->fd, 0);
  if (got == MAP_FAILED) { pthread_mutex_unlock(&lock); return OUT_OF_MEMORY; }
  mappings[i] = (struct mapping){ptr, size};
  live_mappings++;
  pthread_mutex_unlock(&lock);
  return SUCCESS;
}
CUresult cuMemUnmap(CUdeviceptr ptr, size_t size) { COUNTED
  ENTRY;
  pthread_mutex_lock(&lock);
  struct mapping *m = mapping_at(ptr, size);
  if (!m) { pthread_mutex_unlock(&lock); return INVALID_VALUE; }
  /* Back to a reserved, inaccessible range. */
  mmap((void *)ptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
  m->size = 0;
  live_mappings--;
  pthread_mutex_unlock(&lock);
  remove_range((void *)ptr);
  return SUCCESS;
}
CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count) { COUNTED
  NEED_CONTEXT
  if (!desc || count != 1 || desc->location.type != 1 || desc->location.id != 0) return INVALID_VALUE;
  if (desc->flags != 0 && desc->flags != 1 && desc->flags != 3) return INVALID_VALUE;
  pthread_mutex_lock(&lock);
  struct mapping *m = mapping_at(ptr, size);
  pthread_mutex_unlock(&lock);
  if (!m) return INVALID_VALUE;
  int prot = desc->flags == 3 ? PROT_READ | PROT_WRITE : desc->flags == 1 ? PROT_READ : PROT_NONE;
  if (mprotect((void *)ptr, size, prot)) return INVALID_VALUE;
  remove_range((void *)ptr);
  if (prot != PROT_NONE) add_range((void *)ptr, size, DEVICE);
  return SUCCESS;
}

/* A copy on stream `s`: pageable host memory makes it synchronous with the stream. */
static CUresult copy_on(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) {
  NEED_CONTEXT STICKY
  struct command c = {.kind = C_COPY, .dst = d, .src = s, .size = n};
  if (st && (kind_of(d) == PAGEABLE || kind_of(s) == PAGEABLE)) {
    pthread_mutex_lock(&lock);
    pageable_syncs++;
    drain(st);
    pthread_mutex_unlock(&lock);
    STICKY
    return run_now(c);
  }
  return submit(st, c);
}
CUresult cuMemcpy(CUdeviceptr d, CUdeviceptr s, size_t n) { COUNTED return copy_on(d, s, n, NULL); }
CUresult cuMemcpyAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) { COUNTED return copy_on(d, s, n, st); }
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) { COUNTED return copy_on(d, (CUdeviceptr)s, n, NULL); }
CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) { COUNTED return copy_on((CUdeviceptr)d, s, n, NULL); }
CUresult cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t n) { COUNTED return copy_on(d, s, n, NULL); }
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *s, size_t n, CUstream st) { COUNTED return copy_on(d, (CUdeviceptr)s, n, st); }
CUresult cuMemcpyDtoHAsync_v2(void *d, CUdeviceptr s, size_t n, CUstream st) { COUNTED return copy_on((CUdeviceptr)d, s, n, st); }
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) { COUNTED return copy_on(d, s, n, st); }
CUresult cuMemcpyPeerAsync(CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n, CUstream st) { COUNTED
  (void)dc; (void)sc; return copy_on(d, s, n, st);
}
static CUresult set_on(CUdeviceptr d, unsigned v, unsigned unit, size_t n, CUstream s) {
  NEED_CONTEXT STICKY if (d % unit) return INVALID_VALUE;
  if (unit == 1) d8++; else if (unit == 2) d16++; else d32++;
  return submit(s, (struct command){.kind = C_SET, .dst = d, .value = v, .unit = unit, .count = n});
}
CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n) { COUNTED return set_on(d, v, 1, n, NULL); }
CUresult cuMemsetD16_v2(CUdeviceptr d, unsigned short v, size_t n) { COUNTED return set_on(d, v, 2, n, NULL); }
CUresult cuMemsetD32_v2(CUdeviceptr d, unsigned v, size_t n) { COUNTED return set_on(d, v, 4, n, NULL); }
CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s) { COUNTED return set_on(d, v, 1, n, s); }
CUresult cuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n, CUstream s) { COUNTED return set_on(d, v, 2, n, s); }
CUresult cuMemsetD32Async(CUdeviceptr d, unsigned v, size_t n, CUstream s) { COUNTED return set_on(d, v, 4, n, s); }

/* ---- modules and functions -------------------------------------------------------------- */
static void jit_log(unsigned n, int *options, void **values, int which, const char *text) {
  for (unsigned i = 0; i < n; i++)
    if (options[i] == which) {
      size_t cap = 0;
      for (unsigned j = 0; j < n; j++)
        if (options[j] == which + 1) cap = (size_t)values[j];
      snprintf((char *)values[i], cap, "%s", text);
    }
}
CUresult cuModuleLoadDataEx(CUmodule *m, const void *image, unsigned n, int *options, void **values) { COUNTED
  NEED_CONTEXT STICKY
  const char *text = image;
  uint32_t magic;
  memcpy(&magic, image, 4);
  if (magic == 0xBA55ED50u) {
    loaded_fatbins++; /* the driver picks the entry and decompresses it */
  } else if (memcmp(text, "\x7f" "ELF", 4) != 0) {
    if (text[strlen(text) - 1] != '\n') return INVALID_VALUE; /* read past the text: no NUL */
    if (strstr(text, "syntax error")) {
      jit_log(n, options, values, 5, "ptxas application ptx input, line 3; fatal : mock syntax error");
      return 218;
    }
    jit_log(n, options, values, 3, "mock JIT: 1 kernel compiled");
  }
  struct module *loaded = malloc(sizeof *loaded);
  loaded->ctx = current;
  *m = loaded;
  if (magic != 0xBA55ED50u && memcmp(text, "\x7f" "ELF", 4) != 0 && strstr(text, "__init_array_object_"))
    ctor_module = *m;
  __atomic_add_fetch(&live_modules, 1, __ATOMIC_RELAXED);
  return SUCCESS;
}
/* The same load without options: the JIT's messages go nowhere. */
CUresult cuModuleLoadData(CUmodule *m, const void *image) { COUNTED
  return cuModuleLoadDataEx(m, image, 0, NULL, NULL);
}
CUresult cuModuleUnload(CUmodule m) { COUNTED
  ON_CONTEXT_OF((struct module *)m)
  if (m == ctor_module) ctor_module = NULL;
  free(m);
  __atomic_sub_fetch(&live_modules, 1, __ATOMIC_RELAXED);
  return SUCCESS;
}
CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) { COUNTED
  ENTRY;
  for (int i = 0; i < NKERNELS; i++)
    if (!strcmp(name, kernel_names[i]) && (i < 4 || i == EMPTY || m == ctor_module)) { *f = kernel_names[i]; return SUCCESS; }
  return NOT_FOUND;
}
static int function_index(CUfunction f) { return (int)(((char(*)[24])f) - kernel_names); }
CUresult cuModuleGetGlobal_v2(CUdeviceptr *p, size_t *size, CUmodule m, const char *name) { COUNTED
  ENTRY; (void)m;
  for (int i = 0; i < 3; i++)
    if (!strcmp(name, ctor_object_names[i])) { *p = (CUdeviceptr)&ctor_objects[i]; *size = 8; return SUCCESS; }
  for (int i = 0; i < 4; i++)
    if (!strcmp(name, bound_names[i])) { *p = (CUdeviceptr)&array_bounds[i]; *size = 8; return SUCCESS; }
  if (strcmp(name, "counter")) return NOT_FOUND;
  *p = (CUdeviceptr)&counter_global; *size = sizeof counter_global; return SUCCESS;
}
/* 0: max threads per block; 1: static shared bytes; 8: max dynamic shared bytes. */
CUresult cuFuncGetAttribute(int *v, int attr, CUfunction f) { COUNTED
  ENTRY;
  int i = function_index(f);
  if (attr == 0) *v = 768;
  else if (attr == 1) *v = static_shared[i];
  else if (attr == 8) { pthread_mutex_lock(&lock); *v = dyn_allowed[i]; pthread_mutex_unlock(&lock); }
  else *v = 0;
  return SUCCESS;
}
CUresult cuFuncSetAttribute(CUfunction f, int attr, int v) { COUNTED
  ENTRY;
  int i = function_index(f);
  if (attr != 8 || v < 0 || v + static_shared[i] > OPTIN_SHARED) return INVALID_VALUE;
  usleep(200); /* a driver call takes time: two callers at once overlap */
  pthread_mutex_lock(&lock);
  dyn_allowed[i] = v;
  pthread_mutex_unlock(&lock);
  return SUCCESS;
}
CUresult cuFuncGetParamInfo(CUfunction f, size_t i, size_t *offset, size_t *size) { COUNTED
  static const size_t layout[3][2] = {{0, 8}, {8, 4}, {16, 8}}; /* (float *x, float a, size_t n) */
  ENTRY; if (i >= (function_index(f) == 0 ? 3 : 0)) return INVALID_VALUE; /* only scale has parameters */
  *offset = layout[i][0]; if (size) *size = layout[i][1]; return SUCCESS;
}
static CUresult launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                       unsigned bz, unsigned shared, CUstream s, void **params, void **extra) {
  ON_CONTEXT_OF(s) STICKY
  int i = function_index(f);
  pthread_mutex_lock(&lock);
  last_grid[0] = gx; last_grid[1] = gy; last_grid[2] = gz;
  last_block[0] = bx; last_block[1] = by; last_block[2] = bz;
  last_shared = shared; last_args_size = 0;
  int allowed = dyn_allowed[i];
  pthread_mutex_unlock(&lock);
  if (shared + static_shared[i] > DEFAULT_SHARED && (int)shared > allowed) return INVALID_VALUE;
  if (params) bad_extra++;
  if (extra) {
    if (extra[0] != (void *)1 || extra[2] != (void *)2 || extra[4] != (void *)0) { bad_extra++; return INVALID_VALUE; }
    last_args_size = *(size_t *)extra[3];
    memcpy(last_args, extra[1], last_args_size < sizeof last_args ? last_args_size : sizeof last_args);
    /* More bytes than the kernel's parameters: "too many arguments" (the H200's driver
     * answers a 24-byte buffer for an 18-byte parameter list so). */
    if (last_args_size > (i == 0 ? 24u : 0u)) return 701; /* CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES */
  }
  pthread_mutex_lock(&lock);
  long now = released;
  pthread_mutex_unlock(&lock);
  struct command c = {.kind = C_KERNEL, .function = i, .target = now,
                      .threads = (unsigned long long)gx * gy * gz * bx * by * bz};
  if (i == 0 && last_args_size == 24) memcpy(c.args, last_args, 24);
  return submit(s, c);
}
/* The benchmarks' mode (scripts/launch-cost.sh), STAND_IN_CUDA_LAUNCH_COST:
 * - "warm": a launch of "empty" on a stream completes at once, without the stream's
 *   thread, so that a timed loop of launches times the caller's side alone;
 * - "cold": the same, and every cuLaunchKernel first runs 48 KiB of code and reads 48 KiB
 *   of data, as the microseconds of a real driver's own work in the call push the
 *   caller's code and data out of the core's first-level caches (32-48 KiB each).
 * Unset (the tests): every launch goes to its stream's thread, as for any kernel. */
enum { COST_UNREAD = -1, COST_NONE, COST_WARM, COST_COLD };
static int launch_cost = COST_UNREAD;
static unsigned char cost_data[48 << 10];
static int pay_launch_cost(void) {
  int mode = __atomic_load_n(&launch_cost, __ATOMIC_RELAXED);
  if (mode == COST_UNREAD) {
    const char *v = getenv("STAND_IN_CUDA_LAUNCH_COST");
    mode = !v ? COST_NONE : !strcmp(v, "cold") ? COST_COLD : !strcmp(v, "warm") ? COST_WARM : COST_NONE;
    __atomic_store_n(&launch_cost, mode, __ATOMIC_RELAXED);
  }
  if (mode == COST_COLD) {
#if defined(__x86_64__)
    __asm__ volatile(".rept 12288\n\t.byte 0x0f, 0x1f, 0x40, 0x00\n\t.endr" ::: "memory"); /* 4-byte NOPs */
#endif
    for (size_t i = 0; i < sizeof cost_data; i += 64) ((volatile unsigned char *)cost_data)[i]++;
  }
  return mode;
}
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned shared, CUstream s, void **params, void **extra) { COUNTED
  last_cooperative = 0;
  launches++;
  if (pay_launch_cost() != COST_NONE && f == (CUfunction)kernel_names[EMPTY] && s && !extra) {
    ON_CONTEXT_OF(s) STICKY
    return SUCCESS;
  }
  return launch(f, gx, gy, gz, bx, by, bz, shared, s, params, extra);
}
CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                   unsigned by, unsigned bz, unsigned shared, CUstream s, void **params) { COUNTED
  last_cooperative = 2;
  return launch(f, gx, gy, gz, bx, by, bz, shared, s, params, NULL);
}
CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params, void **extra) { COUNTED
  last_cooperative = c->numAttrs == 1 && c->attrs[0].id == 2 && c->attrs[0].value.cooperative == 1;
  return launch(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY, c->blockDimZ,
                c->sharedMemBytes, c->hStream, params, extra);
}
CUresult cuOccupancyMaxPotentialBlockSize(int *min_grid, int *block, CUfunction f, size_t (*b2d_fn)(int),
                                          size_t dyn, int limit) { COUNTED
  ENTRY; (void)f; (void)dyn; (void)limit;
  *block = 256; *min_grid = 216; b2d = b2d_fn ? (long long)b2d_fn(256) : -1; return SUCCESS;
}
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, CUfunction f, int block, size_t dyn) { COUNTED
  ENTRY; (void)f; (void)dyn; *n = 2048 / block; return SUCCESS;
}

/* ---- streams and events ------------------------------------------------------------------ */
CUresult cuStreamCreate(CUstream *out, unsigned flags) { COUNTED
  NEED_CONTEXT STICKY (void)flags;
  struct stream *s = calloc(1, sizeof *s);
  s->ctx = current;
  s->tail = &s->head;
  pthread_t t;
  pthread_mutex_lock(&lock);
  streams[nstreams++] = s;
  pthread_mutex_unlock(&lock);
  pthread_create(&t, NULL, run_stream, s);
  pthread_detach(t);
  *out = s;
  return SUCCESS;
}
/* Returns at once; the stream's work still runs and its resources go after it. */
CUresult cuStreamDestroy_v2(CUstream s) { COUNTED
  ENTRY;
  pthread_mutex_lock(&lock);
  s->destroyed = 1;
  pthread_cond_broadcast(&changed);
  pthread_mutex_unlock(&lock);
  return SUCCESS;
}
CUresult cuStreamSynchronize(CUstream s) { COUNTED
  ON_CONTEXT_OF(s)
  if (s) { pthread_mutex_lock(&lock); drain(s); pthread_mutex_unlock(&lock); }
  STICKY return SUCCESS;
}
CUresult cuStreamQuery(CUstream s) { COUNTED
  ON_CONTEXT_OF(s) STICKY
  pthread_mutex_lock(&lock);
  long pending = s ? s->pending : 0;
  pthread_mutex_unlock(&lock);
  return pending ? NOT_READY : SUCCESS;
}
CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned f) { COUNTED
  ON_CONTEXT_OF(s) STICKY (void)f;
  pthread_mutex_lock(&lock);
  long target = e->recorded;
  pthread_mutex_unlock(&lock);
  return submit(s, (struct command){.kind = C_WAIT_EVENT, .event = e, .target = target});
}
CUresult cuStreamWaitValue32_v2(CUstream s, CUdeviceptr addr, unsigned value, unsigned flags) { COUNTED
  NEED_CONTEXT STICKY
  if (flags != 0) return INVALID_VALUE; /* only CU_STREAM_WAIT_VALUE_GEQ here */
  if (kind_of(addr) == PAGEABLE) return INVALID_VALUE;
  return submit(s, (struct command){.kind = C_WAIT_VALUE, .dst = addr, .value = value});
}
CUresult cuLaunchHostFunc(CUstream s, void (*fn)(void *), void *data) { COUNTED
  ON_CONTEXT_OF(s) STICKY
  if (!s) { pthread_mutex_lock(&lock); call_back(fn, data); pthread_mutex_unlock(&lock); return SUCCESS; }
  return enqueue(s, (struct command){.kind = C_HOST, .fn = fn, .data = data});
}
CUresult cuEventCreate(CUevent *e, unsigned flags) { COUNTED
  NEED_CONTEXT STICKY
  *e = calloc(1, sizeof **e);
  (*e)->ctx = current;
  (*e)->flags = flags;
  (*e)->live = 1;
  events_created++;
  events_live++;
  if (!(flags & DISABLE_TIMING)) events_timed++;
  return SUCCESS;
}
CUresult cuEventRecord(CUevent e, CUstream s) { COUNTED
  ON_CONTEXT_OF(s) STICKY
  if (e->ctx != (s ? s->ctx : current)) return INVALID_HANDLE; /* another context's event */
  pthread_mutex_lock(&lock);
  long target = ++e->recorded;
  pthread_mutex_unlock(&lock);
  return submit(s, (struct command){.kind = C_RECORD, .event = e, .target = target});
}
CUresult cuEventSynchronize(CUevent e) { COUNTED
  ON_CONTEXT_OF(e)
  pthread_mutex_lock(&lock);
  while (e->completed < e->recorded && !sticky) pthread_cond_wait(&changed, &lock);
  pthread_mutex_unlock(&lock);
  STICKY return SUCCESS;
}
CUresult cuEventQuery(CUevent e) { COUNTED
  ON_CONTEXT_OF(e) STICKY
  pthread_mutex_lock(&lock);
  int pending = e->completed < e->recorded;
  pthread_mutex_unlock(&lock);
  return pending ? NOT_READY : SUCCESS;
}
CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b) { COUNTED
  NEED_CONTEXT STICKY
  if ((a->flags | b->flags) & DISABLE_TIMING) return INVALID_HANDLE;
  if (!a->recorded || !b->recorded) return INVALID_HANDLE;
  pthread_mutex_lock(&lock);
  int pending = a->completed < a->recorded || b->completed < b->recorded;
  pthread_mutex_unlock(&lock);
  if (pending) return NOT_READY;
  *ms = (float)(b->at - a->at);
  return SUCCESS;
}
CUresult cuEventDestroy_v2(CUevent e) { COUNTED
  ENTRY;
  if (!e->live) return INVALID_HANDLE;
  e->live = 0; /* kept: a stream may still wait on it, as the driver allows */
  events_live--;
  return SUCCESS;
}
