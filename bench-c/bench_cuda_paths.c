/* What each way of doing the four operations where our CUDA backend trailed the driver
 * costs on the real driver, with the driver API alone: the choices behind
 * src/plugins/cuda (context switching around calls, the stream's flags, the JIT's logs,
 * how pageable memory is staged), measured one against another in one run.
 * Output: RESULT <case> <median> <unit>, one line per case. Without the library or a GPU
 * it says so and exits 0.
 * Usage: bench_cuda_paths <empty.ptx> */
#include "bench_cuda_driver.h"
#include "bench_timing.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#define must cu_must

static CUcontext ctx;

/* The driver's calls around one of ours before issue 34: the caller's context read, ours
 * made current, the caller's (none) made current again. */
static void switch_in(void) {
  CUcontext previous;
  must(cu.ctx_get_current(&previous), "cuCtxGetCurrent");
  must(cu.ctx_set_current(ctx), "cuCtxSetCurrent");
}
static void switch_out(void) { must(cu.ctx_set_current(NULL), "cuCtxSetCurrent"); }
/* After: read only; ours stays current once set. */
static void read_current(void) {
  CUcontext previous;
  must(cu.ctx_get_current(&previous), "cuCtxGetCurrent");
  if (previous != ctx)
    must(cu.ctx_set_current(ctx), "cuCtxSetCurrent");
}

static void nothing(void *data) { (void)data; }

/* Calls on a stream and an event of the primary context while the thread's current
 * context is `when` (none, or another context of the same device): what the driver
 * answers, 0 (CUDA_SUCCESS) where it uses the handle's context, 201
 * (CUDA_ERROR_INVALID_CONTEXT) where it wants that one current. Our backend makes these
 * calls without reading the thread's context and makes its own current only where the
 * driver refuses them (src/plugins/cuda/context.rs, `on_handles`); the documentation says
 * which only for a CUkernel launch. Output: PROBE <when> <call> <CUresult>. */
static void probe_handle_context(const char *when, CUfunction empty, CUstream s, CUevent e) {
  printf("PROBE %s cuLaunchKernel %d\n", when,
         cu.launch_kernel(empty, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL));
  printf("PROBE %s cuLaunchHostFunc %d\n", when, cu.launch_host_func(s, nothing, NULL));
  printf("PROBE %s cuEventRecord %d\n", when, cu.event_record(e, s));
  printf("PROBE %s cuEventSynchronize %d\n", when, cu.event_synchronize(e));
  printf("PROBE %s cuStreamSynchronize %d\n", when, cu.stream_synchronize(s));
}

/* ---- copies between pageable memory and pinned buffers on several threads ---------- */

/* A team of threads that copy one range together; each size of team has its own
 * barriers (an older team's members stay parked on theirs). */
struct team {
  pthread_barrier_t start, end;
  int threads;
  char *dst;
  const char *src;
  size_t len;
};
static struct team *team;

struct member {
  struct team *team;
  int k;
};

static void copy_share(struct team *t, int k) {
  size_t share = (t->len / (size_t)t->threads + 63) & ~(size_t)63;
  size_t at = share * (size_t)k;
  if (at < t->len)
    memcpy(t->dst + at, t->src + at, t->len - at < share ? t->len - at : share);
}

static void *team_member(void *arg) {
  struct member m = *(struct member *)arg;
  free(arg);
  for (;;) {
    pthread_barrier_wait(&m.team->start);
    copy_share(m.team, m.k);
    pthread_barrier_wait(&m.team->end);
  }
  return NULL;
}

static void team_start(int threads) {
  team = calloc(1, sizeof *team);
  team->threads = threads;
  pthread_barrier_init(&team->start, NULL, (unsigned)threads);
  pthread_barrier_init(&team->end, NULL, (unsigned)threads);
  for (int k = 1; k < threads; ++k) {
    struct member *m = malloc(sizeof *m);
    *m = (struct member){team, k};
    pthread_t t;
    pthread_create(&t, NULL, team_member, m);
    pthread_detach(t);
  }
}

/* Copies on the current team (the caller is member 0); one thread: a plain memcpy. */
static void team_copy(char *dst, const char *src, size_t len) {
  if (team->threads <= 1) {
    memcpy(dst, src, len);
    return;
  }
  team->dst = dst, team->src = src, team->len = len;
  pthread_barrier_wait(&team->start);
  copy_share(team, 0);
  pthread_barrier_wait(&team->end);
}

/* Device to pageable host through two pinned buffers of `chunk` bytes: chunk i + 1's DMA
 * runs while the team copies chunk i out. */
