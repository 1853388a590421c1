/* Memory: olMemAlloc of every type, olMemFree, olMemcpy and olMemFill with a NULL
 * queue (every byte checked), olGetMemInfo[Size] from base and interior pointers,
 * olMemRegister/olMemUnregister, and every bad argument. */
#include "offload_test.h"

static const ol_alloc_type_t alloc_types[] = {OL_ALLOC_TYPE_HOST, OL_ALLOC_TYPE_DEVICE,
                                              OL_ALLOC_TYPE_MANAGED};
static const size_t sizes[] = {1, 3, 63, 64, 65, 4095, 4096, 100000, (1u << 20) + 7, 3u << 20};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static ol_device_handle_t host;

/* Reads `size` bytes of device memory into a fresh host buffer. */
static unsigned char *read_back(const void *ptr, ol_device_handle_t device, size_t size) {
  unsigned char *copy = (unsigned char *)malloc(size);
  REQUIRE(copy != NULL);
  memset(copy, 0xee, size);
  CHECK_OK(olMemcpy(NULL, copy, host, ptr, device, size));
  return copy;
}

static void check_mem_info(void *base, size_t size, ol_device_handle_t device,
                           ol_alloc_type_t type) {
  const size_t offsets[] = {0, size / 2, size - 1};
  for (size_t i = 0; i < COUNT(offsets); ++i) {
    const void *p = (const unsigned char *)base + offsets[i];
    ol_device_handle_t d = NULL;
    void *b = NULL;
    size_t s = 0;
    uint32_t t = 0xffffffffu;
    CHECK_OK(olGetMemInfo(p, OL_MEM_INFO_DEVICE, sizeof d, &d));
    CHECK(d == device);
    CHECK_OK(olGetMemInfo(p, OL_MEM_INFO_BASE, sizeof b, &b));
    CHECK(b == base);
    CHECK_OK(olGetMemInfo(p, OL_MEM_INFO_SIZE, sizeof s, &s));
    CHECK_EQ(s, size);
    CHECK_OK(olGetMemInfo(p, OL_MEM_INFO_TYPE, sizeof t, &t));
    CHECK_EQ(t, type);
    size_t need = 0;
    CHECK_OK(olGetMemInfoSize(p, OL_MEM_INFO_DEVICE, &need));
    CHECK_EQ(need, sizeof(ol_device_handle_t));
    CHECK_OK(olGetMemInfoSize(p, OL_MEM_INFO_BASE, &need));
    CHECK_EQ(need, sizeof(void *));
    CHECK_OK(olGetMemInfoSize(p, OL_MEM_INFO_SIZE, &need));
    CHECK_EQ(need, sizeof(size_t));
    CHECK_OK(olGetMemInfoSize(p, OL_MEM_INFO_TYPE, &need));
    CHECK_EQ(need, sizeof(ol_alloc_type_t));
  }
  /* Too small a buffer (or 0): INVALID_SIZE, nothing written. */
  unsigned char canary[16];
  memset(canary, 0x5a, sizeof canary);
  CHECK_ERR(INVALID_SIZE, olGetMemInfo(base, OL_MEM_INFO_BASE, sizeof(void *) - 1, canary));
  CHECK_ERR(INVALID_SIZE, olGetMemInfo(base, OL_MEM_INFO_SIZE, 0, canary));
  CHECK_ERR(INVALID_SIZE, olGetMemInfo(base, OL_MEM_INFO_TYPE, 3, canary));
  for (size_t i = 0; i < sizeof canary; ++i)
    CHECK_EQ(canary[i], 0x5a);
  CHECK_ERR(INVALID_ENUMERATION, olGetMemInfo(base, 4, sizeof canary, canary));
  CHECK_ERR(INVALID_ENUMERATION, olGetMemInfo(base, 0xffffffffu, sizeof canary, canary));
  CHECK_ERR(INVALID_ENUMERATION, olGetMemInfoSize(base, 4, (size_t *)(void *)canary));
  CHECK_ERR(INVALID_NULL_POINTER, olGetMemInfo(base, OL_MEM_INFO_BASE, sizeof canary, NULL));
  CHECK_ERR(INVALID_NULL_POINTER, olGetMemInfoSize(base, OL_MEM_INFO_BASE, NULL));
  /* One past the end is not the allocation's. */
  void *b = NULL;
  ol_result_t past = olGetMemInfo((unsigned char *)base + size, OL_MEM_INFO_BASE, sizeof b, &b);
  CHECK(result_code(past) == OL_ERRC_NOT_FOUND || b != base);
}

