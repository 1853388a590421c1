/* The queue, event, program, symbol and kernel functions before olInit, and after the
 * last olShutDown with the handles of the finished session: OL_ERRC_UNINITIALIZED,
 * whatever the arguments. argv[1]: kernels/host_abi.c's program. The sessions use the
 * device OFFLOAD_TEST_DEVICE names (kernel_test.h), and its image of the program. */
#include "kernel_test.h"

typedef struct {
  ol_device_handle_t device;
  ol_queue_handle_t queue;
  ol_event_handle_t event;
  ol_program_handle_t program;
  ol_symbol_handle_t kernel;
  const unsigned char *image;
  size_t image_size;
} handles_t;

static void never(void *user_data) {
  (void)user_data;
  CHECK(!"a host function ran while the library was not initialised");
}

static void all_uninitialised(const handles_t *h) {
  ol_code_location_t loc = {"all_uninitialised", __FILE__, __LINE__, 1};
  ol_queue_handle_t queue = NULL;
  ol_event_handle_t event = NULL, events[1] = {h->event};
  ol_program_handle_t program = NULL;
  ol_symbol_handle_t symbol = NULL;
  size_t size = 0;
  bool flag = false;
  float ms = 0;
  uint32_t count = 0;
  char buffer[64];
  ol_kernel_launch_size_args_t grid = grid_1d(1, 1);
  int value = 0; /* bump's argument buffer */
  ol_kernel_launch_prop_t props[1] = {OL_KERNEL_LAUNCH_PROP_END};

  CHECK_ERR(UNINITIALIZED, olCreateQueue(h->device, &queue));
  CHECK_ERR(UNINITIALIZED, olCreateQueueWithCodeLoc(h->device, &queue, &loc));
  CHECK_ERR(UNINITIALIZED, olCreateQueue(NULL, NULL));
  CHECK(queue == NULL);
  CHECK_ERR(UNINITIALIZED, olDestroyQueue(h->queue));
  CHECK_ERR(UNINITIALIZED, olDestroyQueueWithCodeLoc(h->queue, &loc));
  CHECK_ERR(UNINITIALIZED, olSyncQueue(h->queue));
  CHECK_ERR(UNINITIALIZED, olSyncQueueWithCodeLoc(h->queue, &loc));
  CHECK_ERR(UNINITIALIZED, olSyncQueue(NULL));
  CHECK_ERR(UNINITIALIZED, olWaitEvents(h->queue, events, 1));
  CHECK_ERR(UNINITIALIZED, olWaitEventsWithCodeLoc(h->queue, events, 1, &loc));
  CHECK_ERR(UNINITIALIZED, olLaunchHostFunction(h->queue, never, NULL));
  CHECK_ERR(UNINITIALIZED, olLaunchHostFunctionWithCodeLoc(h->queue, never, NULL, &loc));
  CHECK_ERR(UNINITIALIZED, olGetQueueInfo(h->queue, OL_QUEUE_INFO_EMPTY, sizeof flag, &flag));
  CHECK_ERR(UNINITIALIZED,
            olGetQueueInfoWithCodeLoc(h->queue, OL_QUEUE_INFO_EMPTY, sizeof flag, &flag, &loc));
  CHECK_ERR(UNINITIALIZED, olGetQueueInfoSize(h->queue, OL_QUEUE_INFO_EMPTY, &size));
  CHECK_ERR(UNINITIALIZED,
            olGetQueueInfoSizeWithCodeLoc(h->queue, OL_QUEUE_INFO_EMPTY, &size, &loc));
  CHECK_ERR(UNINITIALIZED, olGetQueueInfo(NULL, 99, 0, NULL));

  CHECK_ERR(UNINITIALIZED, olCreateEvent(h->queue, &event));
  CHECK_ERR(UNINITIALIZED, olCreateEventWithCodeLoc(h->queue, &event, &loc));
  CHECK(event == NULL);
  CHECK_ERR(UNINITIALIZED, olDestroyEvent(h->event));
  CHECK_ERR(UNINITIALIZED, olDestroyEventWithCodeLoc(h->event, &loc));
  CHECK_ERR(UNINITIALIZED, olSyncEvent(h->event));
  CHECK_ERR(UNINITIALIZED, olSyncEventWithCodeLoc(h->event, &loc));
  CHECK_ERR(UNINITIALIZED,
            olGetEventInfo(h->event, OL_EVENT_INFO_IS_COMPLETE, sizeof flag, &flag));
  CHECK_ERR(UNINITIALIZED, olGetEventInfoWithCodeLoc(h->event, OL_EVENT_INFO_IS_COMPLETE,
                                                     sizeof flag, &flag, &loc));
  CHECK_ERR(UNINITIALIZED, olGetEventInfoSize(h->event, OL_EVENT_INFO_QUEUE, &size));
  CHECK_ERR(UNINITIALIZED,
            olGetEventInfoSizeWithCodeLoc(h->event, OL_EVENT_INFO_QUEUE, &size, &loc));
  CHECK_ERR(UNINITIALIZED, olGetEventElapsedTime(h->event, h->event, &ms));
  CHECK_ERR(UNINITIALIZED, olGetEventElapsedTimeWithCodeLoc(h->event, h->event, &ms, &loc));
  CHECK_ERR(UNINITIALIZED, olGetEventElapsedTime(NULL, NULL, NULL));

  CHECK_ERR(UNINITIALIZED, olCreateProgram(h->device, h->image, h->image_size, &program));
  CHECK_ERR(UNINITIALIZED,
            olCreateProgramWithCodeLoc(h->device, h->image, h->image_size, &program, &loc));
  CHECK_ERR(UNINITIALIZED, olCreateProgram(NULL, NULL, 0, NULL));
  CHECK(program == NULL);
  CHECK_ERR(UNINITIALIZED, olIsValidBinary(h->device, h->image, h->image_size, &flag));
  CHECK_ERR(UNINITIALIZED,
            olIsValidBinaryWithCodeLoc(h->device, h->image, h->image_size, &flag, &loc));
  CHECK_ERR(UNINITIALIZED, olDestroyProgram(h->program));
  CHECK_ERR(UNINITIALIZED, olDestroyProgramWithCodeLoc(h->program, &loc));
  CHECK_ERR(UNINITIALIZED, olGetSymbol(h->program, "bump", OL_SYMBOL_KIND_KERNEL, &symbol));
  CHECK_ERR(UNINITIALIZED,
            olGetSymbolWithCodeLoc(h->program, "bump", OL_SYMBOL_KIND_KERNEL, &symbol, &loc));
  CHECK_ERR(UNINITIALIZED, olGetSymbol(NULL, NULL, 99, NULL));
  CHECK(symbol == NULL);
  CHECK_ERR(UNINITIALIZED, olGetSymbolInfo(h->kernel, OL_SYMBOL_INFO_NAME, sizeof buffer, buffer));
  CHECK_ERR(UNINITIALIZED, olGetSymbolInfoWithCodeLoc(h->kernel, OL_SYMBOL_INFO_NAME,
                                                      sizeof buffer, buffer, &loc));
  CHECK_ERR(UNINITIALIZED, olGetSymbolInfoSize(h->kernel, OL_SYMBOL_INFO_NAME, &size));
  CHECK_ERR(UNINITIALIZED,
            olGetSymbolInfoSizeWithCodeLoc(h->kernel, OL_SYMBOL_INFO_NAME, &size, &loc));

  CHECK_ERR(UNINITIALIZED,
            olLaunchKernel(h->queue, h->device, h->kernel, &value, sizeof value, &grid));
  CHECK_ERR(UNINITIALIZED, olLaunchKernelWithCodeLoc(h->queue, h->device, h->kernel, &value,
                                                     sizeof value, &grid, &loc));
  CHECK_ERR(UNINITIALIZED, olLaunchKernel(NULL, NULL, NULL, NULL, 5, NULL));
  CHECK_ERR(UNINITIALIZED, olLaunchKernelWithProperties(h->queue, h->device, h->kernel, &value,
                                                        sizeof value, &grid, props));
  CHECK_ERR(UNINITIALIZED, olLaunchKernelWithPropertiesWithCodeLoc(
                               h->queue, h->device, h->kernel, &value, sizeof value, &grid,
                               props, &loc));
  CHECK_ERR(UNINITIALIZED, olLaunchKernelWithProperties(NULL, NULL, NULL, NULL, 5, NULL, NULL));
  CHECK_ERR(UNINITIALIZED, olCalculateOptimalOccupancy(h->device, h->kernel, 0, &size));
  CHECK_ERR(UNINITIALIZED,
            olCalculateOptimalOccupancyWithCodeLoc(h->device, h->kernel, 0, &size, &loc));
  CHECK_ERR(UNINITIALIZED,
            olGetKernelMaxCooperativeGroupCount(h->device, h->kernel, &grid, &count));
  CHECK_ERR(UNINITIALIZED, olGetKernelMaxCooperativeGroupCountWithCodeLoc(h->device, h->kernel,
                                                                          &grid, &count, &loc));
  CHECK_EQ(value, 0);
}

