/* The host kernel ABI's markers, judged by the library (ABI version 2):
 *  - kernels marked for version 1 (liboffload 0.1, one pointer per argument) or for a
 *    later version are refused by olGetSymbol with OL_ERRC_INVALID_BINARY, never called
 *    with a buffer they would misread; the program's other kernels work;
 *  - programs with a malformed marker, or a marker without its function, do not load.
 * argv[1]: kernels/markers.c's program; argv[2], argv[3]: the same built with -DBAD_MAGIC
 * and with -DORPHAN. */
#include "kernel_test.h"

static void refused_kernel(ol_program_handle_t program, const char *name, const char *why) {
  ol_symbol_handle_t symbol = NULL;
  ol_result_t r = olGetSymbol(program, name, OL_SYMBOL_KIND_KERNEL, &symbol);
  if (CHECK_DETAILS(INVALID_BINARY, why, r))
    printf("%s: %s\n", name, details(r));
  CHECK(symbol == NULL);
}

static void refused_program(ol_device_handle_t device, const char *path, const char *why) {
  size_t size = 0;
  unsigned char *image = read_file(path, &size);
  ol_program_handle_t program = NULL;
  ol_result_t r = olCreateProgram(device, image, size, &program);
  if (CHECK_DETAILS(INVALID_BINARY, why, r))
    printf("%s: %s\n", path, details(r));
  CHECK(program == NULL);
  free(image);
}

int main(int argc, char **argv) {
  REQUIRE(argc == 4);
  REQUIRE_OK(olInit());
  ol_device_handle_t device = host_device();
  ol_program_handle_t program = load_program(device, argv[1]);

  refused_kernel(program, "old", "version 1");
  refused_kernel(program, "old", "rebuild");
  refused_kernel(program, "future", "version 3");
  /* The markers themselves are not symbols of the program. */
  ol_symbol_handle_t symbol = NULL;
  CHECK_ERR(NOT_FOUND, olGetSymbol(program, "__ol_host_kernel_v1_old",
                                   OL_SYMBOL_KIND_GLOBAL_VARIABLE, &symbol));
  CHECK_ERR(NOT_FOUND, olGetSymbol(program, "__ol_host_kernel_v2_fine",
                                   OL_SYMBOL_KIND_GLOBAL_VARIABLE, &symbol));

  /* A version 2 kernel beside them runs. */
  ol_symbol_handle_t fine = get_kernel(program, "fine");
  ol_kernel_launch_size_args_t grid = grid_1d(3, 1);
  CHECK_OK(olLaunchKernel(NULL, device, fine, NULL, 0, &grid));
  CHECK_OK(olDestroyProgram(program));

  refused_program(device, argv[2], "garbled");
  refused_program(device, argv[3], "hidden_kernel");

  CHECK_OK(olShutDown());
  return test_finish("test_kernel_markers");
}
