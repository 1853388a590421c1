/* saxpy on the host device: loads a host program (kernels/saxpy.c built as a shared
 * object), allocates device memory, copies the inputs in, launches the kernel on a
 * queue, waits for an event, copies the result out and checks it.
 *
 *   saxpy [path/to/saxpy_kernels.so]   (default: the one built beside this example) */
#include <offload/liboffload.h>

#include "kernels/saxpy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef SAXPY_PROGRAM
#define SAXPY_PROGRAM "saxpy_kernels.so"
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

/* The whole file, in memory: olCreateProgram takes the image's bytes. */
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

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : SAXPY_PROGRAM;
  check(olInit(), "olInit");
  ol_device_handle_t host = NULL;
  check(olIterateDevices(find_host, &host), "olIterateDevices");

  size_t image_size = 0;
  unsigned char *image = read_file(path, &image_size);
  ol_program_handle_t program = NULL;
  check(olCreateProgram(host, image, image_size, &program), "olCreateProgram");
  free(image); /* the library keeps its own copy */
  ol_symbol_handle_t saxpy = NULL;
  check(olGetSymbol(program, "saxpy", OL_SYMBOL_KIND_KERNEL, &saxpy), "olGetSymbol");
  printf("loaded %s (%zu bytes) and found the kernel \"saxpy\"\n", path, image_size);

  const size_t n = 1 << 22;
  const size_t bytes = n * sizeof(float);
  float *x = malloc(bytes), *y = malloc(bytes), *result = malloc(bytes);
  if (x == NULL || y == NULL || result == NULL)
    return 1;
  for (size_t i = 0; i < n; ++i) {
    x[i] = (float)(i % 1000);
    y[i] = 1.0f;
  }
  void *dx = NULL, *dy = NULL;
  check(olMemAlloc(host, OL_ALLOC_TYPE_DEVICE, bytes, &dx), "olMemAlloc(x)");
  check(olMemAlloc(host, OL_ALLOC_TYPE_DEVICE, bytes, &dy), "olMemAlloc(y)");
  printf("allocated two device buffers of %zu floats\n", n);

  ol_queue_handle_t queue = NULL;
  check(olCreateQueue(host, &queue), "olCreateQueue");
  check(olMemcpy(queue, dx, host, x, host, bytes), "olMemcpy(x in)");
  check(olMemcpy(queue, dy, host, y, host, bytes), "olMemcpy(y in)");

  /* The kernel's arguments: one struct, copied by olLaunchKernel before it returns. */
  const float a = 2.0f;
  const struct saxpy_args args = {a, dx, dy, n};
  const uint32_t group = 1024;
  ol_kernel_launch_size_args_t grid = {1, {(uint32_t)((n + group - 1) / group), 1, 1},
                                       {group, 1, 1}, 0};
  check(olLaunchKernel(queue, host, saxpy, &args, sizeof args, &grid), "olLaunchKernel");
  ol_event_handle_t done = NULL;
  check(olCreateEvent(queue, &done), "olCreateEvent");
  printf("enqueued: copy x, copy y, saxpy (a = %g) over %u groups of %u, then an event\n",
         (double)a, grid.NumGroups.x, group);
  check(olSyncEvent(done), "olSyncEvent");
  printf("the event completed: the kernel has run\n");

  check(olMemcpy(queue, result, host, dy, host, bytes), "olMemcpy(y out)");
  check(olSyncQueue(queue), "olSyncQueue");
  size_t wrong = 0;
  for (size_t i = 0; i < n; ++i)
    wrong += result[i] != a * x[i] + y[i];
  printf("copied y back: %s (y[999] = %g)\n",
         wrong == 0 ? "every element is a * x + y" : "MISMATCH", (double)result[999]);

  check(olDestroyEvent(done), "olDestroyEvent");
  check(olDestroyQueue(queue), "olDestroyQueue");
  check(olMemFree(dx), "olMemFree");
  check(olMemFree(dy), "olMemFree");
  check(olDestroyProgram(program), "olDestroyProgram");
  check(olShutDown(), "olShutDown");
  free(x);
  free(y);
  free(result);
  return wrong == 0 ? 0 : 1;
}
