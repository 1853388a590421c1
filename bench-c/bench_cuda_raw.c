/* The GPU benchmark with the CUDA driver API alone: the baseline of bench_gpu_api.c, the
 * same cases measured the same way (the driver is opened at run time, bench_cuda_driver.h).
 * Without the library or a GPU it says so and exits 0. The driver's default scheduling is
 * kept (the primary context as it comes).
 * Usage: bench_cuda_raw <empty.ptx> */
#include "bench_cuda_driver.h"
#include "bench_timing.h"

#include <string.h>

#define must cu_must

static void bandwidth(const char *name, CUstream s, CUdeviceptr d, void *h, size_t size,
                      int to_device) {
  double samples[BENCH_SAMPLES];
  for (int k = 0; k < BENCH_SAMPLES; ++k) {
    double t0 = now_ns();
    must(to_device ? cu.memcpy_htod_async(d, h, size, s) : cu.memcpy_dtoh_async(h, d, size, s),
         "cuMemcpyAsync");
    must(cu.stream_synchronize(s), "cuStreamSynchronize");
    samples[k] = (double)size / (now_ns() - t0);
  }
  printf("RESULT %s %.2f GB/s\n", name, median(samples, BENCH_SAMPLES));
}

static void nothing(void *data) { (void)data; }

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s empty.ptx\n", argv[0]);
    return 2;
  }
  CUcontext ctx;
  cu_open(&ctx);
  const char *ptx = cu_read_ptx(argv[1]);
  CUmodule module;
  CUfunction empty;
  CUstream s;
  must(cu.module_load_data(&module, ptx), "cuModuleLoadData");
  must(cu.module_get_function(&empty, module, "empty"), "cuModuleGetFunction");
  must(cu.stream_create(&s, 0), "cuStreamCreate");

  BENCH_MEDIAN("launch_sync_us", "us", 1e3, 100, {
    must(cu.launch_kernel(empty, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL), "cuLaunchKernel");
    must(cu.stream_synchronize(s), "cuStreamSynchronize");
  });
  BENCH_MEDIAN("queued_launch_us", "us", 1e3 * 10000, 1, {
    for (int k = 0; k < 10000; ++k)
      must(cu.launch_kernel(empty, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL), "cuLaunchKernel");
    must(cu.stream_synchronize(s), "cuStreamSynchronize");
  });
  BENCH_MEDIAN("launch_event_sync_us", "us", 1e3, 100, {
    CUevent e;
    must(cu.launch_kernel(empty, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL), "cuLaunchKernel");
    must(cu.event_create(&e, 0), "cuEventCreate");
    must(cu.event_record(e, s), "cuEventRecord");
    must(cu.event_synchronize(e), "cuEventSynchronize");
    must(cu.event_destroy(e), "cuEventDestroy");
  });
  BENCH_MEDIAN("host_function_sync_us", "us", 1e3, 100, {
    must(cu.launch_host_func(s, nothing, NULL), "cuLaunchHostFunc");
    must(cu.stream_synchronize(s), "cuStreamSynchronize");
  });
  static const size_t sizes[] = {64, 4096, 1 << 20};
  static const char *const names[] = {"alloc_free_64B_us", "alloc_free_4KiB_us",
                                      "alloc_free_1MiB_us"};
  for (int i = 0; i < 3; ++i) {
    CUdeviceptr p;
    BENCH_MEDIAN(names[i], "us", 1e3, 1000, {
      must(cu.mem_alloc(&p, sizes[i]), "cuMemAlloc");
      must(cu.mem_free(p), "cuMemFree");
    });
  }
  const size_t big = 64u << 20;
  CUdeviceptr d;
  void *pinned;
  must(cu.mem_alloc(&d, big), "cuMemAlloc");
  must(cu.mem_alloc_host(&pinned, big), "cuMemAllocHost");
  char *pageable = malloc(big);
  if (pageable == NULL)
    return 1;
  memset(pageable, 1, big);
  memset(pinned, 1, big);
  bandwidth("pinned_h2d_GBps", s, d, pinned, big, 1);
  bandwidth("pinned_d2h_GBps", s, d, pinned, big, 0);
  bandwidth("pageable_h2d_GBps", s, d, pageable, big, 1);
  bandwidth("pageable_d2h_GBps", s, d, pageable, big, 0);
  free(pageable);
  must(cu.mem_free_host(pinned), "cuMemFreeHost");
  must(cu.mem_free(d), "cuMemFree");
  BENCH_MEDIAN("program_load_us", "us", 1e3, 20, {
    CUmodule m;
    must(cu.module_load_data(&m, ptx), "cuModuleLoadData");
    must(cu.module_unload(m), "cuModuleUnload");
  });
  must(cu.module_unload(module), "cuModuleUnload");
  return 0;
}