int main(int argc, char **argv) {
  REQUIRE(argc == 2);
  handles_t h;
  memset(&h, 0, sizeof h);
  size_t size = 0;
  unsigned char *image = read_file(argv[1], &size);
  h.image = image;
  h.image_size = size;

  /* Before any olInit: garbage handles. */
  h.device = GARBAGE_HANDLE(ol_device_handle_t);
  h.queue = GARBAGE_HANDLE(ol_queue_handle_t);
  h.event = GARBAGE_HANDLE(ol_event_handle_t);
  h.program = GARBAGE_HANDLE(ol_program_handle_t);
  h.kernel = GARBAGE_HANDLE(ol_symbol_handle_t);
  all_uninitialised(&h);

  /* After a session: its real handles, now stale. The image is the device's now (before
   * olInit no image is looked at, and the device is not known). */
  REQUIRE_OK(olInit());
  h.device = test_device();
  free(image);
  image = read_image(h.device, argv[1], &size);
  h.image = image;
  h.image_size = size;
  REQUIRE_OK(olCreateQueue(h.device, &h.queue));
  REQUIRE_OK(olCreateEvent(h.queue, &h.event));
  REQUIRE_OK(olCreateProgram(h.device, image, size, &h.program));
  REQUIRE_OK(olGetSymbol(h.program, "bump", OL_SYMBOL_KIND_KERNEL, &h.kernel));
  REQUIRE_OK(olShutDown());
  all_uninitialised(&h);

  /* And a new session works. */
  REQUIRE_OK(olInit());
  ol_device_handle_t device = test_device();
  ol_program_handle_t program = NULL;
  CHECK_OK(olCreateProgram(device, image, size, &program));
  CHECK_OK(olDestroyProgram(program));
  CHECK_OK(olShutDown());
  free(image);
  return test_finish("test_kernel_uninitialized");
}
