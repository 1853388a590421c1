/* Shared helpers of the C tests: result checks that print the error's Details, value
 * checks, and device look-up. Every helper is static inline, so a test uses what it
 * needs without unused-function warnings. */
#ifndef OFFLOAD_TEST_H
#define OFFLOAD_TEST_H

#include <offload/liboffload.h>

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ctest's SKIP_RETURN_CODE: the test needs hardware or a tool it did not find. */
#define TEST_SKIP_CODE 77

static int test_checks;
static int test_failures;

static inline const char *errc_name(ol_errc_t code) {
  static const char *const names[] = {
      "SUCCESS",          "UNKNOWN",          "HOST_IO",
      "INVALID_BINARY",   "INVALID_NULL_POINTER", "INVALID_ARGUMENT",
      "NOT_FOUND",        "OUT_OF_RESOURCES", "INVALID_SIZE",
      "INVALID_ENUMERATION", "HOST_TOOL_NOT_FOUND", "INVALID_VALUE",
      "UNIMPLEMENTED",    "UNSUPPORTED",      "ASSEMBLE_FAILURE",
      "COMPILE_FAILURE",  "LINK_FAILURE",     "BACKEND_FAILURE",
      "UNINITIALIZED",    "INVALID_NULL_HANDLE", "INVALID_PLATFORM",
      "INVALID_DEVICE",   "INVALID_QUEUE",    "INVALID_EVENT",
      "SYMBOL_KIND"};
  if (code < sizeof(names) / sizeof(names[0]))
    return names[code];
  return "(not an ol_errc_t)";
}

static inline ol_errc_t result_code(ol_result_t result) {
  return result == OL_SUCCESS ? OL_ERRC_SUCCESS : result->Code;
}

/* Checks that `result` has code `expected`, and that an error carries a non-empty
 * Details string. Prints the call, both codes and the Details on failure. */
static inline bool check_result(ol_result_t result, ol_errc_t expected, const char *expr,
                                const char *file, int line) {
  ol_errc_t got = result_code(result);
  ++test_checks;
  if (got != expected) {
    ++test_failures;
    fprintf(stderr, "%s:%d: FAILED: %s\n    expected OL_ERRC_%s, got OL_ERRC_%s", file,
            line, expr, errc_name(expected), errc_name(got));
    if (result != OL_SUCCESS)
      fprintf(stderr, ": %s", result->Details ? result->Details : "(NULL Details)");
    fputc('\n', stderr);
    return false;
  }
  if (result != OL_SUCCESS && (result->Details == NULL || result->Details[0] == '\0')) {
    ++test_failures;
    fprintf(stderr, "%s:%d: FAILED: %s\n    OL_ERRC_%s has empty Details\n", file, line,
            expr, errc_name(got));
    return false;
  }
  return true;
}

static inline bool check_true(bool ok, const char *expr, const char *file, int line) {
  ++test_checks;
  if (!ok) {
    ++test_failures;
    fprintf(stderr, "%s:%d: FAILED: %s\n", file, line, expr);
  }
  return ok;
}

static inline bool check_u64(uint64_t got, uint64_t want, const char *expr, const char *file,
                             int line) {
  ++test_checks;
  if (got != want) {
    ++test_failures;
    fprintf(stderr, "%s:%d: FAILED: %s\n    got %" PRIu64 " (0x%" PRIx64 "), want %" PRIu64
                    " (0x%" PRIx64 ")\n",
            file, line, expr, got, got, want, want);
    return false;
  }
  return true;
}

