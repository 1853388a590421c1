/* The error code LLVM 22.1 answers for each bad input (its OffloadAPI unit tests and the
 * `Returns` lists of its API definitions), function by function, in LLVM's order of
 * checks: not initialised, then the size conditions, then NULL handles, then NULL
 * pointers, then everything else. Written against LLVM's include name, so it reads as a
 * program written for LLVM's header. Run per device: argv[1] is a host program
 * (kernels/host_abi.c; on a CUDA device its PTX, kernel_test.h's image_path); argv[2],
 * if given, picks the accelerator (non-host device) of that index, else the device
 * OFFLOAD_TEST_DEVICE names (kernel_test.h) is tested. */
#include <offload/OffloadAPI.h>

#include "kernel_test.h"
#include "kernels/host_abi.h"

static void before_init(void) {
  /* Everything but olInit is UNINITIALIZED first, whatever else is wrong. */
  CHECK_ERR(UNINITIALIZED, olShutDown());
  CHECK_ERR(UNINITIALIZED, olGetDeviceInfo(NULL, OL_DEVICE_INFO_TYPE, 0, NULL));
  CHECK_ERR(UNINITIALIZED, olMemFree(NULL));
  CHECK_ERR(UNINITIALIZED, olMemAlloc(NULL, OL_ALLOC_TYPE_HOST, 0, NULL));
  CHECK_ERR(UNINITIALIZED, olWaitEvents(NULL, NULL, 0));
  CHECK_ERR(UNINITIALIZED, olIsValidBinary(NULL, NULL, 0, NULL));
}

static void init_is_counted(void) {
  CHECK_OK(olInit());
  CHECK_OK(olInit());
  CHECK_OK(olShutDown());
  CHECK_OK(olShutDown());
  CHECK_ERR(UNINITIALIZED, olShutDown());
}

