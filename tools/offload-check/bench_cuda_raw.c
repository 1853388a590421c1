/* --bench through the CUDA driver directly, for comparison: the same operations as
 * bench.c with the driver's own calls on the same GPU (its primary context, which
 * liboffload shares). The driver is opened with dlopen and its few functions are
 * declared here by hand, so nothing of CUDA is needed to build offload-check. */
#include "bench.h"

#include "images.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int cu_result_t; /* CUresult: 0 is CUDA_SUCCESS */
typedef int cu_device_t;
typedef struct cu_context *cu_context_t;
typedef struct cu_module *cu_module_t;
typedef struct cu_function *cu_function_t;
typedef struct cu_stream *cu_stream_t;
typedef struct cu_event *cu_event_t;
typedef unsigned long long cu_deviceptr_t;
typedef void (*cu_host_fn_t)(void *user_data);

/* The driver entry points used, by their exported names. */
typedef struct {
  void *library;
  cu_result_t (*init)(unsigned flags);
  cu_result_t (*device_get)(cu_device_t *device, int ordinal);
  cu_result_t (*primary_retain)(cu_context_t *context, cu_device_t device);
  cu_result_t (*primary_release)(cu_device_t device);
  cu_result_t (*ctx_set_current)(cu_context_t context);
  cu_result_t (*module_load_data)(cu_module_t *module, const void *image);
  cu_result_t (*module_unload)(cu_module_t module);
  cu_result_t (*module_get_function)(cu_function_t *function, cu_module_t module,
                                     const char *name);
  cu_result_t (*stream_create)(cu_stream_t *stream, unsigned flags);
  cu_result_t (*stream_destroy)(cu_stream_t stream);
  cu_result_t (*stream_synchronize)(cu_stream_t stream);
  cu_result_t (*launch_kernel)(cu_function_t function, unsigned gx, unsigned gy, unsigned gz,
                               unsigned bx, unsigned by, unsigned bz, unsigned shared_bytes,
                               cu_stream_t stream, void **params, void **extra);
  cu_result_t (*launch_host_func)(cu_stream_t stream, cu_host_fn_t fn, void *user_data);
  cu_result_t (*event_create)(cu_event_t *event, unsigned flags);
  cu_result_t (*event_record)(cu_event_t event, cu_stream_t stream);
  cu_result_t (*event_synchronize)(cu_event_t event);
  cu_result_t (*event_destroy)(cu_event_t event);
  cu_result_t (*mem_alloc)(cu_deviceptr_t *pointer, size_t bytes);
  cu_result_t (*mem_free)(cu_deviceptr_t pointer);
  cu_result_t (*mem_alloc_host)(void **pointer, size_t bytes);
  cu_result_t (*mem_free_host)(void *pointer);
  cu_result_t (*memcpy_htod)(cu_deviceptr_t dst, const void *src, size_t bytes);
  cu_result_t (*memcpy_dtoh)(void *dst, cu_deviceptr_t src, size_t bytes);
  cu_result_t (*get_error_name)(cu_result_t error, const char **name);
} cuda_driver_t;

#define DRIVER_LIBRARY "libcuda.so.1"

bool cuda_driver_present(char *why, size_t why_size) {
  void *library = dlopen(DRIVER_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) {
    const char *error = dlerror();
    snprintf(why, why_size, "%s", error != NULL ? error : DRIVER_LIBRARY " not found");
    return false;
  }
  dlclose(library);
  return true;
}

/* Looks up `name` into `*slot`; false (with the name in `why`) where it is missing. */
static bool resolve(void *library, const char *name, void *slot, char *why, size_t why_size) {
  void *symbol = dlsym(library, name);
  if (symbol == NULL) {
    snprintf(why, why_size, "%s has no %s", DRIVER_LIBRARY, name);
    return false;
  }
  /* POSIX: a function pointer and void * convert through memcpy. */
  memcpy(slot, &symbol, sizeof symbol);
  return true;
}

