/* Helpers of the C tests that load programs and launch kernels: the device a test runs
 * on, reading a program file, loading it, looking up symbols, launch shapes, memory that
 * kernels and the host both touch, a gate that holds a queue, and a monotonic clock. The
 * host programs are built by CMakeLists.txt and their paths are given to each test on
 * its command line; on a CUDA GPU the test loads the PTX built from the same kernel
 * source (c-tests/kernels/ptx/, by scripts/make-gpu-test-kernels.sh) instead, on an AMD
 * GPU the code objects CMakeLists.txt builds from it with clang-19 (one OffloadBinary
 * per program, an image per gfx target). */
#ifndef OFFLOAD_KERNEL_TEST_H
#define OFFLOAD_KERNEL_TEST_H

#include "offload_test.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

/* Reads a whole file; exits the test if it cannot. The caller frees the bytes. */
static inline unsigned char *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    fprintf(stderr, "cannot open %s\n", path);
    exit(1);
  }
  size_t capacity = 1 << 16, used = 0;
  unsigned char *bytes = (unsigned char *)malloc(capacity);
  REQUIRE(bytes != NULL);
  for (;;) {
    used += fread(bytes + used, 1, capacity - used, f);
    if (used < capacity)
      break;
    capacity *= 2;
    bytes = (unsigned char *)realloc(bytes, capacity);
    REQUIRE(bytes != NULL);
  }
  REQUIRE(!ferror(f));
  fclose(f);
  *size = used;
  return bytes;
}

/* ---- the device under test ---- */

/* Where the committed PTX of the test kernels is: CMakeLists.txt passes the absolute
 * path of c-tests/kernels/ptx. */
#ifndef OFFLOAD_TEST_PTX_DIR
#error "OFFLOAD_TEST_PTX_DIR must name the folder of the test kernels' PTX"
#endif

static inline bool device_is_host(ol_device_handle_t device) {
  return device_type(device) == OL_DEVICE_TYPE_HOST;
}

/* Whether `device` belongs to the CUDA platform, whose programs are PTX. */
static inline bool device_is_cuda(ol_device_handle_t device) {
  return device_backend(device) == OL_PLATFORM_BACKEND_CUDA;
}

/* Whether `device` belongs to the AMDGPU platform, whose programs are code objects. */
static inline bool device_is_amdgpu(ol_device_handle_t device) {
  return device_backend(device) == OL_PLATFORM_BACKEND_AMDGPU;
}

/* Where CMakeLists.txt puts the test kernels built for AMD GPUs ("" where clang-19 or
 * ld.lld-19 was missing: the _amdgpu tests then skip, saying so). */
#ifndef OFFLOAD_TEST_AMDGPU_DIR
#define OFFLOAD_TEST_AMDGPU_DIR ""
#endif

/* The device a kernel test runs on, from the environment variable OFFLOAD_TEST_DEVICE:
 * unset, empty or "host": the host device; "gpu" or "gpu:N": the N-th (from 0) GPU of
 * the CUDA platform (the test kernels' GPU build is PTX); "amdgpu" or "amdgpu:N": the
 * N-th GPU of the AMDGPU platform; "remote": the first remote device (MPI). Where that
 * device is missing, the test prints why and exits 77, which ctest shows as skipped.
 * Call after olInit. */
static inline ol_device_handle_t test_device(void) {
  const char *want = getenv("OFFLOAD_TEST_DEVICE");
  if (want == NULL || want[0] == '\0' || strcmp(want, "host") == 0)
    return host_device();
  if (strcmp(want, "remote") == 0)
    return remote_test_device();
  const bool amd = strncmp(want, "amdgpu", 6) == 0;
  const char *kind = amd ? want + 6 : strncmp(want, "gpu", 3) == 0 ? want + 3 : NULL;
  size_t index = SIZE_MAX;
  if (kind != NULL && kind[0] == '\0') {
    index = 0;
  } else if (kind != NULL && kind[0] == ':' && kind[1] >= '0' && kind[1] <= '9') {
    char *end = NULL;
    index = (size_t)strtoul(kind + 1, &end, 10);
    if (*end != '\0')
      index = SIZE_MAX;
  }
  if (index == SIZE_MAX) {
    fprintf(stderr,
            "OFFLOAD_TEST_DEVICE=%s: want host, gpu, gpu:N, amdgpu, amdgpu:N or remote\n", want);
    exit(1);
  }
  const ol_platform_backend_t backend = amd ? OL_PLATFORM_BACKEND_AMDGPU : OL_PLATFORM_BACKEND_CUDA;
  const char *platform = amd ? "AMDGPU" : "CUDA";
  device_list_t list = all_devices();
  size_t seen = 0;
  for (size_t i = 0; i < list.count; ++i)
    if (device_type(list.devices[i]) == OL_DEVICE_TYPE_GPU &&
        device_backend(list.devices[i]) == backend && seen++ == index)
      return list.devices[i];
  printf("skipped: no %s device %zu (this machine has %zu %s GPU%s)\n", platform, index, seen,
         platform, seen == 1 ? "" : "s");
  exit(TEST_SKIP_CODE);
}

