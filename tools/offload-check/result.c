/* Reasons for failed and unsupported checks. */
#include "result.h"

#include <stdarg.h>
#include <stdio.h>

static bool record(check_result_t *result, check_status_t status, const char *format,
                   va_list args) {
  if (result->status == STATUS_FAILED || result->status == STATUS_UNSUPPORTED)
    return false;
  result->status = status;
  vsnprintf(result->reason, sizeof result->reason, format, args);
  return false;
}

bool fail(check_result_t *result, const char *format, ...) {
  va_list args;
  va_start(args, format);
  record(result, STATUS_FAILED, format, args);
  va_end(args);
  return false;
}

bool unsupported(check_result_t *result, const char *format, ...) {
  va_list args;
  va_start(args, format);
  record(result, STATUS_UNSUPPORTED, format, args);
  va_end(args);
  return false;
}

const char *describe(ol_result_t call) {
  static _Thread_local char text[512];
  if (call == OL_SUCCESS)
    return "OL_ERRC_SUCCESS";
  snprintf(text, sizeof text, "%s: %s", olGetErrcName(call->Code),
           call->Details != NULL && call->Details[0] != '\0' ? call->Details : "(no Details)");
  return text;
}

bool ol_ok(check_result_t *result, ol_result_t call, const char *what) {
  if (call == OL_SUCCESS)
    return true;
  return fail(result, "%s: %s", what, describe(call));
}