#define CHECK_OK(expr) check_result((expr), OL_ERRC_SUCCESS, #expr, __FILE__, __LINE__)
#define CHECK_ERR(code, expr) check_result((expr), OL_ERRC_##code, #expr, __FILE__, __LINE__)
#define CHECK(cond) check_true((cond), #cond, __FILE__, __LINE__)
#define CHECK_EQ(got, want)                                                                \
  check_u64((uint64_t)(got), (uint64_t)(want), #got " == " #want, __FILE__, __LINE__)
/* A failed REQUIRE ends the test: what follows depends on it. */
#define REQUIRE(cond)                                                                      \
  do {                                                                                     \
    if (!CHECK(cond))                                                                      \
      exit(1);                                                                             \
  } while (0)
#define REQUIRE_OK(expr)                                                                   \
  do {                                                                                     \
    if (!CHECK_OK(expr))                                                                   \
      exit(1);                                                                             \
  } while (0)

/* The text of an error's Details, or "" for success. */
static inline const char *details(ol_result_t result) {
  return result == OL_SUCCESS || result->Details == NULL ? "" : result->Details;
}

/* Checks that `result` has code `code` and that its Details contain `needle`. */
static inline bool check_details(ol_result_t result, ol_errc_t code, const char *needle,
                                 const char *expr, const char *file, int line) {
  if (!check_result(result, code, expr, file, line))
    return false;
  bool found = strstr(details(result), needle) != NULL;
  ++test_checks;
  if (!found) {
    ++test_failures;
    fprintf(stderr, "%s:%d: FAILED: %s\n    Details \"%s\" do not mention \"%s\"\n", file, line,
            expr, details(result), needle);
  }
  return found;
}
#define CHECK_DETAILS(code, needle, expr)                                                  \
  check_details((expr), OL_ERRC_##code, (needle), #expr, __FILE__, __LINE__)

/* Prints the tally; the value to return from main. */
static inline int test_finish(const char *name) {
  printf("%s: %d checks, %d failed\n", name, test_checks, test_failures);
  return test_failures == 0 ? 0 : 1;
}

/* ---- devices ---- */

#define TEST_MAX_DEVICES 64

typedef struct {
  ol_device_handle_t devices[TEST_MAX_DEVICES];
  size_t count;
} device_list_t;

static inline bool collect_device(ol_device_handle_t device, void *user_data) {
  device_list_t *list = (device_list_t *)user_data;
  if (list->count < TEST_MAX_DEVICES)
    list->devices[list->count++] = device;
  return true;
}

static inline device_list_t all_devices(void) {
  device_list_t list;
  memset(&list, 0, sizeof list);
  REQUIRE_OK(olIterateDevices(collect_device, &list));
  return list;
}

static inline uint32_t device_type(ol_device_handle_t device) {
  uint32_t type = 0xffffffffu;
  CHECK_OK(olGetDeviceInfo(device, OL_DEVICE_INFO_TYPE, sizeof type, &type));
  return type;
}

/* The host device: names host memory in copies. Always present. */
static inline ol_device_handle_t host_device(void) {
  device_list_t list = all_devices();
  for (size_t i = list.count; i > 0; --i)
    if (device_type(list.devices[i - 1]) == OL_DEVICE_TYPE_HOST)
      return list.devices[i - 1];
  fprintf(stderr, "no host device among %zu devices\n", list.count);
  exit(1);
}

/* The backend of the platform `device` belongs to. */
static inline uint32_t device_backend(ol_device_handle_t device) {
  ol_platform_handle_t platform = NULL;
  ol_platform_backend_t backend = OL_PLATFORM_BACKEND_UNKNOWN;
  REQUIRE_OK(olGetDeviceInfo(device, OL_DEVICE_INFO_PLATFORM, sizeof platform, &platform));
  REQUIRE_OK(olGetPlatformInfo(platform, OL_PLATFORM_INFO_BACKEND, sizeof backend, &backend));
  return backend;
}

/* Whether `device` is a device server's, reached over MPI. */
static inline bool device_is_remote(ol_device_handle_t device) {
  return device_backend(device) == OL_PLATFORM_BACKEND_MPI;
}

/* The first device of the MPI platform (a server's host device, under mpirun with
 * offload-mpi-device); exits 77 saying so where there is none. */
static inline ol_device_handle_t remote_test_device(void) {
  device_list_t list = all_devices();
  for (size_t i = 0; i < list.count; ++i)
    if (device_is_remote(list.devices[i]))
      return list.devices[i];
  printf("skipped: no remote device (run under mpirun with offload-mpi-device)\n");
  exit(TEST_SKIP_CODE);
}

/* A handle value no library would return; distinct per use. */
#define GARBAGE_HANDLE(type) ((type)(uintptr_t)0x1234)

#endif /* OFFLOAD_TEST_H */
