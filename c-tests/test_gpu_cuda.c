/* What only a GPU shows (CUDA devices; skipped with 77 where there is none): the PTX
 * compiler's error text in Details, an image for another SM refused with a sentence that
 * names both, pageable and pinned copies of odd sizes and offsets, copies between two
 * GPUs where there are two, ordering across queues through events, and a kernel fault
 * reported as an error of its queue (last: a fault spoils the device's context). */
#include "offload_test.h"

/* Hand-written PTX (no CUDA toolkit here): `fault` stores to address 0. */
static const char fault_ptx[] = ".version 6.0\n.target sm_60\n.address_size 64\n"
                                ".visible .entry fault()\n{\n"
                                "\t.reg .b64 %rd<2>;\n\t.reg .b32 %r<2>;\n"
                                "\tmov.u64 %rd1, 0;\n\tmov.u32 %r1, 1;\n"
                                "\tst.global.u32 [%rd1], %r1;\n\tret;\n}\n";

static const char broken_ptx[] = ".version 6.0\n.target sm_60\n.address_size 64\n"
                                 ".visible .entry broken()\n{\n\tthis is not ptx;\n}\n";

static const char future_ptx[] = ".version 6.0\n.target sm_999\n.address_size 64\n"
                                 ".visible .entry later()\n{\n\tret;\n}\n";

static void programs(ol_device_handle_t gpu) {
  ol_program_handle_t program = NULL;
  CHECK_DETAILS(INVALID_BINARY, "CUDA_ERROR_INVALID_PTX",
                olCreateProgram(gpu, broken_ptx, sizeof broken_ptx, &program));
  CHECK(program == NULL);
  CHECK_DETAILS(INVALID_BINARY, "sm_999",
                olCreateProgram(gpu, future_ptx, sizeof future_ptx, &program));
  /* A PTX program loads and unloads (LLVM 22 cannot destroy one). */
  REQUIRE_OK(olCreateProgram(gpu, fault_ptx, sizeof fault_ptx, &program));
  CHECK_OK(olDestroyProgram(program));
}

/* Host -> device -> host through `queue`, at an odd offset, from pageable or pinned host
 * memory; the bytes must come back. */
static void round_trip(ol_device_handle_t gpu, ol_device_handle_t host, ol_queue_handle_t queue,
                       bool pinned, size_t size, size_t offset) {
  unsigned char *src = NULL, *dst = NULL;
  if (pinned) {
    REQUIRE_OK(olMemAlloc(gpu, OL_ALLOC_TYPE_HOST, size + offset, (void **)&src));
    REQUIRE_OK(olMemAlloc(gpu, OL_ALLOC_TYPE_HOST, size + offset, (void **)&dst));
  } else {
    src = malloc(size + offset);
    dst = malloc(size + offset);
    REQUIRE(src != NULL && dst != NULL);
  }
  for (size_t i = 0; i < size + offset; ++i)
    src[i] = (unsigned char)(i * 7 + size);
  memset(dst, 0, size + offset);
  unsigned char *device = NULL;
  REQUIRE_OK(olMemAlloc(gpu, OL_ALLOC_TYPE_DEVICE, size + offset, (void **)&device));
  CHECK_OK(olMemcpy(queue, device + offset, gpu, src + offset, host, size));
  CHECK_OK(olMemcpy(queue, dst + offset, host, device + offset, gpu, size));
  CHECK_OK(olSyncQueue(queue));
  CHECK(memcmp(dst + offset, src + offset, size) == 0);
  CHECK_OK(olMemFree(device));
  if (pinned) {
    CHECK_OK(olMemFree(src));
    CHECK_OK(olMemFree(dst));
  } else {
    free(src);
    free(dst);
  }
}

static void copies(ol_device_handle_t gpu, ol_device_handle_t host) {
  ol_queue_handle_t queue;
  REQUIRE_OK(olCreateQueue(gpu, &queue));
  static const size_t sizes[] = {1, 3, 4097, (1u << 20) + 5};
  static const size_t offsets[] = {0, 1, 7};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s)
    for (size_t o = 0; o < sizeof offsets / sizeof offsets[0]; ++o)
      for (int pinned = 0; pinned < 2; ++pinned)
        round_trip(gpu, host, queue, pinned, sizes[s], offsets[o]);
  CHECK_OK(olDestroyQueue(queue));
}