static void info_getters(ol_device_handle_t device) {
  ol_platform_handle_t platform = NULL;
  REQUIRE_OK(olGetDeviceInfo(device, OL_DEVICE_INFO_PLATFORM, sizeof platform, &platform));
  char buf[256];
  size_t size = 0;
  /* PropSize == 0 is checked before the NULL handle, the key and the NULL value. */
  CHECK_ERR(INVALID_SIZE, olGetPlatformInfo(NULL, (ol_platform_info_t)99, 0, NULL));
  CHECK_ERR(INVALID_SIZE, olGetDeviceInfo(NULL, OL_DEVICE_INFO_FORCE_UINT32, 0, NULL));
  CHECK_ERR(INVALID_NULL_HANDLE, olGetPlatformInfo(NULL, OL_PLATFORM_INFO_NAME, 8, buf));
  CHECK_ERR(INVALID_NULL_HANDLE, olGetDeviceInfo(NULL, OL_DEVICE_INFO_NAME, 8, buf));
  CHECK_ERR(INVALID_NULL_POINTER, olGetPlatformInfo(platform, OL_PLATFORM_INFO_NAME, 8, NULL));
  CHECK_ERR(INVALID_NULL_POINTER, olGetDeviceInfo(device, OL_DEVICE_INFO_NAME, 8, NULL));
  CHECK_ERR(INVALID_ENUMERATION,
            olGetPlatformInfo(platform, OL_PLATFORM_INFO_LAST, sizeof buf, buf));
  CHECK_ERR(INVALID_ENUMERATION,
            olGetDeviceInfo(device, OL_DEVICE_INFO_FORCE_UINT32, sizeof buf, buf));
  CHECK_ERR(INVALID_ENUMERATION, olGetDeviceInfoSize(device, OL_DEVICE_INFO_LAST, &size));
  CHECK_ERR(INVALID_NULL_POINTER, olGetDeviceInfoSize(device, OL_DEVICE_INFO_NAME, NULL));
  CHECK_ERR(INVALID_NULL_HANDLE, olGetPlatformInfoSize(NULL, OL_PLATFORM_INFO_NAME, &size));

  /* Strings are exactly strlen + 1 bytes; one byte less is too small. */
  REQUIRE_OK(olGetDeviceInfoSize(device, OL_DEVICE_INFO_NAME, &size));
  REQUIRE(size > 1 && size <= sizeof buf);
  CHECK_ERR(INVALID_SIZE, olGetDeviceInfo(device, OL_DEVICE_INFO_NAME, size - 1, buf));
  memset(buf, '#', sizeof buf);
  CHECK_OK(olGetDeviceInfo(device, OL_DEVICE_INFO_NAME, sizeof buf, buf));
  CHECK_EQ(strlen(buf), size - 1);
  CHECK(buf[size] == '#'); /* nothing written past the answer */
  ol_device_type_t type;
  CHECK_ERR(INVALID_SIZE, olGetDeviceInfo(device, OL_DEVICE_INFO_TYPE, sizeof type - 1, &type));

  /* Every key of LLVM's header answers, with the size its type has. */
  static const struct {
    ol_device_info_t key;
    size_t size; /* 0: a string */
  } keys[] = {
      {OL_DEVICE_INFO_TYPE, 4}, {OL_DEVICE_INFO_PLATFORM, sizeof(void *)},
      {OL_DEVICE_INFO_NAME, 0}, {OL_DEVICE_INFO_PRODUCT_NAME, 0}, {OL_DEVICE_INFO_UID, 0},
      {OL_DEVICE_INFO_VENDOR, 0}, {OL_DEVICE_INFO_DRIVER_VERSION, 0},
      {OL_DEVICE_INFO_MAX_WORK_GROUP_SIZE, 4},
      {OL_DEVICE_INFO_MAX_WORK_GROUP_SIZE_PER_DIMENSION, 12},
      {OL_DEVICE_INFO_MAX_WORK_SIZE, 4}, {OL_DEVICE_INFO_MAX_WORK_SIZE_PER_DIMENSION, 12},
      {OL_DEVICE_INFO_VENDOR_ID, 4}, {OL_DEVICE_INFO_NUM_COMPUTE_UNITS, 4},
      {OL_DEVICE_INFO_MAX_CLOCK_FREQUENCY, 4}, {OL_DEVICE_INFO_MEMORY_CLOCK_RATE, 4},
      {OL_DEVICE_INFO_ADDRESS_BITS, 4}, {OL_DEVICE_INFO_MAX_MEM_ALLOC_SIZE, 8},
      {OL_DEVICE_INFO_GLOBAL_MEM_SIZE, 8}, {OL_DEVICE_INFO_WORK_GROUP_LOCAL_MEM_SIZE, 8},
      {OL_DEVICE_INFO_SINGLE_FP_CONFIG, 4}, {OL_DEVICE_INFO_DOUBLE_FP_CONFIG, 4},
      {OL_DEVICE_INFO_HALF_FP_CONFIG, 4}, {OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_CHAR, 4},
      {OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_SHORT, 4}, {OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_INT, 4},
      {OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_LONG, 4},
      {OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_FLOAT, 4},
      {OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_DOUBLE, 4},
      {OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_HALF, 4}};
  CHECK_EQ(sizeof keys / sizeof keys[0], OL_DEVICE_INFO_LAST);
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; ++i) {
    size_t got = 0;
    if (!CHECK_OK(olGetDeviceInfoSize(device, keys[i].key, &got)))
      continue;
    if (keys[i].size != 0)
      CHECK_EQ(got, keys[i].size);
    REQUIRE(got <= sizeof buf);
    CHECK_OK(olGetDeviceInfo(device, keys[i].key, got, buf));
  }
  /* LLVM's tests want these above 0 on every device. */
  static const ol_device_info_t positive[] = {
      OL_DEVICE_INFO_MAX_WORK_GROUP_SIZE, OL_DEVICE_INFO_NUM_COMPUTE_UNITS,
      OL_DEVICE_INFO_SINGLE_FP_CONFIG, OL_DEVICE_INFO_DOUBLE_FP_CONFIG,
      OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_CHAR, OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_SHORT,
      OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_INT, OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_LONG,
      OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_FLOAT, OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_DOUBLE,
      OL_DEVICE_INFO_ADDRESS_BITS};
  for (size_t i = 0; i < sizeof positive / sizeof positive[0]; ++i)
    CHECK(device_u32(device, positive[i]) > 0);
}

