/* Images olCreateProgram must refuse with OL_ERRC_INVALID_BINARY and a Details saying
 * what the image is, and olIsValidBinary's answers for them:
 *   argv[1] a good host program   argv[2] a text file   argv[3] a relocatable object
 *   argv[4] a shared object for another architecture, or "none" (that case is skipped) */
#include "kernel_test.h"

static void refused(ol_device_handle_t device, const void *bytes, size_t size,
                    const char *what, const char *label) {
  bool valid = true;
  CHECK_OK(olIsValidBinary(device, bytes, size, &valid));
  if (!CHECK(!valid))
    fprintf(stderr, "    olIsValidBinary accepted the %s\n", label);
  ol_program_handle_t program = NULL;
  ol_result_t r = olCreateProgram(device, bytes, size, &program);
  if (!CHECK_DETAILS(INVALID_BINARY, what, r))
    fprintf(stderr, "    (the %s)\n", label);
  else
    printf("%s: %s\n", label, details(r));
  CHECK(program == NULL);
}

int main(int argc, char **argv) {
  REQUIRE(argc == 5);
  REQUIRE_OK(olInit());
  ol_device_handle_t device = host_device();
  size_t size = 0;

  unsigned char *good = read_file(argv[1], &size);
  bool valid = false;
  CHECK_OK(olIsValidBinary(device, good, size, &valid));
  CHECK(valid);
  ol_program_handle_t program = NULL;
  CHECK_OK(olCreateProgram(device, good, size, &program));
  CHECK_OK(olDestroyProgram(program));
  /* The first 40 bytes: shorter than an ELF header. */
  refused(device, good, 40, "truncated", "truncated image");
  /* A whole program, cut in the middle: the header is fine, the rest is missing. */
  program = NULL;
  ol_result_t r = olCreateProgram(device, good, size / 2, &program);
  CHECK_ERR(INVALID_BINARY, r);
  CHECK(program == NULL);
  /* An empty image is not valid: olIsValidBinary says false, olCreateProgram refuses it
   * as LLVM does. */
  valid = true;
  CHECK_OK(olIsValidBinary(device, good, 0, &valid));
  CHECK(!valid);
  CHECK_ERR(INVALID_BINARY, olCreateProgram(device, good, 0, &program));
  CHECK_ERR(INVALID_NULL_POINTER, olCreateProgram(device, NULL, size, &program));
  CHECK_ERR(INVALID_NULL_POINTER, olIsValidBinary(device, NULL, size, &valid));
  CHECK_ERR(INVALID_NULL_POINTER, olIsValidBinary(device, good, size, NULL));
  CHECK_ERR(INVALID_NULL_POINTER, olCreateProgram(device, good, size, NULL));
  CHECK_ERR(INVALID_NULL_HANDLE, olCreateProgram(NULL, good, size, &program));
  CHECK_ERR(INVALID_NULL_HANDLE, olIsValidBinary(NULL, good, size, &valid));
  CHECK_ERR(INVALID_DEVICE, olCreateProgram(GARBAGE_HANDLE(ol_device_handle_t), good, size,
                                            &program));
  free(good);

  unsigned char *text = read_file(argv[2], &size);
  refused(device, text, size, "unrecognised image", "C source text");
  free(text);

  unsigned char *object = read_file(argv[3], &size);
  refused(device, object, size, "relocatable object", "relocatable object");
  free(object);

  if (strcmp(argv[4], "none") == 0) {
    printf("no shared object for another architecture was built: that case is skipped\n");
  } else {
    unsigned char *foreign = read_file(argv[4], &size);
    const char *arch = strstr(argv[4], "aarch64") != NULL ? "aarch64" : "x86_64";
    refused(device, foreign, size, arch, "foreign shared object");
    free(foreign);
  }

  unsigned char bitcode[64] = {'B', 'C', 0xC0, 0xDE};
  refused(device, bitcode, sizeof bitcode, "bitcode", "LLVM bitcode");

  CHECK_OK(olShutDown());
  return test_finish("test_program_images");
}