/* The image to load on `device` for the host program at `path`: `path` itself, or on a
 * CUDA device the PTX built from the same kernel source and defines, named as the host
 * program without its folder and extension ("<...>/host_abi_variant1.so" gives
 * OFFLOAD_TEST_PTX_DIR "/host_abi_variant1.ptx"); on an AMD GPU the OffloadBinary of
 * code objects built from it (OFFLOAD_TEST_AMDGPU_DIR "/host_abi_variant1.amdgpu"), or,
 * where there is none, the test skips saying why. The answer lives until the next call
 * (the tests load their programs from one thread). */
static inline const char *image_path(ol_device_handle_t device, const char *path) {
  static char image[4096];
  const bool amd = device_is_amdgpu(device);
  if (!device_is_cuda(device) && !amd)
    return path;
  const char *base = strrchr(path, '/');
  base = base == NULL ? path : base + 1;
  const char *dot = strrchr(base, '.');
  const int stem = (int)(dot == NULL ? strlen(base) : (size_t)(dot - base));
  const int written =
      amd ? snprintf(image, sizeof image, "%s/%.*s.amdgpu", OFFLOAD_TEST_AMDGPU_DIR, stem, base)
          : snprintf(image, sizeof image, "%s/%.*s.ptx", OFFLOAD_TEST_PTX_DIR, stem, base);
  REQUIRE(written > 0 && (size_t)written < sizeof image);
  FILE *readable = amd && OFFLOAD_TEST_AMDGPU_DIR[0] != '\0' ? fopen(image, "rb") : NULL;
  if (readable != NULL)
    fclose(readable);
  else if (amd) {
    printf("skipped: no AMDGPU build of the test kernels (%s; c-tests builds them with "
           "clang-19, ld.lld-19 and clang-offload-packager-19)\n",
           image);
    exit(TEST_SKIP_CODE);
  }
  return image;
}

/* Reads the image of the host program at `path` for `device` (see image_path). */
static inline unsigned char *read_image(ol_device_handle_t device, const char *path,
                                        size_t *size) {
  return read_file(image_path(device, path), size);
}

/* Memory that kernels write and the host reads (or the other way round) directly, on
 * any device: MANAGED. (A stack or malloc pointer given to a kernel works on the host
 * device only.) Freed with olMemFree. */
static inline void *shared_alloc(ol_device_handle_t device, size_t size) {
  void *p = NULL;
  REQUIRE_OK(olMemAlloc(device, OL_ALLOC_TYPE_MANAGED, size, &p));
  return p;
}

/* Loads the program at `path` on `device` (on a GPU: its PTX, see image_path). */
static inline ol_program_handle_t load_program(ol_device_handle_t device, const char *path) {
  size_t size = 0;
  unsigned char *bytes = read_image(device, path, &size);
  ol_program_handle_t program = NULL;
  REQUIRE_OK(olCreateProgram(device, bytes, size, &program));
  /* The library copied the image: the caller's bytes are not needed any more. */
  memset(bytes, 0, size);
  free(bytes);
  return program;
}

static inline ol_symbol_handle_t get_kernel(ol_program_handle_t program, const char *name) {
  ol_symbol_handle_t kernel = NULL;
  REQUIRE_OK(olGetSymbol(program, name, OL_SYMBOL_KIND_KERNEL, &kernel));
  return kernel;
}

static inline ol_symbol_handle_t get_global(ol_program_handle_t program, const char *name) {
  ol_symbol_handle_t global = NULL;
  REQUIRE_OK(olGetSymbol(program, name, OL_SYMBOL_KIND_GLOBAL_VARIABLE, &global));
  return global;
}

static inline ol_kernel_launch_size_args_t grid_1d(uint32_t groups, uint32_t group_size) {
  ol_kernel_launch_size_args_t grid;
  memset(&grid, 0, sizeof grid);
  grid.Dimensions = 1;
  grid.NumGroups.x = groups;
  grid.NumGroups.y = 1;
  grid.NumGroups.z = 1;
  grid.GroupSize.x = group_size;
  grid.GroupSize.y = 1;
  grid.GroupSize.z = 1;
  return grid;
}

static inline uint32_t device_u32(ol_device_handle_t device, ol_device_info_t what) {
  uint32_t value = 0;
  REQUIRE_OK(olGetDeviceInfo(device, what, sizeof value, &value));
  return value;
}

static inline uint64_t device_u64(ol_device_handle_t device, ol_device_info_t what) {
  uint64_t value = 0;
  REQUIRE_OK(olGetDeviceInfo(device, what, sizeof value, &value));
  return value;
}

static inline double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static inline void sleep_ms(unsigned ms) {
  struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

/* A host function that sleeps `*(unsigned *)user_data` milliseconds. */
static inline void sleep_callback(void *user_data) { sleep_ms(*(const unsigned *)user_data); }

/* A gate: a host function enqueued with gate_callback holds its queue until
 * gate_open() (or, so that a broken library cannot hang a test forever, 10 s). */
typedef struct {
  atomic_int open;
  atomic_int reached;
} gate_t;

static inline void gate_callback(void *user_data) {
  gate_t *gate = (gate_t *)user_data;
  atomic_store(&gate->reached, 1);
  double deadline = now_ms() + 10000;
  while (!atomic_load(&gate->open) && now_ms() < deadline)
    sleep_ms(1);
}

static inline void gate_open(gate_t *gate) { atomic_store(&gate->open, 1); }

#endif /* OFFLOAD_KERNEL_TEST_H */
