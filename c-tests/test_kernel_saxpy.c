/* saxpy over a million floats in device memory: copy in, launch on a queue, an event,
 * copy out, and every element checked; then the same kernel launched synchronously. On
 * the device OFFLOAD_TEST_DEVICE names (kernel_test.h). */
#include "kernel_test.h"
#include "kernels/host_abi.h"

enum { N = 1000000, GROUP = 256 };

int main(int argc, char **argv) {
  REQUIRE(argc == 2);
  REQUIRE_OK(olInit());
  ol_device_handle_t device = test_device();
  ol_device_handle_t host = host_device(); /* names the host side of copies */
  ol_program_handle_t program = load_program(device, argv[1]);
  ol_symbol_handle_t saxpy = get_kernel(program, "saxpy");

  /* Values whose products and sums are exact in float. */
  float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y), *out = malloc(N * sizeof *out);
  REQUIRE(x != NULL && y != NULL && out != NULL);
  for (size_t i = 0; i < N; ++i) {
    x[i] = (float)(i % 1024);
    y[i] = (float)(i % 7) - 3.0f;
    out[i] = -1.0f;
  }
  void *dx = NULL, *dy = NULL;
  REQUIRE_OK(olMemAlloc(device, OL_ALLOC_TYPE_DEVICE, N * sizeof(float), &dx));
  REQUIRE_OK(olMemAlloc(device, OL_ALLOC_TYPE_DEVICE, N * sizeof(float), &dy));

  ol_queue_handle_t queue = NULL;
  REQUIRE_OK(olCreateQueue(device, &queue));
  CHECK_OK(olMemcpy(queue, dx, device, x, host, N * sizeof(float)));
  CHECK_OK(olMemcpy(queue, dy, device, y, host, N * sizeof(float)));

  const float a = 2.5f;
  const struct saxpy_args args = {a, dx, dy, N};
  /* N is not a multiple of GROUP: the last group is partly outside and the kernel clamps. */
  ol_kernel_launch_size_args_t grid = grid_1d((N + GROUP - 1) / GROUP, GROUP);
  CHECK_OK(olLaunchKernel(queue, device, saxpy, &args, sizeof args, &grid));
  ol_event_handle_t done = NULL;
  REQUIRE_OK(olCreateEvent(queue, &done));
  CHECK_OK(olSyncEvent(done));
  bool complete = false;
  CHECK_OK(olGetEventInfo(done, OL_EVENT_INFO_IS_COMPLETE, sizeof complete, &complete));
  CHECK(complete);
  CHECK_OK(olMemcpy(queue, out, host, dy, device, N * sizeof(float)));
  CHECK_OK(olSyncQueue(queue));

  size_t wrong = 0;
  for (size_t i = 0; i < N; ++i)
    if (out[i] != a * x[i] + y[i] && wrong++ < 5)
      fprintf(stderr, "y[%zu] = %g, want %g\n", i, (double)out[i], (double)(a * x[i] + y[i]));
  CHECK_EQ(wrong, 0);

  /* Again, synchronously (NULL queue): y = a*x + (a*x + y). */
  CHECK_OK(olLaunchKernel(NULL, device, saxpy, &args, sizeof args, &grid));
  CHECK_OK(olMemcpy(NULL, out, host, dy, device, N * sizeof(float)));
  wrong = 0;
  for (size_t i = 0; i < N; ++i) {
    float want = a * x[i] + (a * x[i] + y[i]);
    if (out[i] != want && wrong++ < 5)
      fprintf(stderr, "second pass: y[%zu] = %g, want %g\n", i, (double)out[i], (double)want);
  }
  CHECK_EQ(wrong, 0);

  CHECK_OK(olDestroyEvent(done));
  CHECK_OK(olDestroyQueue(queue));
  CHECK_OK(olMemFree(dx));
  CHECK_OK(olMemFree(dy));
  CHECK_OK(olDestroyProgram(program));
  CHECK_OK(olShutDown());
  free(x);
  free(y);
  free(out);
  return test_finish("test_kernel_saxpy");
}
