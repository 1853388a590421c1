/* The GPU benchmark through the liboffload API, on the first GPU device. Written against
 * LLVM's header name and linked against libLLVMOffload.so.22.1, so the same binary runs
 * on LLVM 22's library and on ours (LD_LIBRARY_PATH picks); bench_cuda_raw.c measures
 * the same things with the CUDA driver API alone. Without a GPU it says so and exits 0.
 * Output: RESULT <case> <median> <unit>, one line per case.
 * Usage: bench_gpu_api <empty.ptx> */
#include <offload/OffloadAPI.h>

#include "bench_timing.h"

#include <stdio.h>
#include <string.h>

/* A failed call ends the run with a REFUSED line naming it (LLVM 22's library, for one,
 * cannot destroy a PTX program). */
static void must(ol_result_t r, const char *what) {
  if (r == OL_SUCCESS)
    return;
  printf("REFUSED %s %u %s\n", what, (unsigned)r->Code, r->Details ? r->Details : "");
  exit(1);
}

/* Keeps the last device olIterateDevices lists: the host device, which names host memory. */
static bool last_device(ol_device_handle_t d, void *out) {
  *(ol_device_handle_t *)out = d;
  return true;
}

static bool first_gpu(ol_device_handle_t d, void *out) {
  ol_device_type_t type;
  if (olGetDeviceInfo(d, OL_DEVICE_INFO_TYPE, sizeof type, &type) == OL_SUCCESS &&
      type == OL_DEVICE_TYPE_GPU) {
    *(ol_device_handle_t *)out = d;
    return false;
  }
  return true;
}

static unsigned char *read_all(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    fprintf(stderr, "cannot open %s\n", path);
    exit(1);
  }
  static unsigned char bytes[1 << 20];
  *size = fread(bytes, 1, sizeof bytes - 1, f);
  bytes[*size] = 0; /* PTX is text: loaders want it NUL-terminated */
  fclose(f);
  return bytes;
}

/* GB/s of copying `size` bytes `dst` <- `src` on `q`. */
static void bandwidth(const char *name, ol_queue_handle_t q, void *dst, ol_device_handle_t dd,
                      const void *src, ol_device_handle_t sd, size_t size) {
  double samples[BENCH_SAMPLES];
  for (int s = 0; s < BENCH_SAMPLES; ++s) {
    double t0 = now_ns();
    must(olMemcpy(q, dst, dd, src, sd, size), "olMemcpy");
    must(olSyncQueue(q), "olSyncQueue");
    samples[s] = (double)size / (now_ns() - t0); /* bytes per ns = GB/s */
  }
  printf("RESULT %s %.2f GB/s\n", name, median(samples, BENCH_SAMPLES));
}

static void nothing(void *data) { (void)data; }

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s empty.ptx\n", argv[0]);
    return 2;
  }
  must(olInit(), "olInit");
  ol_device_handle_t gpu = NULL, host = NULL;
  must(olIterateDevices(first_gpu, &gpu), "olIterateDevices");
  if (gpu == NULL) {
    printf("skipped: no GPU device\n");
    return 0;
  }
  must(olIterateDevices(last_device, &host), "olIterateDevices");
  size_t ptx_size = 0;
  unsigned char *ptx = read_all(argv[1], &ptx_size);
  ol_program_handle_t program;
  ol_symbol_handle_t empty;
  ol_queue_handle_t q;
  must(olCreateProgram(gpu, ptx, ptx_size + 1, &program), "olCreateProgram");
  must(olGetSymbol(program, "empty", OL_SYMBOL_KIND_KERNEL, &empty), "olGetSymbol");
  must(olCreateQueue(gpu, &q), "olCreateQueue");
  ol_kernel_launch_size_args_t one = {1, {1, 1, 1}, {1, 1, 1}, 0};

  BENCH_MEDIAN("launch_sync_us", "us", 1e3, 100, {
    must(olLaunchKernel(q, gpu, empty, NULL, 0, &one), "olLaunchKernel");
    must(olSyncQueue(q), "olSyncQueue");
  });
  BENCH_MEDIAN("queued_launch_us", "us", 1e3 * 10000, 1, {
    for (int k = 0; k < 10000; ++k)
      must(olLaunchKernel(q, gpu, empty, NULL, 0, &one), "olLaunchKernel");
    must(olSyncQueue(q), "olSyncQueue");
  });
  BENCH_MEDIAN("launch_event_sync_us", "us", 1e3, 100, {
    ol_event_handle_t e;
    must(olLaunchKernel(q, gpu, empty, NULL, 0, &one), "olLaunchKernel");
    must(olCreateEvent(q, &e), "olCreateEvent");
    must(olSyncEvent(e), "olSyncEvent");
    must(olDestroyEvent(e), "olDestroyEvent");
  });
  BENCH_MEDIAN("host_function_sync_us", "us", 1e3, 100, {
    must(olLaunchHostFunction(q, nothing, NULL), "olLaunchHostFunction");
    must(olSyncQueue(q), "olSyncQueue");
  });
  static const size_t sizes[] = {64, 4096, 1 << 20};
  static const char *const names[] = {"alloc_free_64B_us", "alloc_free_4KiB_us",
                                      "alloc_free_1MiB_us"};
  for (int i = 0; i < 3; ++i) {
    void *p;
    BENCH_MEDIAN(names[i], "us", 1e3, 1000, {
      must(olMemAlloc(gpu, OL_ALLOC_TYPE_DEVICE, sizes[i], &p), "olMemAlloc");
      must(olMemFree(p), "olMemFree");
    });
  }

  const size_t big = 64u << 20;
  void *device_buffer, *pinned;
  must(olMemAlloc(gpu, OL_ALLOC_TYPE_DEVICE, big, &device_buffer), "olMemAlloc");
  must(olMemAlloc(gpu, OL_ALLOC_TYPE_HOST, big, &pinned), "olMemAlloc HOST");
  char *pageable = malloc(big);
  if (pageable == NULL)
    return 1;
  memset(pageable, 1, big);
  memset(pinned, 1, big);
  bandwidth("pinned_h2d_GBps", q, device_buffer, gpu, pinned, host, big);
  bandwidth("pinned_d2h_GBps", q, pinned, host, device_buffer, gpu, big);
  bandwidth("pageable_h2d_GBps", q, device_buffer, gpu, pageable, host, big);
  bandwidth("pageable_d2h_GBps", q, pageable, host, device_buffer, gpu, big);
  free(pageable);
  must(olMemFree(pinned), "olMemFree");
  must(olMemFree(device_buffer), "olMemFree");

  BENCH_MEDIAN("program_load_us", "us", 1e3, 20, {
    ol_program_handle_t p;
    must(olCreateProgram(gpu, ptx, ptx_size + 1, &p), "olCreateProgram");
    must(olDestroyProgram(p), "olDestroyProgram");
  });
  must(olDestroyQueue(q), "olDestroyQueue");
  must(olDestroyProgram(program), "olDestroyProgram");
  must(olShutDown(), "olShutDown");
  return 0;
}
