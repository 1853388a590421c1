/* Arguments by value of every size: char, short, float, double, a pointer and a 24-byte
 * struct, packed in one buffer laid out as a C struct (kernels/scalars.h), each checked
 * as the kernel received it. The buffer is copied when olLaunchKernel returns: changing
 * it before a queued launch runs changes nothing. A raw kernel takes buffers of any
 * size and reads them at any offset (on the host device only: a GPU kernel has a fixed
 * parameter list, so kernels/host_abi.c has no raw_echo there). On the device
 * OFFLOAD_TEST_DEVICE names (kernel_test.h). */
#include "kernel_test.h"
#include "kernels/scalars.h"

static void check_received(const struct scalars_out *got, const struct scalars_args *want) {
  CHECK_EQ((unsigned char)got->c, (unsigned char)want->c);
  CHECK_EQ((unsigned short)got->s, (unsigned short)want->s);
  CHECK(got->f == want->f);
  CHECK(got->d == want->d);
  CHECK(got->p == want->p);
  CHECK(got->t.a == want->t.a);
  CHECK_EQ((uint64_t)got->t.b, (uint64_t)want->t.b);
  CHECK_EQ((uint32_t)got->t.c, (uint32_t)want->t.c);
  CHECK_EQ((unsigned char)got->t.d, (unsigned char)want->t.d);
}

static void launch(ol_queue_handle_t queue, ol_device_handle_t device, ol_symbol_handle_t kernel,
                   const struct scalars_args *args) {
  ol_kernel_launch_size_args_t grid = grid_1d(1, 1);
  CHECK_OK(olLaunchKernel(queue, device, kernel, args, sizeof *args, &grid));
}

/* raw_echo reads a pointer `out` at offset 0 and writes out[0] = the buffer's size,
 * out[1] = its last byte; sizes that are not multiples of anything, up to 4 pointers. */
static void raw_buffers(ol_device_handle_t device, ol_symbol_handle_t raw_echo) {
  size_t out[2];
  size_t *out_ptr = out;
  unsigned char buffer[4 * sizeof(void *)];
  ol_kernel_launch_size_args_t grid = grid_1d(1, 1);
  for (size_t size = sizeof out_ptr + 1; size <= sizeof buffer; size += 3) {
    memset(buffer, 0, sizeof buffer);
    memcpy(buffer, &out_ptr, sizeof out_ptr);
    buffer[size - 1] = (unsigned char)(0x80 + size);
    out[0] = out[1] = SIZE_MAX;
    CHECK_OK(olLaunchKernel(NULL, device, raw_echo, buffer, size, &grid));
    CHECK_EQ(out[0], size);
    CHECK_EQ(out[1], 0x80 + size);
  }
}

int main(int argc, char **argv) {
  REQUIRE(argc == 2);
  /* C's layout of the buffer (LP64): the padding olLaunchKernel's caller must give. */
  CHECK_EQ(sizeof(struct triple), 24);
  CHECK_EQ(offsetof(struct scalars_args, s), 10);
  CHECK_EQ(offsetof(struct scalars_args, d), 16);
  CHECK_EQ(offsetof(struct scalars_args, t), 32);
  CHECK_EQ(sizeof(struct scalars_args), 56);
  REQUIRE_OK(olInit());
  ol_device_handle_t device = test_device();
  ol_device_handle_t host = host_device(); /* names the host side of copies */
  ol_program_handle_t program = load_program(device, argv[1]);
  ol_symbol_handle_t scalars = get_kernel(program, "scalars");

  void *d_out = NULL;
  REQUIRE_OK(olMemAlloc(device, OL_ALLOC_TYPE_DEVICE, sizeof(struct scalars_out), &d_out));
  const struct scalars_args v = {d_out, (char)-5, (short)-12345, 3.25f, -1.5e300,
                                 (void *)(uintptr_t)0x123456789abcULL,
                                 {6.0625, -(1LL << 40) - 3, -7, 'z'}};
  struct scalars_out got;

  /* Synchronously. */
  memset(&got, 0, sizeof got);
  launch(NULL, device, scalars, &v);
  CHECK_OK(olMemcpy(NULL, &got, host, d_out, device, sizeof got));
  check_received(&got, &v);

  /* Other values, on a queue held by a gate; the caller's buffer is overwritten right
   * after the launch returns, before it runs. */
  ol_queue_handle_t queue = NULL;
  REQUIRE_OK(olCreateQueue(device, &queue));
  gate_t gate = {0, 0};
  CHECK_OK(olLaunchHostFunction(queue, gate_callback, &gate));
  struct scalars_args w = {d_out, (char)127, (short)32767, -0.0f, 2.0 / 3.0, &gate,
                           {-0.5, 42, 1 << 30, '\0'}};
  const struct scalars_args w_sent = w;
  launch(queue, device, scalars, &w);
  memset(&w, 0x5A, sizeof w);
  gate_open(&gate);
  memset(&got, 0, sizeof got);
  CHECK_OK(olMemcpy(queue, &got, host, d_out, device, sizeof got));
  CHECK_OK(olSyncQueue(queue));
  check_received(&got, &w_sent);

  if (device_is_host(device))
    raw_buffers(device, get_kernel(program, "raw_echo"));

  CHECK_OK(olDestroyQueue(queue));
  CHECK_OK(olMemFree(d_out));
  CHECK_OK(olDestroyProgram(program));
  CHECK_OK(olShutDown());
  return test_finish("test_kernel_args");
}
