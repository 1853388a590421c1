/* A 1024 x 1024 single-precision matrix multiply on the host device (kernels/matmul.c):
 * one work-group per 16 x 64 block of the result, spread over every core.
 * Prints the throughput measured by events around the launch and by the wall clock,
 * compares it with one core running a plain C loop nest, and checks entries of the
 * result against that plain computation.
 *
 *   matmul [path/to/matmul_kernels.so [n]]   (n a multiple of 64; default 1024) */
#include <offload/liboffload.h>

#include "kernels/matmul.h" /* COLS, ROWS, K_SLICE and the kernel's arguments */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef MATMUL_PROGRAM
#define MATMUL_PROGRAM "matmul_kernels.so"
#endif

static void check(ol_result_t result, const char *what) {
  if (result == OL_SUCCESS)
    return;
  fprintf(stderr, "%s failed (error %u): %s\n", what, result->Code, result->Details);
  exit(1);
}

static bool find_host(ol_device_handle_t device, void *user_data) {
  ol_device_type_t type = 0;
  check(olGetDeviceInfo(device, OL_DEVICE_INFO_TYPE, sizeof type, &type), "olGetDeviceInfo");
  if (type == OL_DEVICE_TYPE_HOST)
    *(ol_device_handle_t *)user_data = device;
  return true;
}

static unsigned char *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (f == NULL || fseek(f, 0, SEEK_END) != 0) {
    fprintf(stderr, "cannot read %s\n", path);
    exit(1);
  }
  long length = ftell(f);
  rewind(f);
  unsigned char *bytes = malloc(length > 0 ? (size_t)length : 1);
  if (bytes == NULL || length <= 0 || fread(bytes, 1, (size_t)length, f) != (size_t)length) {
    fprintf(stderr, "cannot read %s\n", path);
    exit(1);
  }
  fclose(f);
  *size = (size_t)length;
  return bytes;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The plain computation: i-k-j loop nest on one core, the same order of additions for
 * each entry as the kernel's. */