/* Fills [offset, offset + fill) of a `size`-byte allocation with a pattern of
 * `pattern_size` bytes and checks every byte of the allocation. */
static void check_fill(void *mem, ol_device_handle_t device, size_t size, size_t pattern_size) {
  unsigned char pattern[16];
  for (size_t i = 0; i < pattern_size; ++i)
    pattern[i] = (unsigned char)(0x11 * (i + 1) + pattern_size);
  size_t offset = size >= 2 * pattern_size ? pattern_size : 0;
  size_t fill = ((size - offset) / pattern_size) * pattern_size;
  if (fill == 0)
    return;
  unsigned char background = 0xc3;
  CHECK_OK(olMemFill(NULL, mem, 1, &background, size));
  if (!CHECK_OK(olMemFill(NULL, (unsigned char *)mem + offset, pattern_size, pattern, fill)))
    return;
  unsigned char *got = read_back(mem, device, size);
  size_t bad = 0;
  for (size_t i = 0; i < size; ++i) {
    unsigned char want =
        (i >= offset && i < offset + fill) ? pattern[(i - offset) % pattern_size] : background;
    if (got[i] != want && bad++ < 4)
      fprintf(stderr, "fill: %zu-byte pattern, byte %zu of %zu: got %#x, want %#x\n",
              pattern_size, i, size, got[i], want);
  }
  if (!CHECK_EQ(bad, 0))
    fprintf(stderr, "    (%zu-byte pattern over %zu bytes at offset %zu)\n", pattern_size, fill,
            offset);
  free(got);
}

static void check_copies(void *mem, ol_device_handle_t device, size_t size) {
  unsigned char *src = (unsigned char *)malloc(size);
  REQUIRE(src != NULL);
  for (size_t i = 0; i < size; ++i)
    src[i] = (unsigned char)(i * 131u + size);
  /* host -> device -> host */
  CHECK_OK(olMemcpy(NULL, mem, device, src, host, size));
  unsigned char *got = read_back(mem, device, size);
  CHECK(memcmp(got, src, size) == 0);
  free(got);
  /* device -> device (another allocation of the same device) */
  void *other = NULL;
  if (CHECK_OK(olMemAlloc(device, OL_ALLOC_TYPE_DEVICE, size, &other))) {
    CHECK_OK(olMemcpy(NULL, other, device, mem, device, size));
    got = read_back(other, device, size);
    CHECK(memcmp(got, src, size) == 0);
    free(got);
    CHECK_OK(olMemFree(other));
  }
  /* Within one allocation: the second half onto the first. */
  if (size >= 2) {
    size_t half = size / 2;
    CHECK_OK(olMemcpy(NULL, mem, device, (unsigned char *)mem + (size - half), device, half));
    got = read_back(mem, device, size);
    CHECK(memcmp(got, src + (size - half), half) == 0);
    CHECK(memcmp(got + half, src + half, size - half) == 0);
    free(got);
  }
  free(src);
}

static void allocations(ol_device_handle_t device) {
  for (size_t t = 0; t < COUNT(alloc_types); ++t) {
    for (size_t s = 0; s < COUNT(sizes); ++s) {
      void *mem = NULL;
      ol_result_t r = olMemAlloc(device, alloc_types[t], sizes[s], &mem);
      if (result_code(r) == OL_ERRC_UNSUPPORTED && device != host)
        continue; /* a GPU without managed memory, say */
      if (!CHECK_OK(r))
        continue;
      REQUIRE(mem != NULL);
      if (!CHECK_EQ((uintptr_t)mem % 64, 0))
        fprintf(stderr, "    (type %u, size %zu, at %p)\n", alloc_types[t], sizes[s], mem);
      check_mem_info(mem, sizes[s], device, alloc_types[t]);
      const size_t patterns[] = {1, 2, 4, 8, 16, 3};
      for (size_t p = 0; p < COUNT(patterns); ++p)
        check_fill(mem, device, sizes[s], patterns[p]);
      check_copies(mem, device, sizes[s]);
      CHECK_OK(olMemFree(mem));
    }
  }
}