/* Queue b copies what queue a fills, after an event of a: the fill must be complete. */
static void ordering(ol_device_handle_t gpu, ol_device_handle_t host) {
  const size_t size = 64u << 20;
  ol_queue_handle_t a, b;
  ol_event_handle_t filled;
  unsigned char *device = NULL, *back = malloc(size);
  REQUIRE(back != NULL);
  REQUIRE_OK(olCreateQueue(gpu, &a));
  REQUIRE_OK(olCreateQueue(gpu, &b));
  REQUIRE_OK(olMemAlloc(gpu, OL_ALLOC_TYPE_DEVICE, size, (void **)&device));
  const uint32_t pattern = 0x5a5a5a5au;
  CHECK_OK(olMemFill(a, device, sizeof pattern, &pattern, size));
  CHECK_OK(olCreateEvent(a, &filled));
  CHECK_OK(olWaitEvents(b, &filled, 1));
  CHECK_OK(olMemcpy(b, back, host, device, gpu, size));
  CHECK_OK(olSyncQueue(b));
  bool all = true;
  for (size_t i = 0; i < size; ++i)
    all = all && back[i] == 0x5a;
  CHECK(all);
  float ms = -1;
  ol_event_handle_t done;
  CHECK_OK(olCreateEvent(b, &done));
  CHECK_OK(olGetEventElapsedTime(filled, done, &ms));
  CHECK(ms >= 0);
  CHECK_OK(olDestroyEvent(done));
  CHECK_OK(olDestroyEvent(filled));
  CHECK_OK(olMemFree(device));
  CHECK_OK(olDestroyQueue(a));
  CHECK_OK(olDestroyQueue(b));
  free(back);
}

/* Two GPUs: a copy from one to the other on a queue of the first. */
static void peer(ol_device_handle_t one, ol_device_handle_t two, ol_device_handle_t host) {
  const size_t size = 1u << 20;
  unsigned char *a = NULL, *b = NULL, *back = malloc(size);
  REQUIRE(back != NULL);
  ol_queue_handle_t queue;
  REQUIRE_OK(olCreateQueue(one, &queue));
  REQUIRE_OK(olMemAlloc(one, OL_ALLOC_TYPE_DEVICE, size, (void **)&a));
  REQUIRE_OK(olMemAlloc(two, OL_ALLOC_TYPE_DEVICE, size, (void **)&b));
  const uint8_t byte = 0x3c;
  CHECK_OK(olMemFill(queue, a, 1, &byte, size));
  CHECK_OK(olMemcpy(queue, b, two, a, one, size));
  CHECK_OK(olSyncQueue(queue));
  CHECK_OK(olMemcpy(NULL, back, host, b, two, size));
  bool all = true;
  for (size_t i = 0; i < size; ++i)
    all = all && back[i] == byte;
  CHECK(all);
  CHECK_OK(olMemFree(a));
  CHECK_OK(olMemFree(b));
  CHECK_OK(olDestroyQueue(queue));
  free(back);
}

static void fault(ol_device_handle_t gpu) {
  ol_program_handle_t program;
  ol_symbol_handle_t kernel;
  ol_queue_handle_t queue;
  REQUIRE_OK(olCreateProgram(gpu, fault_ptx, sizeof fault_ptx, &program));
  REQUIRE_OK(olGetSymbol(program, "fault", OL_SYMBOL_KIND_KERNEL, &kernel));
  REQUIRE_OK(olCreateQueue(gpu, &queue));
  ol_kernel_launch_size_args_t one = {1, {1, 1, 1}, {1, 1, 1}, 0};
  CHECK_OK(olLaunchKernel(queue, gpu, kernel, NULL, 0, &one));
  ol_result_t r = olSyncQueue(queue);
  CHECK(r != OL_SUCCESS);
  if (r != OL_SUCCESS)
    printf("the fault, as reported: %s\n", r->Details);
  /* The context is spoiled now; the handles are still ours to release. */
  olDestroyQueue(queue);
  olDestroyProgram(program);
}

int main(void) {
  REQUIRE_OK(olInit());
  device_list_t list = all_devices();
  ol_device_handle_t gpus[TEST_MAX_DEVICES];
  size_t count = 0;
  for (size_t i = 0; i < list.count; ++i) {
    ol_platform_handle_t platform;
    ol_platform_backend_t backend;
    REQUIRE_OK(olGetDeviceInfo(list.devices[i], OL_DEVICE_INFO_PLATFORM, sizeof platform,
                               &platform));
    REQUIRE_OK(olGetPlatformInfo(platform, OL_PLATFORM_INFO_BACKEND, sizeof backend, &backend));
    if (backend == OL_PLATFORM_BACKEND_CUDA)
      gpus[count++] = list.devices[i];
  }
  if (count == 0) {
    printf("skipped: no CUDA device (no libcuda.so.1 or no NVIDIA GPU)\n");
    olShutDown();
    return TEST_SKIP_CODE;
  }
  ol_device_handle_t host = host_device();
  programs(gpus[0]);
  copies(gpus[0], host);
  ordering(gpus[0], host);
  if (count >= 2)
    peer(gpus[0], gpus[1], host);
  else
    printf("one GPU: the copy between two GPUs is not tried\n");
  fault(gpus[0]);
  olShutDown();
  return test_finish("test_gpu_cuda");
}
