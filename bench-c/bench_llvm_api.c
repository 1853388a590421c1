/* One benchmark binary for LLVM 22's libLLVMOffload.so.22.1 and ours: it is written
 * against LLVM's header (offload/OffloadAPI.h), linked against libLLVMOffload.so.22.1,
 * and the library is picked at run time with LD_LIBRARY_PATH. Everything runs on the
 * host device, the one device both libraries have on a machine without GPUs.
 *
 * Each case runs in a child process, so a library that crashes on a call (LLVM 22's host
 * device cannot allocate, queue or load programs) costs that case only. Output, one line
 * per case:  RESULT <case> <median> <unit>  |  CRASH <case> <signal>  |
 *            REFUSED <case> <errc> <details>
 * Usage: bench_llvm_api [host-program.so]   (the program is used by the isValid case) */
#include <offload/OffloadAPI.h>

#include "bench_cases.h"
#include "bench_timing.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *program_path;

static void device_info_u32(ol_device_handle_t d) {
  uint32_t v;
  BENCH_MEDIAN("olGetDeviceInfo_NUM_COMPUTE_UNITS", "ns", 1.0, 100000,
          must(olGetDeviceInfo(d, OL_DEVICE_INFO_NUM_COMPUTE_UNITS, sizeof v, &v), "info"));
}

static void device_info_name(ol_device_handle_t d) {
  char name[256];
  BENCH_MEDIAN("olGetDeviceInfo_NAME", "ns", 1.0, 100000,
          must(olGetDeviceInfo(d, OL_DEVICE_INFO_NAME, sizeof name, name), "info"));
}

static void device_info_size(ol_device_handle_t d) {
  size_t size;
  BENCH_MEDIAN("olGetDeviceInfoSize_NAME", "ns", 1.0, 100000,
          must(olGetDeviceInfoSize(d, OL_DEVICE_INFO_NAME, &size), "size"));
}

static void platform_info(ol_device_handle_t d) {
  ol_platform_handle_t p;
  ol_platform_backend_t backend;
  must(olGetDeviceInfo(d, OL_DEVICE_INFO_PLATFORM, sizeof p, &p), "platform");
  BENCH_MEDIAN("olGetPlatformInfo_BACKEND", "ns", 1.0, 100000,
          must(olGetPlatformInfo(p, OL_PLATFORM_INFO_BACKEND, sizeof backend, &backend),
               "info"));
}

static bool count(ol_device_handle_t d, void *n) {
  (void)d;
  ++*(int *)n;
  return true;
}

static void iterate(ol_device_handle_t d) {
  (void)d;
  int n = 0;
  BENCH_MEDIAN("olIterateDevices", "ns", 1.0, 100000, must(olIterateDevices(count, &n), "iterate"));
}

/* Copies between two host buffers, both named by the host device. */
static void copy(ol_device_handle_t d, size_t size, const char *name, double scale,
                 const char *unit, long batch) {
  char *a = malloc(size), *b = malloc(size);
  if (a == NULL || b == NULL)
    abort();
  memset(a, 1, size);
  memset(b, 2, size);
  BENCH_MEDIAN(name, unit, scale, batch, must(olMemcpy(NULL, b, d, a, d, size), "olMemcpy"));
  free(a);
  free(b);
}

static void copy_64mib(ol_device_handle_t d) {
  copy(d, 64u << 20, "olMemcpy_64MiB_host_to_host", 1e6, "ms", 1);
}

static void copy_4kib(ol_device_handle_t d) {
  copy(d, 4096, "olMemcpy_4KiB_host_to_host", 1.0, "ns", 10000);
}

/* 64 KiB between two buffers whose page offsets differ by 16 bytes, the destination
 * ahead: where glibc's memcpy (`rep movsb`) is slowest on some CPUs (docs/PERFORMANCE.md).
 * Two 4 KiB malloc blocks side by side, as in the 4 KiB case, are such a pair too. */
static void copy_64kib_16b_apart(ol_device_handle_t d) {
  size_t size = 64u << 10;
  char *a = aligned_alloc(4096, 2 * size + 8192);
  if (a == NULL)
    abort();
  char *b = a + size + 4096 + 16;
  memset(a, 1, size);
  memset(b, 2, size);
  BENCH_MEDIAN("olMemcpy_64KiB_host_to_host_16B_apart", "us", 1e3, 1000,
               must(olMemcpy(NULL, b, d, a, d, size), "olMemcpy"));
  free(a);
}

static void alloc_free(ol_device_handle_t d) {
  void *p;
  BENCH_MEDIAN("olMemAlloc+olMemFree_4KiB_DEVICE", "ns", 1.0, 10000, {
    must(olMemAlloc(d, OL_ALLOC_TYPE_DEVICE, 4096, &p), "olMemAlloc");
    must(olMemFree(p), "olMemFree");
  });
}