static void matmul_plain(const float *a, const float *b, float *c, size_t n) {
  memset(c, 0, n * n * sizeof *c);
  for (size_t i = 0; i < n; ++i)
    for (size_t k = 0; k < n; ++k) {
      const float aik = a[i * n + k];
      for (size_t j = 0; j < n; ++j)
        c[i * n + j] += aik * b[k * n + j];
    }
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : MATMUL_PROGRAM;
  size_t n = argc > 2 ? (size_t)strtoul(argv[2], NULL, 10) : 1024;
  if (n == 0 || n % COLS != 0) {
    fprintf(stderr, "n must be a positive multiple of %d\n", COLS);
    return 2;
  }
  check(olInit(), "olInit");
  ol_device_handle_t host = NULL;
  check(olIterateDevices(find_host, &host), "olIterateDevices");
  uint32_t cores = 0;
  check(olGetDeviceInfo(host, OL_DEVICE_INFO_NUM_COMPUTE_UNITS, sizeof cores, &cores),
        "olGetDeviceInfo(NUM_COMPUTE_UNITS)");

  size_t image_size = 0;
  unsigned char *image = read_file(path, &image_size);
  ol_program_handle_t program = NULL;
  check(olCreateProgram(host, image, image_size, &program), "olCreateProgram");
  free(image);
  ol_symbol_handle_t matmul = NULL;
  check(olGetSymbol(program, "matmul", OL_SYMBOL_KIND_KERNEL, &matmul), "olGetSymbol");

  const size_t bytes = n * n * sizeof(float);
  float *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes), *plain = malloc(bytes);
  if (a == NULL || b == NULL || c == NULL || plain == NULL)
    return 1;
  srand(7);
  for (size_t i = 0; i < n * n; ++i) {
    a[i] = (float)rand() / (float)RAND_MAX - 0.5f;
    b[i] = (float)rand() / (float)RAND_MAX - 0.5f;
  }
  void *da = NULL, *db = NULL, *dc = NULL;
  check(olMemAlloc(host, OL_ALLOC_TYPE_DEVICE, bytes, &da), "olMemAlloc(A)");
  check(olMemAlloc(host, OL_ALLOC_TYPE_DEVICE, bytes, &db), "olMemAlloc(B)");
  check(olMemAlloc(host, OL_ALLOC_TYPE_DEVICE, bytes, &dc), "olMemAlloc(C)");
  ol_queue_handle_t queue = NULL;
  check(olCreateQueue(host, &queue), "olCreateQueue");
  check(olMemcpy(queue, da, host, a, host, bytes), "olMemcpy(A in)");
  check(olMemcpy(queue, db, host, b, host, bytes), "olMemcpy(B in)");
  check(olSyncQueue(queue), "olSyncQueue");

  const struct matmul_args args = {da, db, dc, n};
  ol_kernel_launch_size_args_t grid = {2, {(uint32_t)(n / COLS), (uint32_t)(n / ROWS), 1},
                                       {COLS, ROWS, 1}, K_SLICE * COLS * sizeof(float)};
  printf("C = A * B, %zu x %zu floats: %u x %u work-groups of %d x %d on %u compute units\n",
         n, n, grid.NumGroups.x, grid.NumGroups.y, COLS, ROWS, cores);
  const double flop = 2.0 * (double)n * (double)n * (double)n;
  double best_event_ms = 1e30, best_wall_ms = 1e30;
  for (int run = 0; run < 5; ++run) {
    ol_event_handle_t start = NULL, end = NULL;
    double t0 = now_s();
    check(olCreateEvent(queue, &start), "olCreateEvent");
    check(olLaunchKernel(queue, host, matmul, &args, sizeof args, &grid), "olLaunchKernel");
    check(olCreateEvent(queue, &end), "olCreateEvent");
    check(olSyncEvent(end), "olSyncEvent");
    double wall_ms = (now_s() - t0) * 1e3;
    float event_ms = 0;
    check(olGetEventElapsedTime(start, end, &event_ms), "olGetEventElapsedTime");
    printf("  run %d: %8.2f ms between the events, %8.2f ms wall: %6.2f GFLOP/s\n", run,
           (double)event_ms, wall_ms, flop / ((double)event_ms * 1e6));
    if (event_ms < best_event_ms)
      best_event_ms = event_ms;
    if (wall_ms < best_wall_ms)
      best_wall_ms = wall_ms;
    check(olDestroyEvent(start), "olDestroyEvent");
    check(olDestroyEvent(end), "olDestroyEvent");
  }
  check(olMemcpy(queue, c, host, dc, host, bytes), "olMemcpy(C out)");
  check(olSyncQueue(queue), "olSyncQueue");

  double t0 = now_s();
  matmul_plain(a, b, plain, n);
  const double plain_ms = (now_s() - t0) * 1e3;
  printf("offloaded: best %.2f ms = %.2f GFLOP/s; plain C loop nest on one core: %.2f ms = "
         "%.2f GFLOP/s (%.2fx)\n",
         best_event_ms, flop / (best_event_ms * 1e6), plain_ms, flop / (plain_ms * 1e6),
         plain_ms / best_event_ms);

  /* Entries checked against the plain result and against a double-precision dot
   * product: corners, the diagonal, and a scatter of others. */
  size_t checked = 0, wrong = 0;
  double worst = 0;
  for (size_t s = 0; s < 256; ++s) {
    const size_t i = s < 4 ? (s & 1) * (n - 1) : (s * 7919) % n;
    const size_t j = s < 4 ? (s >> 1) * (n - 1) : (s * 104729 + s / 3) % n;
    double exact = 0;
    for (size_t k = 0; k < n; ++k)
      exact += (double)a[i * n + k] * (double)b[k * n + j];
    const double got = c[i * n + j], diff = fabs(got - exact);
    if (diff > worst)
      worst = diff;
    ++checked;
    if (diff > 1e-3 * (1.0 + fabs(exact)) || fabs(got - plain[i * n + j]) > 1e-3) {
      if (wrong++ < 5)
        fprintf(stderr, "C[%zu][%zu] = %.6f, plain C %.6f, exact %.6f\n", i, j, got,
                (double)plain[i * n + j], exact);
    }
  }
  printf("checked %zu entries against the plain C result and a double-precision dot product: "
         "%s (largest difference %.2g)\n",
         checked, wrong == 0 ? "all match" : "MISMATCH", worst);

  check(olDestroyQueue(queue), "olDestroyQueue");
  check(olMemFree(da), "olMemFree");
  check(olMemFree(db), "olMemFree");
  check(olMemFree(dc), "olMemFree");
  check(olDestroyProgram(program), "olDestroyProgram");
  check(olShutDown(), "olShutDown");
  free(a);
  free(b);
  free(c);
  free(plain);
  return wrong == 0 ? 0 : 1;
}
