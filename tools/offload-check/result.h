/* The outcome of one check: ok, FAILED with why, or unsupported with why; and the
 * helpers that turn an ol_result_t into a reason naming the call, its error code and
 * the library's Details. */
#ifndef OFFLOAD_CHECK_RESULT_H
#define OFFLOAD_CHECK_RESULT_H

#include <offload/liboffload.h>

#include <stdbool.h>

typedef enum { STATUS_NOT_RUN = 0, STATUS_OK, STATUS_FAILED, STATUS_UNSUPPORTED } check_status_t;

typedef struct {
  check_status_t status;
  char reason[600];
} check_result_t;

/* The first failure of a check is the one reported: later ones are usually its
 * consequences. Each returns false so that callers can write `return fail(...)`. */
bool fail(check_result_t *result, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
bool unsupported(check_result_t *result, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

/* True on OL_SUCCESS; else records "what: OL_ERRC_CODE: Details" as the failure. */
bool ol_ok(check_result_t *result, ol_result_t call, const char *what);

/* "OL_ERRC_CODE: Details" of a failed call (for messages outside a check). */
const char *describe(ol_result_t call);

#endif