static void fill_64mib(ol_device_handle_t d) {
  void *p;
  const uint32_t pattern = 0x01020304u;
  must(olMemAlloc(d, OL_ALLOC_TYPE_DEVICE, 64u << 20, &p), "olMemAlloc");
  BENCH_MEDIAN("olMemFill_64MiB_4B_pattern", "ms", 1e6, 1,
          must(olMemFill(NULL, p, sizeof pattern, &pattern, 64u << 20), "olMemFill"));
  must(olMemFree(p), "olMemFree");
}

static void queue_create_destroy(ol_device_handle_t d) {
  ol_queue_handle_t q;
  BENCH_MEDIAN("olCreateQueue+olDestroyQueue", "ns", 1.0, 10000, {
    must(olCreateQueue(d, &q), "olCreateQueue");
    must(olDestroyQueue(q), "olDestroyQueue");
  });
}

/* An event on an idle queue is complete at once. Beside the median, how many of 100,000
 * create+sync pairs took over 10 us (a machine's own noise makes a few). */
static void event_idle_queue(ol_device_handle_t d) {
  ol_queue_handle_t q;
  ol_event_handle_t e;
  must(olCreateQueue(d, &q), "olCreateQueue");
  BENCH_MEDIAN("olCreateEvent+olSyncEvent_idle_queue", "ns", 1.0, 2000, {
    must(olCreateEvent(q, &e), "olCreateEvent");
    must(olSyncEvent(e), "olSyncEvent");
    must(olDestroyEvent(e), "olDestroyEvent");
  });
  int slow = 0;
  for (int i = 0; i < 100000; ++i) {
    double t0 = now_ns();
    must(olCreateEvent(q, &e), "olCreateEvent");
    must(olSyncEvent(e), "olSyncEvent");
    slow += now_ns() - t0 > 10e3;
    must(olDestroyEvent(e), "olDestroyEvent");
  }
  printf("RESULT olCreateEvent+olSyncEvent_idle_queue_over_10us %d per_100000\n", slow);
  must(olDestroyQueue(q), "olDestroyQueue");
}

static void queue_round_trip(ol_device_handle_t d) {
  ol_queue_handle_t q;
  char a[64] = {0}, b[64];
  must(olCreateQueue(d, &q), "olCreateQueue");
  BENCH_MEDIAN("olMemcpy_64B_on_queue+olSyncQueue", "ns", 1.0, 2000, {
    must(olMemcpy(q, b, d, a, d, sizeof a), "olMemcpy");
    must(olSyncQueue(q), "olSyncQueue");
  });
  must(olDestroyQueue(q), "olDestroyQueue");
}

static void is_valid_binary(ol_device_handle_t d) {
  if (program_path == NULL) {
    printf("REFUSED olIsValidBinary_host_program 0 no program given\n");
    return;
  }
  FILE *f = fopen(program_path, "rb");
  if (f == NULL)
    abort();
  static unsigned char image[1 << 20];
  size_t size = fread(image, 1, sizeof image, f);
  fclose(f);
  bool valid = false;
  must(olIsValidBinary(d, image, size, &valid), "olIsValidBinary");
  if (!valid) {
    printf("REFUSED olIsValidBinary_host_program 0 answers false for a host shared object\n");
    return;
  }
  BENCH_MEDIAN("olIsValidBinary_host_program", "ns", 1.0, 1000,
          must(olIsValidBinary(d, image, size, &valid), "olIsValidBinary"));
}

static void init_shutdown(ol_device_handle_t d) {
  (void)d;
  must(olShutDown(), "olShutDown"); /* the case runs its own cycles */
  BENCH_MEDIAN("olInit+olShutDown", "us", 1e3, 20, {
    must(olInit(), "olInit");
    must(olShutDown(), "olShutDown");
  });
  must(olInit(), "olInit");
}

static const struct bench_case cases[] = {
    {"olGetDeviceInfo_NUM_COMPUTE_UNITS", device_info_u32},
    {"olGetDeviceInfo_NAME", device_info_name},
    {"olGetDeviceInfoSize_NAME", device_info_size},
    {"olGetPlatformInfo_BACKEND", platform_info},
    {"olIterateDevices", iterate},
    {"olMemcpy_4KiB_host_to_host", copy_4kib},
    {"olMemcpy_64MiB_host_to_host", copy_64mib},
    {"olMemcpy_64KiB_host_to_host_16B_apart", copy_64kib_16b_apart},
    {"olIsValidBinary_host_program", is_valid_binary},
    {"olInit+olShutDown", init_shutdown},
    {"olMemAlloc+olMemFree_4KiB_DEVICE", alloc_free},
    {"olMemFill_64MiB_4B_pattern", fill_64mib},
    {"olCreateQueue+olDestroyQueue", queue_create_destroy},
    {"olMemcpy_64B_on_queue+olSyncQueue", queue_round_trip},
    {"olCreateEvent+olSyncEvent_idle_queue", event_idle_queue},
};

int main(int argc, char **argv) {
  program_path = argc > 1 ? argv[1] : NULL;
  return run_cases_in_children(cases, sizeof cases / sizeof cases[0]);
}
