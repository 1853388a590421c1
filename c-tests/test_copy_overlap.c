/* Overlapping copies within one memory, as memmove makes them: within an allocation of the
 * device, and between a HOST or MANAGED allocation and itself with the host device naming
 * one side (the same memory seen from both sides: a transfer from one side to the other
 * would read bytes it had already overwritten), forwards and backwards, synchronous and
 * queued. Found by the API fuzzer on a remote device, where such a copy went to the server
 * as a transfer. On GPUs the driver leaves overlapping copies undefined: skipped there. */
#include "kernel_test.h"

enum { SIZE = 1 << 20 };

static unsigned char model[SIZE], got[SIZE];

static void fill_known(ol_device_handle_t device, ol_device_handle_t host, void *memory) {
  for (size_t i = 0; i < SIZE; ++i)
    model[i] = (unsigned char)(i * 31 + 7);
  REQUIRE_OK(olMemcpy(NULL, memory, device, model, host, SIZE));
}

static bool matches(ol_device_handle_t device, ol_device_handle_t host, void *memory) {
  REQUIRE_OK(olMemcpy(NULL, got, host, memory, device, SIZE));
  for (size_t i = 0; i < SIZE; ++i)
    if (got[i] != model[i]) {
      printf("  byte %zu: %u, memmove gives %u\n", i, got[i], model[i]);
      return false;
    }
  return true;
}

int main(void) {
  REQUIRE_OK(olInit());
  ol_device_handle_t device = test_device(), host = host_device();
  if (device_is_cuda(device) || device_is_amdgpu(device)) {
    printf("skipped: the GPU's driver leaves overlapping copies undefined\n");
    return TEST_SKIP_CODE;
  }
  ol_queue_handle_t queue = NULL;
  REQUIRE_OK(olCreateQueue(device, &queue));
  const ol_alloc_type_t kinds[] = {OL_ALLOC_TYPE_DEVICE, OL_ALLOC_TYPE_HOST, OL_ALLOC_TYPE_MANAGED};
  /* dst and src offsets: the destination after the source (copied from the end) and
   * before it (from the start); 262144 bytes each time. */
  const size_t shifts[][2] = {{33497, 21883}, {21883, 33497}, {4096, 0}, {0, 4096}};
  for (size_t k = 0; k < 3; ++k) {
    void *memory = NULL;
    REQUIRE_OK(olMemAlloc(device, kinds[k], SIZE, &memory));
    unsigned char *m = memory;
    const bool host_visible = kinds[k] != OL_ALLOC_TYPE_DEVICE;
    /* Which device names each side: the device itself, or (host-visible memory) the host
     * device on the source side, on the destination side. */
    for (int naming = 0; naming < (host_visible ? 3 : 1); ++naming) {
      ol_device_handle_t dst_dev = naming == 2 ? host : device;
      ol_device_handle_t src_dev = naming == 1 ? host : device;
      for (size_t s = 0; s < sizeof shifts / sizeof shifts[0]; ++s) {
        for (int queued = 0; queued < 2; ++queued) {
          const size_t dst = shifts[s][0], src = shifts[s][1], n = 262144;
          fill_known(device, host, memory);
          memmove(model + dst, model + src, n);
          CHECK_OK(olMemcpy(queued ? queue : NULL, m + dst, dst_dev, m + src, src_dev, n));
          if (queued)
            CHECK_OK(olSyncQueue(queue));
          if (!matches(device, host, memory)) {
            CHECK(!"an overlapping copy is not memmove's");
            printf("  (kind %d, %s names the %s, dst +%zu, src +%zu, %s)\n", (int)kinds[k],
                   naming == 0 ? "the device" : "the host device",
                   naming == 0 ? "both sides" : naming == 1 ? "source" : "destination", dst,
                   src, queued ? "queued" : "synchronous");
          }
        }
      }
    }
    CHECK_OK(olMemFree(memory));
  }
  CHECK_OK(olDestroyQueue(queue));
  CHECK_OK(olShutDown());
  return test_finish("test_copy_overlap");
}
