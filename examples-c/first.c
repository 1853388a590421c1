/* first: scales 1000 floats by 2 on the first device liboffload finds (GPUs and remote
 * devices come before the host device). Usage: first IMAGE (the kernel built for it). */
#include <offload/liboffload.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                            \
  do {                                                                         \
    ol_result_t r_ = (call);                                                   \
    if (r_ != OL_SUCCESS) {                                                    \
      fprintf(stderr, "%s: %s: %s\n", #call, olGetErrcName(r_->Code),          \
              r_->Details);                                                    \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

struct scale_args { float *x; float a; size_t n; }; /* as in the kernel */
struct choice { ol_device_handle_t first, host; };

static bool choose(ol_device_handle_t device, void *data) {
  struct choice *c = (struct choice *)data;
  ol_device_type_t type;
  CHECK(olGetDeviceInfo(device, OL_DEVICE_INFO_TYPE, sizeof type, &type));
  if (type == OL_DEVICE_TYPE_HOST) c->host = device; /* it names host memory */
  if (c->first == NULL) c->first = device;
  return true; /* go on to the next device */
}

int main(int argc, char **argv) {
  FILE *f = argc == 2 ? fopen(argv[1], "rb") : NULL;
  if (f == NULL) { fprintf(stderr, "usage: first IMAGE\n"); return 2; }
  fseek(f, 0, SEEK_END);
  size_t image_size = (size_t)ftell(f);
  rewind(f);
  unsigned char *image = (unsigned char *)malloc(image_size);
  if (image == NULL || fread(image, 1, image_size, f) != image_size) return 2;
  fclose(f);

  CHECK(olInit());
  struct choice c = {NULL, NULL};
  CHECK(olIterateDevices(choose, &c));
  ol_device_handle_t device = c.first, host = c.host;
  char name[256];
  CHECK(olGetDeviceInfo(device, OL_DEVICE_INFO_NAME, sizeof name, name));
  printf("device: %s\n", name);

  ol_program_handle_t program;
  ol_symbol_handle_t kernel;
  CHECK(olCreateProgram(device, image, image_size, &program)); /* copies the image */
  free(image);
  CHECK(olGetSymbol(program, "scale", OL_SYMBOL_KIND_KERNEL, &kernel));

  enum { N = 1000 };
  float x[N];
  for (int i = 0; i < N; i++) x[i] = (float)i;
  void *dx;
  CHECK(olMemAlloc(device, OL_ALLOC_TYPE_DEVICE, sizeof x, &dx));
  ol_queue_handle_t queue;
  CHECK(olCreateQueue(device, &queue));
  /* olMemcpy(queue, destination, its device, source, its device, bytes) */
  CHECK(olMemcpy(queue, dx, device, x, host, sizeof x));

  struct scale_args args = {(float *)dx, 2.0f, N}; /* copied by olLaunchKernel */
  ol_kernel_launch_size_args_t grid = {1, {(N + 255) / 256, 1, 1}, {256, 1, 1}, 0};
  CHECK(olLaunchKernel(queue, device, kernel, &args, sizeof args, &grid));
  CHECK(olMemcpy(queue, x, host, dx, device, sizeof x));
  CHECK(olSyncQueue(queue)); /* the copy in, the kernel and the copy out are done */

  int wrong = 0;
  for (int i = 0; i < N; i++) wrong += x[i] != 2.0f * (float)i;
  printf("%s\n", wrong ? "wrong results" : "x[i] == 2 * i for every i");

  CHECK(olDestroyQueue(queue));
  CHECK(olMemFree(dx));
  CHECK(olDestroyProgram(program));
  CHECK(olShutDown());
  return wrong != 0;
}