static void memory(ol_device_handle_t device, ol_device_handle_t host) {
  void *p = NULL;
  CHECK_ERR(INVALID_SIZE, olMemAlloc(NULL, OL_ALLOC_TYPE_DEVICE, 0, NULL));
  CHECK_ERR(INVALID_NULL_HANDLE, olMemAlloc(NULL, OL_ALLOC_TYPE_DEVICE, 64, &p));
  CHECK_ERR(INVALID_NULL_POINTER, olMemAlloc(device, OL_ALLOC_TYPE_DEVICE, 64, NULL));
  REQUIRE_OK(olMemAlloc(device, OL_ALLOC_TYPE_DEVICE, 1024, &p));

  /* olMemFree: NULL, unknown, interior and freed pointers. */
  int on_stack = 0;
  CHECK_ERR(INVALID_NULL_POINTER, olMemFree(NULL));
  CHECK_ERR(INVALID_ARGUMENT, olMemFree(&on_stack));
  CHECK_ERR(INVALID_ARGUMENT, olMemFree((char *)p + 1));

  /* olGetMemInfo: an unknown pointer is NOT_FOUND before the key and size are looked at;
   * an interior pointer is fine. */
  void *base = NULL;
  size_t size = 0;
  CHECK_ERR(INVALID_SIZE, olGetMemInfo(NULL, OL_MEM_INFO_BASE, 0, NULL));
  CHECK_ERR(INVALID_NULL_POINTER, olGetMemInfo(NULL, OL_MEM_INFO_BASE, 8, &base));
  CHECK_ERR(INVALID_NULL_POINTER, olGetMemInfo(p, OL_MEM_INFO_BASE, 8, NULL));
  CHECK_ERR(NOT_FOUND, olGetMemInfo(&on_stack, OL_MEM_INFO_FORCE_UINT32, 1, &base));
  CHECK_ERR(NOT_FOUND, olGetMemInfoSize(&on_stack, OL_MEM_INFO_BASE, &size));
  CHECK_ERR(INVALID_ENUMERATION, olGetMemInfo(p, OL_MEM_INFO_FORCE_UINT32, 8, &base));
  CHECK_ERR(INVALID_ENUMERATION, olGetMemInfoSize(p, OL_MEM_INFO_LAST, &size));
  CHECK_ERR(INVALID_SIZE, olGetMemInfo(p, OL_MEM_INFO_DEVICE, 7, &base));
  CHECK_ERR(INVALID_NULL_POINTER, olGetMemInfoSize(p, OL_MEM_INFO_BASE, NULL));
  CHECK_OK(olGetMemInfo((char *)p + 123, OL_MEM_INFO_BASE, sizeof base, &base));
  CHECK(base == p);
  CHECK_OK(olGetMemInfoSize(p, OL_MEM_INFO_TYPE, &size));
  CHECK_EQ(size, sizeof(ol_alloc_type_t));

  /* olMemcpy: handles before pointers; size 0 is a copy of nothing. */
  char bytes[16] = {0};
  CHECK_ERR(INVALID_NULL_HANDLE, olMemcpy(NULL, NULL, NULL, NULL, NULL, 0));
  CHECK_ERR(INVALID_NULL_HANDLE, olMemcpy(NULL, p, device, bytes, NULL, 8));
  CHECK_ERR(INVALID_NULL_POINTER, olMemcpy(NULL, NULL, device, bytes, host, 0));
  CHECK_ERR(INVALID_NULL_POINTER, olMemcpy(NULL, p, device, NULL, host, 0));
  CHECK_OK(olMemcpy(NULL, bytes, host, bytes + 8, host, 0));
  CHECK_OK(olMemcpy(NULL, p, device, bytes, host, sizeof bytes));

  /* olMemFill: the size conditions come first. */
  const uint32_t pattern = 0xabcdef01u;
  CHECK_ERR(INVALID_SIZE, olMemFill(NULL, NULL, 3, NULL, 8));
  CHECK_ERR(INVALID_SIZE, olMemFill(NULL, p, 2, &pattern, 1025));
  CHECK_ERR(INVALID_SIZE, olMemFill(NULL, p, 0, &pattern, 8)); /* LLVM divides by 0 here */
  CHECK_ERR(INVALID_NULL_POINTER, olMemFill(NULL, NULL, 4, &pattern, 8));
  CHECK_ERR(INVALID_NULL_POINTER, olMemFill(NULL, p, 4, NULL, 8));
  CHECK_OK(olMemFill(NULL, p, 4, &pattern, 0));
  CHECK_OK(olMemFill(NULL, p, 4, &pattern, 1024));

  /* olMemRegister / olMemUnregister. */
  int arr[50];
  void *pinned = NULL, *pinned2 = NULL;
  CHECK_ERR(INVALID_SIZE, olMemRegister(NULL, NULL, 0, 0, NULL));
  CHECK_ERR(INVALID_NULL_HANDLE, olMemRegister(NULL, arr, sizeof arr, 0, &pinned));
  CHECK_ERR(INVALID_NULL_POINTER, olMemRegister(device, NULL, sizeof arr, 0, &pinned));
  CHECK_ERR(INVALID_NULL_POINTER, olMemRegister(device, arr, sizeof arr, 0, NULL));
  CHECK_ERR(INVALID_ARGUMENT, olMemUnregister(device, arr)); /* never registered */
  CHECK_ERR(INVALID_NULL_HANDLE, olMemUnregister(NULL, arr));
  CHECK_ERR(INVALID_NULL_POINTER, olMemUnregister(device, NULL));
  if (CHECK_OK(olMemRegister(device, arr, sizeof arr, 0, &pinned))) {
    CHECK(pinned != NULL);
    CHECK_OK(olMemRegister(device, arr, sizeof arr, 0, &pinned2)); /* counted */
    CHECK_ERR(INVALID_ARGUMENT, olMemRegister(device, arr + 2, sizeof arr, 0, &pinned2));
    CHECK_OK(olMemUnregister(device, pinned));
    CHECK_OK(olMemUnregister(device, pinned));
    CHECK_ERR(INVALID_ARGUMENT, olMemUnregister(device, pinned));
  }
  CHECK_OK(olMemFree(p));
  CHECK_ERR(INVALID_ARGUMENT, olMemFree(p)); /* freed twice */
}