static void host_memory_directly(void) {
  /* Host allocations of the host device are plain memory for the CPU. */
  unsigned char *mem = NULL;
  REQUIRE_OK(olMemAlloc(host, OL_ALLOC_TYPE_HOST, 1000, (void **)&mem));
  memset(mem, 7, 1000);
  const uint16_t pattern = 0xbeef;
  CHECK_OK(olMemFill(NULL, mem + 10, sizeof pattern, &pattern, 20));
  CHECK(mem[9] == 7 && mem[30] == 7);
  uint16_t word;
  memcpy(&word, mem + 12, 2);
  CHECK_EQ(word, 0xbeef);
  /* Copies between plain host memory (malloc, stack) named by the host device. */
  unsigned char stack[64];
  memset(stack, 1, sizeof stack);
  CHECK_OK(olMemcpy(NULL, stack, host, mem, host, 8));
  CHECK(stack[0] == 7 && stack[8] == 1);
  CHECK_OK(olMemFill(NULL, stack, 1, &stack[63], 0)); /* FillSize 0: nothing to do */
  CHECK_OK(olMemFree(mem));
}

static void bad_alloc_free(void) {
  void *mem = (void *)&mem;
  int on_stack = 0;
  CHECK_ERR(INVALID_NULL_HANDLE, olMemAlloc(NULL, OL_ALLOC_TYPE_HOST, 64, &mem));
  CHECK_ERR(INVALID_DEVICE, olMemAlloc(GARBAGE_HANDLE(ol_device_handle_t), OL_ALLOC_TYPE_HOST, 64, &mem));
  CHECK_ERR(INVALID_DEVICE, olMemAlloc((ol_device_handle_t)(void *)&on_stack, OL_ALLOC_TYPE_HOST, 64, &mem));
  CHECK_ERR(INVALID_ENUMERATION, olMemAlloc(host, 3, 64, &mem));
  CHECK_ERR(INVALID_ENUMERATION, olMemAlloc(host, 0xffffffffu, 64, &mem));
  CHECK_ERR(INVALID_SIZE, olMemAlloc(host, OL_ALLOC_TYPE_HOST, 0, &mem));
  CHECK_ERR(INVALID_SIZE, olMemAlloc(host, OL_ALLOC_TYPE_DEVICE, 0, &mem));
  CHECK_ERR(INVALID_NULL_POINTER, olMemAlloc(host, OL_ALLOC_TYPE_HOST, 64, NULL));
  CHECK_ERR(OUT_OF_RESOURCES, olMemAlloc(host, OL_ALLOC_TYPE_HOST, SIZE_MAX, &mem));
  CHECK(mem == (void *)&mem); /* no failed call wrote the out-pointer */

  unsigned char *block = NULL;
  REQUIRE_OK(olMemAlloc(host, OL_ALLOC_TYPE_DEVICE, 4096, (void **)&block));
  void *heap = malloc(64);
  CHECK_ERR(INVALID_NULL_POINTER, olMemFree(NULL));
  CHECK_ERR(INVALID_ARGUMENT, olMemFree(block + 1));
  CHECK_ERR(INVALID_ARGUMENT, olMemFree(block + 4095));
  CHECK_ERR(INVALID_ARGUMENT, olMemFree(block + 4096));
  CHECK_ERR(INVALID_ARGUMENT, olMemFree(heap));
  CHECK_ERR(INVALID_ARGUMENT, olMemFree(&on_stack));
  CHECK_ERR(INVALID_ARGUMENT, olMemFree((void *)(uintptr_t)0x1234));
  /* The failed frees left the allocation alone. */
  size_t size = 0;
  CHECK_OK(olGetMemInfo(block + 100, OL_MEM_INFO_SIZE, sizeof size, &size));
  CHECK_EQ(size, 4096);
  CHECK_OK(olMemFree(block));
  CHECK_ERR(INVALID_ARGUMENT, olMemFree(block)); /* double free */
  CHECK_ERR(NOT_FOUND, olGetMemInfo(block, OL_MEM_INFO_SIZE, sizeof size, &size));
  CHECK_ERR(NOT_FOUND, olGetMemInfoSize(block, OL_MEM_INFO_SIZE, &size));
  CHECK_ERR(NOT_FOUND, olGetMemInfo(heap, OL_MEM_INFO_BASE, sizeof size, &size));
  CHECK_ERR(NOT_FOUND, olGetMemInfo(&on_stack, OL_MEM_INFO_BASE, sizeof size, &size));
  CHECK_ERR(INVALID_NULL_POINTER, olGetMemInfo(NULL, OL_MEM_INFO_BASE, sizeof size, &size));
  CHECK_ERR(INVALID_NULL_POINTER, olGetMemInfoSize(NULL, OL_MEM_INFO_BASE, &size));
  free(heap);
}