static bool open_driver(cuda_driver_t *cu, char *why, size_t why_size) {
  memset(cu, 0, sizeof *cu);
  cu->library = dlopen(DRIVER_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  if (cu->library == NULL) {
    const char *error = dlerror();
    snprintf(why, why_size, "%s", error != NULL ? error : DRIVER_LIBRARY " not found");
    return false;
  }
  void *l = cu->library;
  const bool ok =
      resolve(l, "cuInit", &cu->init, why, why_size) &&
      resolve(l, "cuDeviceGet", &cu->device_get, why, why_size) &&
      resolve(l, "cuDevicePrimaryCtxRetain", &cu->primary_retain, why, why_size) &&
      resolve(l, "cuDevicePrimaryCtxRelease_v2", &cu->primary_release, why, why_size) &&
      resolve(l, "cuCtxSetCurrent", &cu->ctx_set_current, why, why_size) &&
      resolve(l, "cuModuleLoadData", &cu->module_load_data, why, why_size) &&
      resolve(l, "cuModuleUnload", &cu->module_unload, why, why_size) &&
      resolve(l, "cuModuleGetFunction", &cu->module_get_function, why, why_size) &&
      resolve(l, "cuStreamCreate", &cu->stream_create, why, why_size) &&
      resolve(l, "cuStreamDestroy_v2", &cu->stream_destroy, why, why_size) &&
      resolve(l, "cuStreamSynchronize", &cu->stream_synchronize, why, why_size) &&
      resolve(l, "cuLaunchKernel", &cu->launch_kernel, why, why_size) &&
      resolve(l, "cuLaunchHostFunc", &cu->launch_host_func, why, why_size) &&
      resolve(l, "cuEventCreate", &cu->event_create, why, why_size) &&
      resolve(l, "cuEventRecord", &cu->event_record, why, why_size) &&
      resolve(l, "cuEventSynchronize", &cu->event_synchronize, why, why_size) &&
      resolve(l, "cuEventDestroy_v2", &cu->event_destroy, why, why_size) &&
      resolve(l, "cuMemAlloc_v2", &cu->mem_alloc, why, why_size) &&
      resolve(l, "cuMemFree_v2", &cu->mem_free, why, why_size) &&
      resolve(l, "cuMemAllocHost_v2", &cu->mem_alloc_host, why, why_size) &&
      resolve(l, "cuMemFreeHost", &cu->mem_free_host, why, why_size) &&
      resolve(l, "cuMemcpyHtoD_v2", &cu->memcpy_htod, why, why_size) &&
      resolve(l, "cuMemcpyDtoH_v2", &cu->memcpy_dtoh, why, why_size) &&
      resolve(l, "cuGetErrorName", &cu->get_error_name, why, why_size);
  if (!ok) {
    dlclose(cu->library);
    cu->library = NULL;
  }
  return ok;
}

/* Records a failed driver call as the measurement's reason; true if it failed. */
static bool cu_failed(const cuda_driver_t *cu, cu_result_t status, const char *what,
                      measure_t *out) {
  if (status == 0)
    return false;
  const char *name = NULL;
  if (cu->get_error_name == NULL || cu->get_error_name(status, &name) != 0 || name == NULL)
    name = "an unknown CUresult";
  out->valid = false;
  snprintf(out->why, sizeof out->why, "%s: %s (%d)", what, name, status);
  return true;
}

static void nothing(void *user_data) { (void)user_data; }

enum { WARM_UP = 3 };

/* What every latency benchmark loops over: one operation and its sync. */
typedef enum { OP_LAUNCH, OP_HOST_FUNCTION, OP_EVENT, OP_ALLOC } raw_op_t;

static bool one_op(const cuda_driver_t *cu, raw_op_t op, cu_stream_t stream,
                   cu_function_t empty, size_t bytes, measure_t *out) {
  switch (op) {
  case OP_LAUNCH:
    return !cu_failed(cu, cu->launch_kernel(empty, 1, 1, 1, 1, 1, 1, 0, stream, NULL, NULL),
                      "cuLaunchKernel", out) &&
           !cu_failed(cu, cu->stream_synchronize(stream), "cuStreamSynchronize", out);
  case OP_HOST_FUNCTION:
    return !cu_failed(cu, cu->launch_host_func(stream, nothing, NULL), "cuLaunchHostFunc", out) &&
           !cu_failed(cu, cu->stream_synchronize(stream), "cuStreamSynchronize", out);
  case OP_EVENT: {
    cu_event_t event = NULL;
    if (cu_failed(cu, cu->event_create(&event, 0), "cuEventCreate", out))
      return false;
    const bool ok = !cu_failed(cu, cu->event_record(event, stream), "cuEventRecord", out) &&
                    !cu_failed(cu, cu->event_synchronize(event), "cuEventSynchronize", out);
    return !cu_failed(cu, cu->event_destroy(event), "cuEventDestroy", out) && ok;
  }
  case OP_ALLOC: {
    cu_deviceptr_t pointer = 0;
    return !cu_failed(cu, cu->mem_alloc(&pointer, bytes), "cuMemAlloc", out) &&
           !cu_failed(cu, cu->mem_free(pointer), "cuMemFree", out);
  }
  }
  return false;
}

static void latency(const cuda_driver_t *cu, raw_op_t op, cu_stream_t stream, cu_function_t empty,
                    size_t bytes, const bench_plan_t *plan, double *samples, measure_t *out) {
  size_t n = 0;
  for (size_t i = 0; i < plan->repetitions + WARM_UP; ++i) {
    const double start = now_seconds();
    if (!one_op(cu, op, stream, empty, bytes, out))
      return;
    if (i >= WARM_UP)
      samples[n++] = (now_seconds() - start) * 1e6;
  }
  summarise(samples, n, out);
}

static void queued_launches(const cuda_driver_t *cu, cu_stream_t stream, cu_function_t empty,
                            const bench_plan_t *plan, double *samples, measure_t *out) {
  size_t n = 0;
  for (size_t r = 0; r < plan->copy_repetitions; ++r) {
    const double start = now_seconds();
    for (size_t i = 0; i < plan->queued_launches; ++i)
      if (cu_failed(cu, cu->launch_kernel(empty, 1, 1, 1, 1, 1, 1, 0, stream, NULL, NULL),
                    "cuLaunchKernel", out))
        return;
    if (cu_failed(cu, cu->stream_synchronize(stream), "cuStreamSynchronize", out))
      return;
    samples[n++] = (now_seconds() - start) * 1e6 / (double)plan->queued_launches;
  }
  summarise(samples, n, out);
}

static void copy_bandwidth(const cuda_driver_t *cu, void *host, cu_deviceptr_t device,
                           bool to_device, const bench_plan_t *plan, double *samples,
                           measure_t *out) {
  size_t n = 0;
  for (size_t i = 0; i < plan->copy_repetitions + 1; ++i) {
    const double start = now_seconds();
    cu_result_t status = to_device ? cu->memcpy_htod(device, host, plan->copy_bytes)
                                   : cu->memcpy_dtoh(host, device, plan->copy_bytes);
    if (cu_failed(cu, status, to_device ? "cuMemcpyHtoD" : "cuMemcpyDtoH", out))
      return;
    if (i >= 1)
      samples[n++] = (double)plan->copy_bytes / (now_seconds() - start) / 1e9;
  }
  summarise_bandwidth(samples, n, out);
}

static void copies(const cuda_driver_t *cu, const bench_plan_t *plan, double *samples,
                   bench_results_t *out) {
  cu_deviceptr_t device = 0;
  void *pinned = NULL, *pageable = malloc(plan->copy_bytes);
  if (pageable == NULL ||
      cu_failed(cu, cu->mem_alloc(&device, plan->copy_bytes), "cuMemAlloc",
                &out->raw[BENCH_H2D_PAGEABLE])) {
    free(pageable);
    return;
  }
  memset(pageable, 1, plan->copy_bytes);
  copy_bandwidth(cu, pageable, device, true, plan, samples, &out->raw[BENCH_H2D_PAGEABLE]);
  copy_bandwidth(cu, pageable, device, false, plan, samples, &out->raw[BENCH_D2H_PAGEABLE]);
  if (!cu_failed(cu, cu->mem_alloc_host(&pinned, plan->copy_bytes), "cuMemAllocHost",
                 &out->raw[BENCH_H2D_PINNED])) {
    memset(pinned, 1, plan->copy_bytes);
    copy_bandwidth(cu, pinned, device, true, plan, samples, &out->raw[BENCH_H2D_PINNED]);
    copy_bandwidth(cu, pinned, device, false, plan, samples, &out->raw[BENCH_D2H_PINNED]);
    cu->mem_free_host(pinned);
  }
  cu->mem_free(device);
  free(pageable);
}

void run_cuda_raw_bench(int ordinal, const bench_plan_t *plan, bench_results_t *out) {
  memset(out->raw, 0, sizeof out->raw);
  out->has_raw = false;
  cuda_driver_t cu;
  char why[256];
  if (!open_driver(&cu, why, sizeof why)) {
    snprintf(out->raw_note, sizeof out->raw_note, "CUDA driver not measured: %s", why);
    return;
  }
  size_t most = plan->repetitions + WARM_UP;
  if (plan->copy_repetitions + 1 > most)
    most = plan->copy_repetitions + 1;
  double *samples = malloc(most * sizeof *samples);
  measure_t setup = {false, 0, 0, 0, ""};
  cu_device_t device = 0;
  cu_context_t context = NULL;
  cu_module_t module = NULL;
  cu_function_t empty = NULL;
  cu_stream_t stream = NULL;
  const image_t ptx = image_for_backend(OL_PLATFORM_BACKEND_CUDA);
  const bool retained =
      samples != NULL && !cu_failed(&cu, cu.init(0), "cuInit", &setup) &&
      !cu_failed(&cu, cu.device_get(&device, ordinal), "cuDeviceGet", &setup) &&
      !cu_failed(&cu, cu.primary_retain(&context, device), "cuDevicePrimaryCtxRetain", &setup);
  if (!retained || cu_failed(&cu, cu.ctx_set_current(context), "cuCtxSetCurrent", &setup) ||
      cu_failed(&cu, cu.module_load_data(&module, ptx.bytes), "cuModuleLoadData", &setup) ||
      cu_failed(&cu, cu.module_get_function(&empty, module, "empty"), "cuModuleGetFunction",
                &setup) ||
      cu_failed(&cu, cu.stream_create(&stream, 0), "cuStreamCreate", &setup)) {
    snprintf(out->raw_note, sizeof out->raw_note, "CUDA driver not measured: %s",
             samples == NULL ? "out of memory" : setup.why);
  } else {
    out->has_raw = true;
    latency(&cu, OP_LAUNCH, stream, empty, 0, plan, samples, &out->raw[BENCH_LAUNCH_SYNC]);
    queued_launches(&cu, stream, empty, plan, samples, &out->raw[BENCH_QUEUED_LAUNCH]);
    latency(&cu, OP_HOST_FUNCTION, stream, empty, 0, plan, samples,
            &out->raw[BENCH_HOST_FUNCTION]);
    latency(&cu, OP_EVENT, stream, empty, 0, plan, samples, &out->raw[BENCH_EVENT]);
    latency(&cu, OP_ALLOC, stream, empty, 64, plan, samples, &out->raw[BENCH_ALLOC_64]);
    latency(&cu, OP_ALLOC, stream, empty, 4096, plan, samples, &out->raw[BENCH_ALLOC_4K]);
    latency(&cu, OP_ALLOC, stream, empty, (size_t)1 << 20, plan, samples,
            &out->raw[BENCH_ALLOC_1M]);
    copies(&cu, plan, samples, out);
  }
  if (stream != NULL)
    cu.stream_destroy(stream);
  if (module != NULL)
    cu.module_unload(module);
  if (retained)
    cu.primary_release(device);
  free(samples);
  /* The library stays loaded: liboffload holds it open too. */
}