static void queues_and_events(ol_device_handle_t device) {
  ol_queue_handle_t queue = NULL;
  ol_event_handle_t event = NULL;
  CHECK_ERR(INVALID_NULL_HANDLE, olCreateQueue(NULL, &queue));
  CHECK_ERR(INVALID_NULL_POINTER, olCreateQueue(device, NULL));
  REQUIRE_OK(olCreateQueue(device, &queue));
  CHECK_ERR(INVALID_NULL_HANDLE, olSyncQueue(NULL));
  CHECK_ERR(INVALID_NULL_HANDLE, olDestroyQueue(NULL));
  CHECK_ERR(INVALID_NULL_HANDLE, olCreateEvent(NULL, &event));
  CHECK_ERR(INVALID_NULL_POINTER, olCreateEvent(queue, NULL));

  /* An event on an empty queue is complete at once and syncs any number of times. */
  REQUIRE_OK(olCreateEvent(queue, &event));
  bool complete = false;
  CHECK_OK(olGetEventInfo(event, OL_EVENT_INFO_IS_COMPLETE, sizeof complete, &complete));
  CHECK(complete);
  for (int i = 0; i < 10; ++i)
    CHECK_OK(olSyncEvent(event));
  CHECK_ERR(INVALID_NULL_HANDLE, olSyncEvent(NULL));
  CHECK_ERR(INVALID_NULL_HANDLE, olDestroyEvent(NULL));

  /* Info getters of queues and events. */
  size_t size = 0;
  ol_queue_handle_t of_event = NULL;
  CHECK_ERR(INVALID_SIZE, olGetEventInfo(NULL, OL_EVENT_INFO_QUEUE, 0, NULL));
  CHECK_ERR(INVALID_NULL_HANDLE, olGetEventInfo(NULL, OL_EVENT_INFO_QUEUE, 8, &of_event));
  CHECK_ERR(INVALID_NULL_POINTER, olGetEventInfo(event, OL_EVENT_INFO_QUEUE, 8, NULL));
  CHECK_ERR(INVALID_ENUMERATION, olGetEventInfo(event, OL_EVENT_INFO_FORCE_UINT32, 8, &of_event));
  CHECK_ERR(INVALID_SIZE, olGetEventInfo(event, OL_EVENT_INFO_QUEUE, 7, &of_event));
  CHECK_OK(olGetEventInfoSize(event, OL_EVENT_INFO_IS_COMPLETE, &size));
  CHECK_EQ(size, 1);
  CHECK_ERR(INVALID_SIZE, olGetQueueInfo(NULL, OL_QUEUE_INFO_DEVICE, 0, NULL));
  CHECK_ERR(INVALID_ENUMERATION, olGetQueueInfoSize(queue, OL_QUEUE_INFO_LAST, &size));
  CHECK_ERR(INVALID_NULL_POINTER, olGetQueueInfoSize(queue, OL_QUEUE_INFO_EMPTY, NULL));
  CHECK_OK(olGetQueueInfoSize(queue, OL_QUEUE_INFO_EMPTY, &size));
  CHECK_EQ(size, 1);

  /* olWaitEvents: NULL array even for no events; a NULL entry. */
  ol_event_handle_t none[1] = {NULL};
  CHECK_ERR(INVALID_NULL_HANDLE, olWaitEvents(NULL, &event, 1));
  CHECK_ERR(INVALID_NULL_POINTER, olWaitEvents(queue, NULL, 1));
  CHECK_ERR(INVALID_NULL_POINTER, olWaitEvents(queue, NULL, 0));
  CHECK_ERR(INVALID_NULL_HANDLE, olWaitEvents(queue, none, 1));
  CHECK_OK(olWaitEvents(queue, &event, 0));
  CHECK_OK(olWaitEvents(queue, &event, 1));

  /* olLaunchHostFunction: the queue is looked at first. */
  CHECK_ERR(INVALID_NULL_HANDLE, olLaunchHostFunction(NULL, NULL, NULL));
  CHECK_ERR(INVALID_NULL_POINTER, olLaunchHostFunction(queue, NULL, NULL));

  CHECK_OK(olSyncQueue(queue));
  CHECK_OK(olDestroyEvent(event));
  CHECK_OK(olDestroyQueue(queue));
}