static void bad_copy_fill(void) {
  unsigned char *a = NULL, *b = NULL;
  REQUIRE_OK(olMemAlloc(host, OL_ALLOC_TYPE_DEVICE, 256, (void **)&a));
  REQUIRE_OK(olMemAlloc(host, OL_ALLOC_TYPE_DEVICE, 512, (void **)&b));
  const unsigned char zero = 0, ff = 0xff;
  CHECK_OK(olMemFill(NULL, a, 1, &zero, 256));
  CHECK_OK(olMemFill(NULL, b, 1, &ff, 512));
  unsigned char host_buf[1024];
  memset(host_buf, 0x77, sizeof host_buf);
  ol_queue_handle_t garbage_queue = GARBAGE_HANDLE(ol_queue_handle_t);

  /* Handles and pointers. */
  CHECK_ERR(INVALID_NULL_POINTER, olMemcpy(NULL, NULL, host, b, host, 16));
  CHECK_ERR(INVALID_NULL_POINTER, olMemcpy(NULL, a, host, NULL, host, 16));
  CHECK_ERR(INVALID_NULL_HANDLE, olMemcpy(NULL, a, NULL, b, host, 16));
  CHECK_ERR(INVALID_NULL_HANDLE, olMemcpy(NULL, a, host, b, NULL, 16));
  CHECK_ERR(INVALID_DEVICE, olMemcpy(NULL, a, GARBAGE_HANDLE(ol_device_handle_t), b, host, 16));
  CHECK_ERR(INVALID_DEVICE, olMemcpy(NULL, a, host, b, (ol_device_handle_t)(void *)host_buf, 16));
  CHECK_ERR(INVALID_QUEUE, olMemcpy(garbage_queue, a, host, b, host, 16));
  CHECK_ERR(INVALID_QUEUE, olMemcpy((ol_queue_handle_t)(void *)host_buf, a, host, b, host, 16));
  /* Ranges that overrun a known allocation, at either end. */
  CHECK_ERR(INVALID_SIZE, olMemcpy(NULL, a, host, b, host, 257));
  CHECK_ERR(INVALID_SIZE, olMemcpy(NULL, b, host, a, host, 257));
  CHECK_ERR(INVALID_SIZE, olMemcpy(NULL, a + 200, host, b, host, 57));
  CHECK_ERR(INVALID_SIZE, olMemcpy(NULL, host_buf, host, a + 255, host, 2));
  CHECK_ERR(INVALID_SIZE, olMemcpy(NULL, a, host, host_buf, host, sizeof host_buf));
  CHECK_ERR(INVALID_SIZE, olMemcpy(NULL, a + 1, host, b, host, SIZE_MAX));
  /* Nothing was copied by the failed calls. */
  unsigned char check[512];
  CHECK_OK(olMemcpy(NULL, check, host, a, host, 256));
  for (size_t i = 0; i < 256; ++i)
    if (!CHECK_EQ(check[i], 0))
      break;
  for (size_t i = 0; i < sizeof host_buf; ++i)
    if (!CHECK_EQ(host_buf[i], 0x77))
      break;
  /* Exactly up to the end is fine. */
  CHECK_OK(olMemcpy(NULL, a + 200, host, b, host, 56));

  /* Fills. */
  const uint32_t pattern = 0x01020304;
  CHECK_ERR(INVALID_SIZE, olMemFill(NULL, a, 4, &pattern, 6));
  CHECK_ERR(INVALID_SIZE, olMemFill(NULL, a, 3, &pattern, 256));
  CHECK_ERR(INVALID_SIZE, olMemFill(NULL, a, 0, &pattern, 0));
  CHECK_ERR(INVALID_SIZE, olMemFill(NULL, a, 0, &pattern, 16));
  CHECK_ERR(INVALID_SIZE, olMemFill(NULL, a, 4, &pattern, 260));
  CHECK_ERR(INVALID_SIZE, olMemFill(NULL, a + 252, 4, &pattern, 8));
  CHECK_ERR(INVALID_NULL_POINTER, olMemFill(NULL, NULL, 4, &pattern, 8));
  CHECK_ERR(INVALID_NULL_POINTER, olMemFill(NULL, a, 4, NULL, 8));
  CHECK_ERR(INVALID_QUEUE, olMemFill(garbage_queue, a, 4, &pattern, 8));
  CHECK_OK(olMemcpy(NULL, check, host, a, host, 256));
  for (size_t i = 0; i < 200; ++i)
    if (!CHECK_EQ(check[i], 0))
      break;
  CHECK_OK(olMemFill(NULL, a + 252, 4, &pattern, 4)); /* exactly up to the end */

  CHECK_OK(olMemFree(a));
  CHECK_OK(olMemFree(b));
}

