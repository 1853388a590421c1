/* The CUDA driver API for the benchmarks that use it alone (bench_cuda_raw.c,
 * bench_cuda_paths.c): libcuda.so.1 is opened at run time and the few functions used are
 * declared here by hand, so no CUDA toolkit is needed to build them. */
#ifndef OFFLOAD_BENCH_CUDA_DRIVER_H
#define OFFLOAD_BENCH_CUDA_DRIVER_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUstream, *CUevent;
typedef unsigned long long CUdeviceptr;
typedef void (*CUhostFn)(void *);

enum { CU_STREAM_NON_BLOCKING = 1 };
/* CUjit_option values (cuda.h). */
enum {
  CU_JIT_INFO_LOG_BUFFER = 3,
  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6
};

static struct {
  CUresult (*init)(unsigned);
  CUresult (*device_get)(CUdevice *, int);
  CUresult (*primary_retain)(CUcontext *, CUdevice);
  CUresult (*ctx_set_current)(CUcontext);
  CUresult (*ctx_get_current)(CUcontext *);
  CUresult (*module_load_data)(CUmodule *, const void *);
  CUresult (*module_load_data_ex)(CUmodule *, const void *, unsigned, int *, void **);
  CUresult (*module_get_function)(CUfunction *, CUmodule, const char *);
  CUresult (*module_get_global)(CUdeviceptr *, size_t *, CUmodule, const char *);
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
  CUresult (*mem_host_register)(void *, size_t, unsigned);
  CUresult (*mem_host_unregister)(void *);
  CUresult (*memcpy_htod_async)(CUdeviceptr, const void *, size_t, CUstream);
  CUresult (*memcpy_dtoh_async)(void *, CUdeviceptr, size_t, CUstream);
} cu;

static void *cu_resolve(void *lib, const char *name) {
  void *f = dlsym(lib, name);
  if (f == NULL) {
    printf("skipped: libcuda.so.1 has no %s\n", name);
    exit(0);
  }
  return f;
}

#define CU_LOAD(field, name) *(void **)(&cu.field) = cu_resolve(lib, name)

static void cu_must(CUresult r, const char *what) {
  if (r != 0) {
    printf("REFUSED %s CUresult %d\n", what, r);
    exit(1);
  }
}

/* Opens the driver and makes device 0's primary context current into `*ctx`; without the
 * library or a GPU, says so and exits 0. */
static void cu_open(CUcontext *ctx) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    printf("skipped: no libcuda.so.1 (%s)\n", dlerror());
    exit(0);
  }
  CU_LOAD(init, "cuInit");
  CU_LOAD(device_get, "cuDeviceGet");
  CU_LOAD(primary_retain, "cuDevicePrimaryCtxRetain");
  CU_LOAD(ctx_set_current, "cuCtxSetCurrent");
  CU_LOAD(ctx_get_current, "cuCtxGetCurrent");
  CU_LOAD(module_load_data, "cuModuleLoadData");
  CU_LOAD(module_load_data_ex, "cuModuleLoadDataEx");
  CU_LOAD(module_get_function, "cuModuleGetFunction");
  CU_LOAD(module_get_global, "cuModuleGetGlobal_v2");
  CU_LOAD(module_unload, "cuModuleUnload");
  CU_LOAD(stream_create, "cuStreamCreate");
  CU_LOAD(stream_synchronize, "cuStreamSynchronize");
  CU_LOAD(launch_kernel, "cuLaunchKernel");
  CU_LOAD(event_create, "cuEventCreate");
  CU_LOAD(event_record, "cuEventRecord");
  CU_LOAD(event_synchronize, "cuEventSynchronize");
  CU_LOAD(event_destroy, "cuEventDestroy_v2");
  CU_LOAD(launch_host_func, "cuLaunchHostFunc");
  CU_LOAD(mem_alloc, "cuMemAlloc_v2");
  CU_LOAD(mem_free, "cuMemFree_v2");
  CU_LOAD(mem_alloc_host, "cuMemAllocHost_v2");
  CU_LOAD(mem_free_host, "cuMemFreeHost");
  CU_LOAD(mem_host_register, "cuMemHostRegister_v2");
  CU_LOAD(mem_host_unregister, "cuMemHostUnregister");
  CU_LOAD(memcpy_htod_async, "cuMemcpyHtoDAsync_v2");
  CU_LOAD(memcpy_dtoh_async, "cuMemcpyDtoHAsync_v2");
  CUdevice dev;
  if (cu.init(0) != 0 || cu.device_get(&dev, 0) != 0) {
    printf("skipped: no CUDA device\n");
    exit(0);
  }
  cu_must(cu.primary_retain(ctx, dev), "cuDevicePrimaryCtxRetain");
  cu_must(cu.ctx_set_current(*ctx), "cuCtxSetCurrent");
}

/* The PTX text of `path`, NUL-terminated (loaders want it so). */
static const char *cu_read_ptx(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    printf("REFUSED cannot open %s\n", path);
    exit(1);
  }
  static char ptx[1 << 20];
  size_t n = fread(ptx, 1, sizeof ptx - 1, f);
  ptx[n] = 0;
  fclose(f);
  return ptx;
}

#endif
