/* Common: olInit and olInitWithArgs (NULL and OL_INIT_ARGS_INIT), their shared reference
 * count, bad init arguments, OFFLOAD_PLATFORMS, olShutDown, olGetVersion. */
#include "offload_test.h"

/* olGetVersion reports the library's own version, which the header carries as
 * LIBOFFLOAD_VERSION_* (its OL_VERSION_* are LLVM's API version). */
static void version_matches_header(void) {
  uint32_t major = 99, minor = 99, patch = 99;
  CHECK_OK(olGetVersion(&major, &minor, &patch));
  CHECK_EQ(major, LIBOFFLOAD_VERSION_MAJOR);
  CHECK_EQ(minor, LIBOFFLOAD_VERSION_MINOR);
  CHECK_EQ(patch, LIBOFFLOAD_VERSION_PATCH);
  CHECK_ERR(INVALID_NULL_POINTER, olGetVersion(NULL, &minor, &patch));
  CHECK_ERR(INVALID_NULL_POINTER, olGetVersion(&major, NULL, &patch));
  CHECK_ERR(INVALID_NULL_POINTER, olGetVersion(&major, &minor, NULL));
}

static void bad_init_arguments(void) {
  /* None of these may take a reference: the final count is checked by the caller. */
  ol_init_args_t args = OL_INIT_ARGS_INIT;
  args.Size = 0;
  CHECK_ERR(INVALID_SIZE, olInitWithArgs(&args));
  args.Size = sizeof(ol_init_args_t) - 1;
  CHECK_ERR(INVALID_SIZE, olInitWithArgs(&args));

  ol_init_args_t no_list = OL_INIT_ARGS_INIT;
  no_list.NumPlatforms = 1;
  no_list.Platforms = NULL;
  CHECK_ERR(INVALID_NULL_POINTER, olInitWithArgs(&no_list));

  const ol_platform_backend_t bad[] = {OL_PLATFORM_BACKEND_HOST, 7};
  ol_init_args_t bad_backend = OL_INIT_ARGS_INIT;
  bad_backend.NumPlatforms = 2;
  bad_backend.Platforms = bad;
  CHECK_ERR(INVALID_ENUMERATION, olInitWithArgs(&bad_backend));
  const ol_platform_backend_t huge[] = {0xffffffffu};
  bad_backend.NumPlatforms = 1;
  bad_backend.Platforms = huge;
  CHECK_ERR(INVALID_ENUMERATION, olInitWithArgs(&bad_backend));
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

/* OFFLOAD_PLATFORMS chooses the backends of olInit (read at each olInit); a name that
 * is no backend is INVALID_VALUE and takes no reference. Called uninitialised. */
static void platforms_from_environment(void) {
  uint32_t a, b, c;
  REQUIRE(setenv("OFFLOAD_PLATFORMS", "host", 1) == 0);
  host_backend_count = 0;
  REQUIRE_OK(olInit());
  CHECK_OK(olIteratePlatforms(count_host_platforms, NULL));
  CHECK_EQ(host_backend_count, 1);
  CHECK_OK(olShutDown());

  /* Backends whose vendor library is absent are skipped, as with olInitWithArgs. */
  REQUIRE(setenv("OFFLOAD_PLATFORMS", "host,cuda", 1) == 0);
  host_backend_count = 0;
  REQUIRE_OK(olInit());
  CHECK_OK(olIteratePlatforms(count_host_platforms, NULL));
  CHECK_EQ(host_backend_count, 1);
  CHECK_OK(olShutDown());

  REQUIRE(setenv("OFFLOAD_PLATFORMS", "host,no_such_backend", 1) == 0);
  CHECK_DETAILS(INVALID_VALUE, "no_such_backend", olInit());
  CHECK_ERR(INVALID_VALUE, olInitWithArgs(NULL));
  CHECK_ERR(UNINITIALIZED, olGetVersion(&a, &b, &c));
  REQUIRE(unsetenv("OFFLOAD_PLATFORMS") == 0);
}

int main(void) {
  /* Before the first olInit. */
  uint32_t a, b, c;
  CHECK_ERR(UNINITIALIZED, olGetVersion(&a, &b, &c));
  CHECK_ERR(UNINITIALIZED, olShutDown());

  /* Bad arguments before any successful olInit leave the library uninitialised. */
  bad_init_arguments();
  CHECK_ERR(UNINITIALIZED, olGetVersion(&a, &b, &c));

  /* olInit: every backend. */
  REQUIRE_OK(olInit());
  version_matches_header();

  /* olInitWithArgs with OL_INIT_ARGS_INIT: a second reference, same runtime. */
  ol_init_args_t args = OL_INIT_ARGS_INIT;
  CHECK_EQ(args.Size, sizeof(ol_init_args_t));
  CHECK_EQ(args.NumPlatforms, 0);
  CHECK(args.Platforms == NULL);
  REQUIRE_OK(olInitWithArgs(&args));
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
  REQUIRE_OK(olInitWithArgs(&host_only));
  CHECK_OK(olIteratePlatforms(count_host_platforms, NULL));
  CHECK_EQ(host_backend_count, 1);
  CHECK_OK(olShutDown());

  /* Listing a backend whose vendor library is absent is not an error. */
  const ol_platform_backend_t gpus[] = {OL_PLATFORM_BACKEND_CUDA, OL_PLATFORM_BACKEND_AMDGPU,
                                        OL_PLATFORM_BACKEND_LEVEL_ZERO};
  ol_init_args_t gpu_args = OL_INIT_ARGS_INIT;
  gpu_args.NumPlatforms = 3;
  gpu_args.Platforms = gpus;
  REQUIRE_OK(olInitWithArgs(&gpu_args));
  host_backend_count = 0;
  CHECK_OK(olIteratePlatforms(count_host_platforms, NULL));
  CHECK_EQ(host_backend_count, 1);
  CHECK_OK(olShutDown());

  platforms_from_environment();

  /* Many cycles in a row; olInitWithArgs(NULL) is olInit. */
  for (int i = 0; i < 50; ++i) {
    CHECK_OK(olInit());
    CHECK_OK(olInitWithArgs(NULL));
    CHECK_OK(olShutDown());
    CHECK_OK(olShutDown());
  }
  CHECK_ERR(UNINITIALIZED, olShutDown());
  return test_finish("test_init");
}
