/* olGetErrcName (extension): every ol_errc_t enumerator's own name, as the header spells
 * it; "OL_ERRC_UNKNOWN_CODE" for any other value (the sentinels, negative and huge
 * values); never NULL; static strings; before olInit, while initialised and after the
 * last olShutDown alike. */
#include "offload_test.h"

/* The header's enumerator and its name, spelled once. */
#define ERRC(name) {name, #name}

static const struct {
  ol_errc_t code;
  const char *name;
} codes[] = {
    ERRC(OL_ERRC_SUCCESS),          ERRC(OL_ERRC_UNKNOWN),
    ERRC(OL_ERRC_HOST_IO),          ERRC(OL_ERRC_INVALID_BINARY),
    ERRC(OL_ERRC_INVALID_NULL_POINTER), ERRC(OL_ERRC_INVALID_ARGUMENT),
    ERRC(OL_ERRC_NOT_FOUND),        ERRC(OL_ERRC_OUT_OF_RESOURCES),
    ERRC(OL_ERRC_INVALID_SIZE),     ERRC(OL_ERRC_INVALID_ENUMERATION),
    ERRC(OL_ERRC_HOST_TOOL_NOT_FOUND), ERRC(OL_ERRC_INVALID_VALUE),
    ERRC(OL_ERRC_UNIMPLEMENTED),    ERRC(OL_ERRC_UNSUPPORTED),
    ERRC(OL_ERRC_ASSEMBLE_FAILURE), ERRC(OL_ERRC_COMPILE_FAILURE),
    ERRC(OL_ERRC_LINK_FAILURE),     ERRC(OL_ERRC_BACKEND_FAILURE),
    ERRC(OL_ERRC_UNINITIALIZED),    ERRC(OL_ERRC_INVALID_NULL_HANDLE),
    ERRC(OL_ERRC_INVALID_PLATFORM), ERRC(OL_ERRC_INVALID_DEVICE),
    ERRC(OL_ERRC_INVALID_QUEUE),    ERRC(OL_ERRC_INVALID_EVENT),
    ERRC(OL_ERRC_SYMBOL_KIND),
};
#define NUM_CODES (sizeof codes / sizeof codes[0])

static bool named(ol_errc_t code, const char *want) {
  const char *got = olGetErrcName(code);
  if (got == NULL) {
    fprintf(stderr, "olGetErrcName(%d) is NULL\n", (int)code);
    return false;
  }
  if (strcmp(got, want) != 0) {
    fprintf(stderr, "olGetErrcName(%d) is \"%s\", want \"%s\"\n", (int)code, got, want);
    return false;
  }
  /* A static string: asked again, the same one. */
  return olGetErrcName(code) == got;
}

/* Every name, and every value no enumerator has. */
static void all_names(void) {
  CHECK(NUM_CODES == (size_t)OL_ERRC_LAST); /* each enumerator below the sentinel */
  for (size_t i = 0; i < NUM_CODES; ++i)
    CHECK(named(codes[i].code, codes[i].name));
  const char *unknown = "OL_ERRC_UNKNOWN_CODE";
  CHECK(named(OL_ERRC_LAST, unknown));
  CHECK(named((ol_errc_t)(OL_ERRC_LAST + 1), unknown));
  CHECK(named((ol_errc_t)0x10000, unknown)); /* where extension enumerators start */
  CHECK(named(OL_ERRC_FORCE_UINT32, unknown));
  CHECK(named((ol_errc_t)-1, unknown));
  CHECK(named((ol_errc_t)INT32_MIN, unknown));
  CHECK(named((ol_errc_t)0xffffffffu, unknown));
  CHECK(named((ol_errc_t)0x80000000u, unknown));
}

int main(void) {
  all_names(); /* before olInit: it needs no initialisation */

  REQUIRE_OK(olInit());
  all_names();
  /* What a failed call returns is named by its code. */
  ol_result_t r = olMemFree(NULL);
  CHECK(r != OL_SUCCESS && strcmp(olGetErrcName(r->Code), "OL_ERRC_INVALID_NULL_POINTER") == 0);
  CHECK_OK(olShutDown());

  all_names(); /* after the last olShutDown */
  return test_finish("test_errc_name");
}