static void staged_d2h(CUstream s, char *host, CUdeviceptr d, size_t size, size_t chunk,
                       char *buf[2], CUevent ev[2]) {
  size_t n = (size + chunk - 1) / chunk;
#define LEN(i) (size - (i) * chunk < chunk ? size - (i) * chunk : chunk)
#define ISSUE(i)                                                                           \
  do {                                                                                     \
    must(cu.memcpy_dtoh_async(buf[(i) % 2], d + (i) * chunk, LEN(i), s), "cuMemcpyDtoH"); \
    must(cu.event_record(ev[(i) % 2], s), "cuEventRecord");                               \
  } while (0)
  ISSUE(0);
  if (n > 1)
    ISSUE(1);
  for (size_t i = 0; i < n; ++i) {
    must(cu.event_synchronize(ev[i % 2]), "cuEventSynchronize");
    team_copy(host + i * chunk, buf[i % 2], LEN(i));
    if (i + 2 < n)
      ISSUE(i + 2);
  }
}

/* Pageable host to device: the team fills one buffer while the other's DMA runs. */
static void staged_h2d(CUstream s, CUdeviceptr d, const char *host, size_t size, size_t chunk,
                       char *buf[2], CUevent ev[2]) {
  size_t n = (size + chunk - 1) / chunk;
  for (size_t i = 0; i < n; ++i) {
    if (i >= 2)
      must(cu.event_synchronize(ev[i % 2]), "cuEventSynchronize");
    team_copy(buf[i % 2], host + i * chunk, LEN(i));
    must(cu.memcpy_htod_async(d + i * chunk, buf[i % 2], LEN(i), s), "cuMemcpyHtoD");
    must(cu.event_record(ev[i % 2], s), "cuEventRecord");
  }
  must(cu.stream_synchronize(s), "cuStreamSynchronize");
#undef ISSUE
#undef LEN
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s empty.ptx\n", argv[0]);
    return 2;
  }
  cu_open(&ctx);
  const char *ptx = cu_read_ptx(argv[1]);
  CUmodule module;
  CUfunction empty;
  CUstream blocking, nonblocking;
  must(cu.module_load_data(&module, ptx), "cuModuleLoadData");
  must(cu.module_get_function(&empty, module, "empty"), "cuModuleGetFunction");
  /* Host function + sync took 8.7 us in bench_cuda_raw and 15-19 us here, the same calls
   * (issue 34): first on a non-blocking stream that is the context's only one, before
   * anything else; then with a second, blocking stream beside it. */
  must(cu.stream_create(&nonblocking, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  BENCH_MEDIAN("host_function_only_stream_nonblocking_us", "us", 1e3, 100, {
    must(cu.launch_host_func(nonblocking, nothing, NULL), "cuLaunchHostFunc");
    must(cu.stream_synchronize(nonblocking), "cuStreamSynchronize");
  });
  must(cu.stream_create(&blocking, 0), "cuStreamCreate");
  BENCH_MEDIAN("host_function_second_stream_blocking_us", "us", 1e3, 100, {
    must(cu.launch_host_func(blocking, nothing, NULL), "cuLaunchHostFunc");
    must(cu.stream_synchronize(blocking), "cuStreamSynchronize");
  });
#define LAUNCH(s) must(cu.launch_kernel(empty, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL), "cuLaunchKernel")

  /* Queued launches. */
  BENCH_MEDIAN("queued_launch_plain_us", "us", 1e3 * 10000, 1, {
    for (int k = 0; k < 10000; ++k)
      LAUNCH(nonblocking);
    must(cu.stream_synchronize(nonblocking), "cuStreamSynchronize");
  });
  must(cu.ctx_set_current(NULL), "cuCtxSetCurrent");
  BENCH_MEDIAN("queued_launch_switch_pair_us", "us", 1e3 * 10000, 1, {
    for (int k = 0; k < 10000; ++k) {
      switch_in();
      LAUNCH(nonblocking);
      switch_out();
    }
    switch_in();
    must(cu.stream_synchronize(nonblocking), "cuStreamSynchronize");
    switch_out();
  });
  BENCH_MEDIAN("queued_launch_read_current_us", "us", 1e3 * 10000, 1, {
    for (int k = 0; k < 10000; ++k) {
      read_current();
      LAUNCH(nonblocking);
    }
    must(cu.stream_synchronize(nonblocking), "cuStreamSynchronize");
  });

  /* The calls on a stream with no context current, then with another one. */
  {
    CUevent e;
    must(cu.event_create(&e, 2 /* CU_EVENT_DISABLE_TIMING */), "cuEventCreate");
    must(cu.ctx_set_current(NULL), "cuCtxSetCurrent");
    probe_handle_context("no_context", empty, nonblocking, e);
    if (cu.launch_kernel(empty, 1, 1, 1, 1, 1, 1, 0, nonblocking, NULL, NULL) == 0)
      BENCH_MEDIAN("queued_launch_no_context_us", "us", 1e3 * 10000, 1, {
        for (int k = 0; k < 10000; ++k)
          LAUNCH(nonblocking);
        cu.stream_synchronize(nonblocking);
      });
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    CUresult (*ctx_create)(CUcontext *, unsigned, CUdevice) = NULL;
    CUresult (*ctx_destroy)(CUcontext) = NULL;
    if (lib != NULL) {
      *(void **)(&ctx_create) = dlsym(lib, "cuCtxCreate_v2");
      *(void **)(&ctx_destroy) = dlsym(lib, "cuCtxDestroy_v2");
    }
    CUcontext other;
    if (ctx_create != NULL && ctx_destroy != NULL && ctx_create(&other, 0, 0) == 0) {
      probe_handle_context("another_context", empty, nonblocking, e);
      must(ctx_destroy(other), "cuCtxDestroy");
    }
    must(cu.ctx_set_current(ctx), "cuCtxSetCurrent");
    must(cu.stream_synchronize(nonblocking), "cuStreamSynchronize");
    must(cu.event_destroy(e), "cuEventDestroy");
  }

  /* Host functions. */
  BENCH_MEDIAN("host_function_blocking_stream_us", "us", 1e3, 100, {
    must(cu.launch_host_func(blocking, nothing, NULL), "cuLaunchHostFunc");
    must(cu.stream_synchronize(blocking), "cuStreamSynchronize");
  });
  BENCH_MEDIAN("host_function_nonblocking_stream_us", "us", 1e3, 100, {
    must(cu.launch_host_func(nonblocking, nothing, NULL), "cuLaunchHostFunc");
    must(cu.stream_synchronize(nonblocking), "cuStreamSynchronize");
  });
  must(cu.ctx_set_current(NULL), "cuCtxSetCurrent");
  BENCH_MEDIAN("host_function_switch_pairs_us", "us", 1e3, 100, {
    switch_in();
    must(cu.launch_host_func(nonblocking, nothing, NULL), "cuLaunchHostFunc");
    switch_out();
    switch_in();
    must(cu.stream_synchronize(nonblocking), "cuStreamSynchronize");
    switch_out();
  });
  must(cu.ctx_set_current(ctx), "cuCtxSetCurrent");
  BENCH_MEDIAN("host_function_event_sync_us", "us", 1e3, 100, {
    CUevent e;
    must(cu.event_create(&e, 2 /* CU_EVENT_DISABLE_TIMING */), "cuEventCreate");
    must(cu.launch_host_func(nonblocking, nothing, NULL), "cuLaunchHostFunc");
    must(cu.event_record(e, nonblocking), "cuEventRecord");
    must(cu.event_synchronize(e), "cuEventSynchronize");
    must(cu.event_destroy(e), "cuEventDestroy");
  });

  /* Program load. */
  BENCH_MEDIAN("program_load_plain_us", "us", 1e3, 20, {
    CUmodule m;
    must(cu.module_load_data(&m, ptx), "cuModuleLoadData");
    must(cu.module_unload(m), "cuModuleUnload");
  });
  /* Our loader's options: the JIT's info and error logs, 16 KiB each. */
  static char info_log[16 << 10], error_log[16 << 10];
  int options[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                   CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {info_log, (void *)(uintptr_t)(sizeof info_log - 1), error_log,
                    (void *)(uintptr_t)(sizeof error_log - 1)};
  BENCH_MEDIAN("program_load_jit_logs_us", "us", 1e3, 20, {
    CUmodule m;
    must(cu.module_load_data_ex(&m, ptx, 4, options, values), "cuModuleLoadDataEx");
    must(cu.module_unload(m), "cuModuleUnload");
  });
  BENCH_MEDIAN("program_load_missed_lookups_us", "us", 1e3, 20, {
    CUmodule m;
    CUfunction f;
    CUdeviceptr g;
    size_t gs;
    must(cu.module_load_data(&m, ptx), "cuModuleLoadData");
    cu.module_get_function(&f, m, "nvptx$device$init");
    cu.module_get_global(&g, &gs, m, "nvptx$device$init");
    cu.module_get_function(&f, m, "nvptx$device$fini");
    cu.module_get_global(&g, &gs, m, "nvptx$device$fini");
    must(cu.module_unload(m), "cuModuleUnload");
  });
  must(cu.ctx_set_current(NULL), "cuCtxSetCurrent");
  BENCH_MEDIAN("program_load_switch_pairs_us", "us", 1e3, 20, {
    CUmodule m;
    switch_in();
    must(cu.module_load_data(&m, ptx), "cuModuleLoadData");
    switch_out();
    switch_in();
    must(cu.module_unload(m), "cuModuleUnload");
    switch_out();
  });
  must(cu.ctx_set_current(ctx), "cuCtxSetCurrent");

  /* Pageable copies of 64 MiB. */
  const size_t big = 64u << 20;
  CUdeviceptr d;
  must(cu.mem_alloc(&d, big), "cuMemAlloc");
  char *pageable = malloc(big);
  if (pageable == NULL)
    return 1;
  memset(pageable, 1, big);
  CUstream s = nonblocking;
#define BANDWIDTH(name, body)                                                              \
  do {                                                                                     \
    double samples_[BENCH_SAMPLES];                                                        \
    for (int k_ = 0; k_ < BENCH_SAMPLES; ++k_) {                                           \
      double t0_ = now_ns();                                                               \
      body;                                                                                \
      samples_[k_] = (double)big / (now_ns() - t0_);                                       \
    }                                                                                      \
    printf("RESULT %s %.2f GB/s\n", (name), median(samples_, BENCH_SAMPLES));             \
  } while (0)
  BANDWIDTH("pageable_h2d_driver_GBps", {
    must(cu.memcpy_htod_async(d, pageable, big, s), "cuMemcpyHtoDAsync");
    must(cu.stream_synchronize(s), "cuStreamSynchronize");
  });
  BANDWIDTH("pageable_d2h_driver_GBps", {
    must(cu.memcpy_dtoh_async(pageable, d, big, s), "cuMemcpyDtoHAsync");
    must(cu.stream_synchronize(s), "cuStreamSynchronize");
  });
  BANDWIDTH("pageable_h2d_register_each_GBps", {
    must(cu.mem_host_register(pageable, big, 0), "cuMemHostRegister");
    must(cu.memcpy_htod_async(d, pageable, big, s), "cuMemcpyHtoDAsync");
    must(cu.stream_synchronize(s), "cuStreamSynchronize");
    must(cu.mem_host_unregister(pageable), "cuMemHostUnregister");
  });
  BANDWIDTH("pageable_d2h_register_each_GBps", {
    must(cu.mem_host_register(pageable, big, 0), "cuMemHostRegister");
    must(cu.memcpy_dtoh_async(pageable, d, big, s), "cuMemcpyDtoHAsync");
    must(cu.stream_synchronize(s), "cuStreamSynchronize");
    must(cu.mem_host_unregister(pageable), "cuMemHostUnregister");
  });

  static const size_t chunks[] = {4u << 20, 16u << 20};
  static const int thread_counts[] = {1, 2, 4, 8};
  char *buf[2];
  CUevent ev[2];
  must(cu.mem_alloc_host((void **)&buf[0], 16u << 20), "cuMemAllocHost");
  must(cu.mem_alloc_host((void **)&buf[1], 16u << 20), "cuMemAllocHost");
  memset(buf[0], 2, 16u << 20);
  memset(buf[1], 2, 16u << 20);
  must(cu.event_create(&ev[0], 2), "cuEventCreate");
  must(cu.event_create(&ev[1], 2), "cuEventCreate");
  for (size_t t = 0; t < sizeof thread_counts / sizeof *thread_counts; ++t) {
    int threads = thread_counts[t];
    team_start(threads);
    char name[64];
    snprintf(name, sizeof name, "cpu_copy_pinned_to_pageable_%dthreads_GBps", threads);
    BANDWIDTH(name, {
      for (size_t at = 0; at < big; at += 16u << 20)
        team_copy(pageable + at, buf[(at >> 24) & 1], 16u << 20);
    });
    for (size_t c = 0; c < sizeof chunks / sizeof *chunks; ++c) {
      snprintf(name, sizeof name, "pageable_h2d_staged_%zuMiB_%dthreads_GBps", chunks[c] >> 20,
               threads);
      BANDWIDTH(name, staged_h2d(s, d, pageable, big, chunks[c], buf, ev));
      snprintf(name, sizeof name, "pageable_d2h_staged_%zuMiB_%dthreads_GBps", chunks[c] >> 20,
               threads);
      BANDWIDTH(name, staged_d2h(s, pageable, d, big, chunks[c], buf, ev));
    }
  }
  return 0;
}
