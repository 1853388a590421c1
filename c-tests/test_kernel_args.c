/* Arguments by value of every size: char, short, float, double, a pointer and a 24-byte
 * struct, each checked as the kernel received it. The values are copied when
 * olLaunchKernel returns: changing them before a queued launch runs changes nothing. */
#include "kernel_test.h"
#include "kernels/scalars.h"

/* The values sent are laid out as the kernel stores them. */
typedef struct scalars_out values_t;

static void check_received(const struct scalars_out *got, const values_t *want) {
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
                   void **out, values_t *v) {
  void *args[7] = {out, &v->c, &v->s, &v->f, &v->d, &v->p, &v->t};
  size_t sizes[7] = {sizeof(void *), sizeof v->c, sizeof v->s, sizeof v->f,
                     sizeof v->d,    sizeof v->p, sizeof v->t};
  ol_kernel_launch_size_args_t grid = grid_1d(1, 1);
  CHECK_OK(olLaunchKernel(queue, device, kernel, &grid, NULL, 7, args, sizes));
}

int main(int argc, char **argv) {
  REQUIRE(argc == 2);
  CHECK_EQ(sizeof(struct triple), 24);
  REQUIRE_OK(olInit(NULL));
  ol_device_handle_t device = host_device();
  ol_program_handle_t program = load_program(device, argv[1]);
  ol_symbol_handle_t scalars = get_kernel(program, "scalars");

  void *d_out = NULL;
  REQUIRE_OK(olMemAlloc(device, OL_ALLOC_TYPE_DEVICE, sizeof(struct scalars_out), &d_out));
  values_t v = {(char)-5, (short)-12345, 3.25f, -1.5e300, (void *)(uintptr_t)0x123456789abcULL,
                {6.0625, -(1LL << 40) - 3, -7, 'z'}};
  struct scalars_out got;

  /* Synchronously. */
  memset(&got, 0, sizeof got);
  launch(NULL, device, scalars, &d_out, &v);
  CHECK_OK(olMemcpy(NULL, &got, device, d_out, device, sizeof got));
  check_received(&got, &v);

  /* Other values, on a queue held by a gate; the caller's copies are overwritten right
   * after the launch returns, before it runs. */
  ol_queue_handle_t queue = NULL;
  REQUIRE_OK(olCreateQueue(device, &queue));
  gate_t gate = {0, 0};
  CHECK_OK(olLaunchHostFunction(queue, gate_callback, &gate));
  values_t w = {(char)127, (short)32767, -0.0f, 2.0 / 3.0, &gate, {-0.5, 42, 1 << 30, '\0'}};
  const values_t w_sent = w;
  launch(queue, device, scalars, &d_out, &w);
  memset(&w, 0x5A, sizeof w);
  gate_open(&gate);
  memset(&got, 0, sizeof got);
  CHECK_OK(olMemcpy(queue, &got, device, d_out, device, sizeof got));
  CHECK_OK(olSyncQueue(queue));
  check_received(&got, &w_sent);

  CHECK_OK(olDestroyQueue(queue));
  CHECK_OK(olMemFree(d_out));
  CHECK_OK(olDestroyProgram(program));
  CHECK_OK(olShutDown());
  return test_finish("test_kernel_args");
}
