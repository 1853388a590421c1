/* The GPU benchmark with the CUDA driver API alone: the baseline of bench_gpu_api.c, the
 * same cases measured the same way. libcuda.so.1 is opened at run time and the few
 * functions used are declared here by hand (no CUDA toolkit needed to build). Without
 * the library or a GPU it says so and exits 0. The driver's default scheduling is kept
 * (the primary context as it comes).
 * Usage: bench_cuda_raw <empty.ptx> */
#include "bench_timing.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUstream, *CUevent;
typedef unsigned long long CUdeviceptr;
typedef void (*CUhostFn)(void *);

static struct {
  CUresult (*init)(unsigned);
  CUresult (*device_get)(CUdevice *, int);
  CUresult (*primary_retain)(CUcontext *, CUdevice);
  CUresult (*ctx_set_current)(CUcontext);
  CUresult (*module_load_data)(CUmodule *, const void *);
  CUresult (*module_get_function)(CUfunction *, CUmodule, const char *);
  CUresult (*module_unload)(CUmodule);
  CUresult (*stream_create)(CUstream *, unsigned);
  CUresult (*stream_synchronize)(CUstream);
  CUresult (*launch_kernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                            unsigned, unsigned, CUstream, void **, void **);
  CUresult (*event_create)(CUevent *, unsigned);
  CUresult (*event_record)(CUevent, CUstream);
  CUresult (*event_synchronize)(CUevent);
  CUresult (*event_destroy)(CUevent);
  CUresult (*launch_host_func)(CUstream, CUhostFn, void *);
  CUresult (*mem_alloc)(CUdeviceptr *, size_t);
  CUresult (*mem_free)(CUdeviceptr);
  CUresult (*mem_alloc_host)(void **, size_t);
  CUresult (*mem_free_host)(void *);
  CUresult (*memcpy_htod_async)(CUdeviceptr, const void *, size_t, CUstream);
  CUresult (*memcpy_dtoh_async)(void *, CUdeviceptr, size_t, CUstream);
} cu;

static void *resolve(void *lib, const char *name) {
  void *f = dlsym(lib, name);
  if (f == NULL) {
    printf("skipped: libcuda.so.1 has no %s\n", name);
    exit(0);
  }
  return f;
}

#define LOAD(field, name) *(void **)(&cu.field) = resolve(lib, name)

static void must(CUresult r, const char *what) {
  if (r != 0) {
    printf("REFUSED %s CUresult %d\n", what, r);
    exit(1);
  }
}

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
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    printf("skipped: no libcuda.so.1 (%s)\n", dlerror());
    return 0;
  }
  LOAD(init, "cuInit");
  LOAD(device_get, "cuDeviceGet");
  LOAD(primary_retain, "cuDevicePrimaryCtxRetain");
  LOAD(ctx_set_current, "cuCtxSetCurrent");
  LOAD(module_load_data, "cuModuleLoadData");
  LOAD(module_get_function, "cuModuleGetFunction");
  LOAD(module_unload, "cuModuleUnload");
  LOAD(stream_create, "cuStreamCreate");
  LOAD(stream_synchronize, "cuStreamSynchronize");
  LOAD(launch_kernel, "cuLaunchKernel");
  LOAD(event_create, "cuEventCreate");
  LOAD(event_record, "cuEventRecord");
  LOAD(event_synchronize, "cuEventSynchronize");
  LOAD(event_destroy, "cuEventDestroy_v2");
  LOAD(launch_host_func, "cuLaunchHostFunc");
  LOAD(mem_alloc, "cuMemAlloc_v2");
  LOAD(mem_free, "cuMemFree_v2");
  LOAD(mem_alloc_host, "cuMemAllocHost_v2");
  LOAD(mem_free_host, "cuMemFreeHost");
  LOAD(memcpy_htod_async, "cuMemcpyHtoDAsync_v2");
  LOAD(memcpy_dtoh_async, "cuMemcpyDtoHAsync_v2");
  CUdevice dev;
  CUcontext ctx;
  if (cu.init(0) != 0 || cu.device_get(&dev, 0) != 0) {
    printf("skipped: no CUDA device\n");
    return 0;
  }
  must(cu.primary_retain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  must(cu.ctx_set_current(ctx), "cuCtxSetCurrent");

  FILE *f = fopen(argv[1], "rb");
  if (f == NULL)
    return 1;
  static char ptx[1 << 20];
  size_t n = fread(ptx, 1, sizeof ptx - 1, f);
  ptx[n] = 0;
  fclose(f);
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
