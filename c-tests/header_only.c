/* The header alone, twice (include guard), compiled as C99 and C11 by check_header. */
#include <offload/liboffload.h>
#include <offload/liboffload.h>

int header_probe(void);
int header_probe(void) {
  ol_init_args_t args = OL_INIT_ARGS_INIT;
  ol_code_location_t loc = {"header_probe", __FILE__, __LINE__, 0};
  ol_result_t result = olInitWithCodeLoc(&args, &loc);
  ol_errc_t code = result == OL_SUCCESS ? OL_ERRC_SUCCESS : result->Code;
  return (int)(code + OL_VERSION_MAJOR);
}