static void registration(void) {
  const size_t size = 1 << 16;
  unsigned char *buf = (unsigned char *)malloc(size);
  REQUIRE(buf != NULL);
  memset(buf, 0, size);
  void *pinned = NULL, *inner = NULL, *again = NULL, *dummy = NULL;
  REQUIRE_OK(olMemRegister(host, buf, size, 0, &pinned));
  CHECK(pinned != NULL);
  /* Nested and repeated registrations are fine. */
  CHECK_OK(olMemRegister(host, buf + 4096, 4096, 0, &inner));
  CHECK(inner == (unsigned char *)pinned + 4096);
  CHECK_OK(olMemRegister(host, buf, size, 0, &again));
  CHECK(again == pinned);
  /* Partial overlaps are refused, at either end. */
  dummy = &dummy;
  CHECK_ERR(INVALID_ARGUMENT, olMemRegister(host, buf + size - 16, 32, 0, &dummy));
  unsigned char *outer = (unsigned char *)malloc(3 * size);
  REQUIRE(outer != NULL);
  CHECK_OK(olMemRegister(host, outer + size, size, 0, &dummy));
  CHECK_ERR(INVALID_ARGUMENT, olMemRegister(host, outer + size - 16, 32, 0, &inner));
  CHECK_ERR(INVALID_ARGUMENT, olMemRegister(host, outer, 3 * size, 0, &inner));
  CHECK_OK(olMemUnregister(host, dummy));
  free(outer);
  /* The pinned address works in copies. */
  const uint64_t value = 0x0123456789abcdefull;
  CHECK_OK(olMemcpy(NULL, (unsigned char *)pinned + 8, host, &value, host, sizeof value));
  uint64_t back = 0;
  memcpy(&back, buf + 8, sizeof back);
  CHECK_EQ(back, value);
  /* Bad arguments. */
  CHECK_ERR(INVALID_SIZE, olMemRegister(host, buf, 0, 0, &dummy));
  CHECK_ERR(INVALID_NULL_POINTER, olMemRegister(host, NULL, 64, 0, &dummy));
  CHECK_ERR(INVALID_NULL_POINTER, olMemRegister(host, buf, 64, 0, NULL));
  CHECK_ERR(INVALID_NULL_HANDLE, olMemRegister(NULL, buf, 64, 0, &dummy));
  CHECK_ERR(INVALID_DEVICE, olMemRegister(GARBAGE_HANDLE(ol_device_handle_t), buf, 64, 0, &dummy));
  /* Flags are reserved and ignored, as in LLVM: this is one more registration. */
  CHECK_OK(olMemRegister(host, buf, 64, 1, &dummy));
  CHECK_OK(olMemUnregister(host, dummy));
  CHECK_ERR(INVALID_NULL_HANDLE, olMemUnregister(NULL, pinned));
  CHECK_ERR(INVALID_DEVICE, olMemUnregister(GARBAGE_HANDLE(ol_device_handle_t), pinned));
  CHECK_ERR(INVALID_NULL_POINTER, olMemUnregister(host, NULL));
  /* Undo each registration once; one more is INVALID_ARGUMENT (LLVM's code). */
  CHECK_OK(olMemUnregister(host, (unsigned char *)pinned + 4096));
  CHECK_OK(olMemUnregister(host, pinned));
  CHECK_OK(olMemUnregister(host, pinned));
  CHECK_ERR(INVALID_ARGUMENT, olMemUnregister(host, pinned));
  CHECK_ERR(INVALID_ARGUMENT, olMemUnregister(host, buf + 100));
  int on_stack = 0;
  CHECK_ERR(INVALID_ARGUMENT, olMemUnregister(host, &on_stack));
  /* Registered again after everything was undone. */
  CHECK_OK(olMemRegister(host, buf + 16, 64, 0, &pinned));
  CHECK_OK(olMemUnregister(host, pinned));
  free(buf);
}

int main(void) {
  REQUIRE_OK(olInit());
  host = host_device();
  device_list_t devices = all_devices();
  for (size_t i = 0; i < devices.count; ++i)
    allocations(devices.devices[i]);
  host_memory_directly();
  bad_alloc_free();
  bad_copy_fill();
  registration();
  CHECK_OK(olShutDown());
  return test_finish("test_memory");
}
