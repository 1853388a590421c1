/* Common: olInit (NULL and OL_INIT_ARGS_INIT), its reference count, bad init
 * arguments, olShutDown, olGetVersion. */
#include "offload_test.h"

static void version_matches_header(void) {
  uint32_t major = 99, minor = 99, patch = 99;
  CHECK_OK(olGetVersion(&major, &minor, &patch));
  CHECK_EQ(major, OL_VERSION_MAJOR);
  CHECK_EQ(minor, OL_VERSION_MINOR);
  CHECK_EQ(patch, OL_VERSION_PATCH);
  CHECK_ERR(INVALID_NULL_POINTER, olGetVersion(NULL, &minor, &patch));
  CHECK_ERR(INVALID_NULL_POINTER, olGetVersion(&major, NULL, &patch));
  CHECK_ERR(INVALID_NULL_POINTER, olGetVersion(&major, &minor, NULL));
}

static void bad_init_arguments(void) {
  /* None of these may take a reference: the final count is checked by the caller. */
  ol_init_args_t args = OL_INIT_ARGS_INIT;
  args.Size = 0;
  CHECK_ERR(INVALID_SIZE, olInit(&args));
  args.Size = sizeof(ol_init_args_t) - 1;
  CHECK_ERR(INVALID_SIZE, olInit(&args));

  ol_init_args_t no_list = OL_INIT_ARGS_INIT;
  no_list.NumPlatforms = 1;
  no_list.Platforms = NULL;
  CHECK_ERR(INVALID_NULL_POINTER, olInit(&no_list));

  const ol_platform_backend_t bad[] = {OL_PLATFORM_BACKEND_HOST, 7};
  ol_init_args_t bad_backend = OL_INIT_ARGS_INIT;
  bad_backend.NumPlatforms = 2;
  bad_backend.Platforms = bad;
  CHECK_ERR(INVALID_ENUMERATION, olInit(&bad_backend));
  const ol_platform_backend_t huge[] = {0xffffffffu};
  bad_backend.NumPlatforms = 1;
  bad_backend.Platforms = huge;
  CHECK_ERR(INVALID_ENUMERATION, olInit(&bad_backend));
}

static uint32_t host_backend_count;
static bool count_host_platforms(ol_platform_handle_t platform, void *user_data) {
  ol_platform_backend_t backend = 0;
  CHECK_OK(olGetPlatformInfo(platform, OL_PLATFORM_INFO_BACKEND, sizeof backend, &backend));
  if (backend == OL_PLATFORM_BACKEND_HOST)
    ++host_backend_count;
  (void)user_data;
  return true;
}

int main(void) {
  /* Before the first olInit. */
  uint32_t a, b, c;
  CHECK_ERR(UNINITIALIZED, olGetVersion(&a, &b, &c));
  CHECK_ERR(UNINITIALIZED, olShutDown());

  /* Bad arguments before any successful olInit leave the library uninitialised. */
  bad_init_arguments();
  CHECK_ERR(UNINITIALIZED, olGetVersion(&a, &b, &c));

  /* olInit(NULL): every backend. */
  REQUIRE_OK(olInit(NULL));
  version_matches_header();

  /* olInit with OL_INIT_ARGS_INIT: a second reference, same runtime. */
  ol_init_args_t args = OL_INIT_ARGS_INIT;
  CHECK_EQ(args.Size, sizeof(ol_init_args_t));
  CHECK_EQ(args.NumPlatforms, 0);
  CHECK(args.Platforms == NULL);
  REQUIRE_OK(olInit(&args));
  bad_init_arguments(); /* with the library up: still no reference taken */
  version_matches_header();

  /* Two references: two shutdowns succeed, the third finds nothing to release. */
  CHECK_OK(olShutDown());
  CHECK_OK(olGetVersion(&a, &b, &c)); /* one reference left */
  CHECK_OK(olShutDown());
  CHECK_ERR(UNINITIALIZED, olGetVersion(&a, &b, &c));
  CHECK_ERR(UNINITIALIZED, olShutDown());
  CHECK_ERR(UNINITIALIZED, olShutDown());

  /* Up again, choosing only the host backend: the host platform is there, once. */
  const ol_platform_backend_t only_host[] = {OL_PLATFORM_BACKEND_HOST};
  ol_init_args_t host_only = OL_INIT_ARGS_INIT;
  host_only.NumPlatforms = 1;
  host_only.Platforms = only_host;
  REQUIRE_OK(olInit(&host_only));
  CHECK_OK(olIteratePlatforms(count_host_platforms, NULL));
  CHECK_EQ(host_backend_count, 1);
  CHECK_OK(olShutDown());

  /* Listing a backend whose vendor library is absent is not an error. */
  const ol_platform_backend_t gpus[] = {OL_PLATFORM_BACKEND_CUDA, OL_PLATFORM_BACKEND_AMDGPU,
                                        OL_PLATFORM_BACKEND_LEVEL_ZERO};
  ol_init_args_t gpu_args = OL_INIT_ARGS_INIT;
  gpu_args.NumPlatforms = 3;
  gpu_args.Platforms = gpus;
  REQUIRE_OK(olInit(&gpu_args));
  host_backend_count = 0;
  CHECK_OK(olIteratePlatforms(count_host_platforms, NULL));
  CHECK_EQ(host_backend_count, 1);
  CHECK_OK(olShutDown());

  /* Many cycles in a row. */
  for (int i = 0; i < 50; ++i) {
    CHECK_OK(olInit(NULL));
    CHECK_OK(olInit(NULL));
    CHECK_OK(olShutDown());
    CHECK_OK(olShutDown());
  }
  CHECK_ERR(UNINITIALIZED, olShutDown());
  return test_finish("test_init");
}
