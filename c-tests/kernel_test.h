/* Helpers of the C tests that load host programs and launch kernels: reading a program
 * file, loading it, looking up symbols, launch shapes, a gate that holds a queue, and a
 * monotonic clock. The host programs are built by CMakeLists.txt and their paths are
 * given to each test on its command line. */
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

/* Loads the host program at `path` on `device`. */
static inline ol_program_handle_t load_program(ol_device_handle_t device, const char *path) {
  size_t size = 0;
  unsigned char *bytes = read_file(path, &size);
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