static void programs_symbols_kernels(ol_device_handle_t device, const char *path) {
  size_t image_size = 0;
  unsigned char *image = read_image(device, path, &image_size);
  ol_program_handle_t program = NULL;
  bool valid = true;

  /* olIsValidBinary: size 0 is a clear "no"; errors leave Valid alone. */
  CHECK_ERR(INVALID_NULL_HANDLE, olIsValidBinary(NULL, image, image_size, &valid));
  CHECK_ERR(INVALID_NULL_POINTER, olIsValidBinary(device, NULL, 42, &valid));
  CHECK(valid);
  CHECK_ERR(INVALID_NULL_POINTER, olIsValidBinary(device, image, image_size, NULL));
  CHECK_OK(olIsValidBinary(device, image, 0, &valid));
  CHECK(!valid);
  CHECK_OK(olIsValidBinary(device, "not an image", 12, &valid));
  CHECK(!valid);

  /* olCreateProgram: a zero-size or foreign image is INVALID_BINARY, Program untouched. */
  CHECK_ERR(INVALID_NULL_HANDLE, olCreateProgram(NULL, image, image_size, &program));
  CHECK_ERR(INVALID_NULL_POINTER, olCreateProgram(device, NULL, image_size, &program));
  CHECK_ERR(INVALID_NULL_POINTER, olCreateProgram(device, image, image_size, NULL));
  CHECK_ERR(INVALID_BINARY, olCreateProgram(device, image, 0, &program));
  CHECK_ERR(INVALID_BINARY, olCreateProgram(device, "not an offload binary", 21, &program));
  CHECK(program == NULL);
  if (!device_is_host(device) && !device_is_cuda(device)) {
    /* The image is a host program; this accelerator's own images come with its backend. */
    CHECK_OK(olIsValidBinary(device, image, image_size, &valid));
    if (!valid) {
      printf("no program for this device: symbol and kernel checks skipped\n");
      free(image);
      return;
    }
  }
  REQUIRE_OK(olCreateProgram(device, image, image_size, &program));
  free(image);
  CHECK_ERR(INVALID_NULL_HANDLE, olDestroyProgram(NULL));

  /* olGetSymbol: the same name gives the same handle; unknown names, bad kinds. */
  ol_symbol_handle_t kernel = NULL, again = NULL, global = NULL;
  CHECK_ERR(INVALID_NULL_HANDLE, olGetSymbol(NULL, "saxpy", OL_SYMBOL_KIND_FORCE_UINT32, NULL));
  CHECK_ERR(INVALID_NULL_POINTER, olGetSymbol(program, NULL, OL_SYMBOL_KIND_KERNEL, &kernel));
  CHECK_ERR(INVALID_NULL_POINTER, olGetSymbol(program, "saxpy", OL_SYMBOL_KIND_KERNEL, NULL));
  CHECK_ERR(INVALID_ENUMERATION,
            olGetSymbol(program, "saxpy", OL_SYMBOL_KIND_FORCE_UINT32, &kernel));
  CHECK_ERR(NOT_FOUND, olGetSymbol(program, "no_such_kernel", OL_SYMBOL_KIND_KERNEL, &kernel));
  CHECK_ERR(NOT_FOUND,
            olGetSymbol(program, "no_such_global", OL_SYMBOL_KIND_GLOBAL_VARIABLE, &global));
  REQUIRE_OK(olGetSymbol(program, "saxpy", OL_SYMBOL_KIND_KERNEL, &kernel));
  REQUIRE_OK(olGetSymbol(program, "saxpy", OL_SYMBOL_KIND_KERNEL, &again));
  CHECK(kernel == again);
  REQUIRE_OK(olGetSymbol(program, "counter", OL_SYMBOL_KIND_GLOBAL_VARIABLE, &global));
  REQUIRE_OK(olGetSymbol(program, "counter", OL_SYMBOL_KIND_GLOBAL_VARIABLE, &again));
  CHECK(global == again);

  /* olGetSymbolInfo[Size]: global-only keys asked of a kernel are SYMBOL_KIND. */
  size_t size = 0;
  void *address = NULL;
  ol_symbol_kind_t kind;
  CHECK_ERR(INVALID_SIZE, olGetSymbolInfo(NULL, OL_SYMBOL_INFO_FORCE_UINT32, 0, NULL));
  CHECK_ERR(INVALID_NULL_HANDLE, olGetSymbolInfo(NULL, OL_SYMBOL_INFO_KIND, 4, &kind));
  CHECK_ERR(INVALID_NULL_POINTER, olGetSymbolInfo(kernel, OL_SYMBOL_INFO_KIND, 4, NULL));
  CHECK_ERR(INVALID_SIZE, olGetSymbolInfo(kernel, OL_SYMBOL_INFO_KIND, 3, &kind));
  CHECK_ERR(INVALID_ENUMERATION, olGetSymbolInfo(kernel, OL_SYMBOL_INFO_FORCE_UINT32, 4, &kind));
  CHECK_ERR(SYMBOL_KIND,
            olGetSymbolInfo(kernel, OL_SYMBOL_INFO_GLOBAL_VARIABLE_ADDRESS, 8, &address));
  CHECK_ERR(SYMBOL_KIND, olGetSymbolInfoSize(kernel, OL_SYMBOL_INFO_GLOBAL_VARIABLE_SIZE, &size));
  CHECK_OK(olGetSymbolInfoSize(global, OL_SYMBOL_INFO_GLOBAL_VARIABLE_ADDRESS, &size));
  CHECK_EQ(size, sizeof(void *));
  CHECK_OK(olGetSymbolInfo(global, OL_SYMBOL_INFO_KIND, sizeof kind, &kind));
  CHECK_EQ(kind, OL_SYMBOL_KIND_GLOBAL_VARIABLE);

  /* olLaunchKernel: a NULL buffer with a size comes first of all. */
  /* The kernel writes y: memory of the device, which the host reads too. */
  float *x = shared_alloc(device, 4 * sizeof *x), *y = shared_alloc(device, 4 * sizeof *y);
  for (int i = 0; i < 4; ++i) {
    x[i] = (float)(i + 1);
    y[i] = 0.0f;
  }
  struct saxpy_args args = {2.0f, x, y, 4};
  ol_kernel_launch_size_args_t grid = grid_1d(1, 4);
  CHECK_ERR(INVALID_ARGUMENT, olLaunchKernel(NULL, NULL, NULL, NULL, 8, NULL));
  CHECK_ERR(INVALID_NULL_HANDLE, olLaunchKernel(NULL, NULL, kernel, &args, sizeof args, &grid));
  CHECK_ERR(INVALID_NULL_HANDLE, olLaunchKernel(NULL, device, NULL, &args, sizeof args, &grid));
  CHECK_ERR(INVALID_NULL_POINTER,
            olLaunchKernel(NULL, device, kernel, &args, sizeof args, NULL));
  CHECK_ERR(SYMBOL_KIND, olLaunchKernel(NULL, device, global, &args, sizeof args, &grid));
  CHECK_OK(olLaunchKernel(NULL, device, kernel, &args, sizeof args, &grid));
  CHECK(y[3] == 8.0f);

  /* olCalculateOptimalOccupancy. */
  size_t group = 0;
  CHECK_ERR(INVALID_NULL_HANDLE, olCalculateOptimalOccupancy(NULL, NULL, 0, &group));
  CHECK_ERR(INVALID_NULL_HANDLE, olCalculateOptimalOccupancy(device, NULL, 0, &group));
  CHECK_ERR(INVALID_NULL_POINTER, olCalculateOptimalOccupancy(device, kernel, 0, NULL));
  CHECK_ERR(SYMBOL_KIND, olCalculateOptimalOccupancy(device, global, 0, &group));
  CHECK_OK(olCalculateOptimalOccupancy(device, kernel, 0, &group));
  CHECK(group > 0);

  CHECK_OK(olMemFree(x));
  CHECK_OK(olMemFree(y));
  CHECK_OK(olDestroyProgram(program));
}

/* The device to test: accelerator number `which` (counting devices that are not the host),
 * or the device OFFLOAD_TEST_DEVICE names. An accelerator that is not here skips the
 * test. */
static ol_device_handle_t device_to_test(const char *which) {
  if (which == NULL)
    return test_device();
  device_list_t list = all_devices();
  size_t wanted = (size_t)strtoul(which, NULL, 10), seen = 0;
  for (size_t i = 0; i < list.count; ++i)
    if (device_type(list.devices[i]) != OL_DEVICE_TYPE_HOST && seen++ == wanted)
      return list.devices[i];
  printf("skipped: no accelerator %zu (this machine has %zu)\n", wanted, seen);
  exit(TEST_SKIP_CODE);
}

int main(int argc, char **argv) {
  REQUIRE(argc >= 2);
  before_init();
  init_is_counted();
  REQUIRE_OK(olInit());
  ol_device_handle_t device = device_to_test(argc >= 3 ? argv[2] : NULL);
  ol_device_handle_t host = host_device();
  CHECK_ERR(INVALID_NULL_POINTER, olIterateDevices(NULL, NULL));
  info_getters(device);
  memory(device, host);
  queues_and_events(device);
  programs_symbols_kernels(device, argv[1]);
  REQUIRE_OK(olShutDown());
  return test_finish("test_llvm_error_codes");
}
