/* Micro-benchmarks of the C API. Each result is the median over BATCHES batches of the
 * time per operation. Lines "RESULT <name> <ns per op>" are read by
 * scripts/run-benchmarks.sh, which runs this program under different environments
 * (memory pool on/off, validation on/off).
 *
 *   bench_offload [alloc|info|memcpy|all]
 */
#include <offload/liboffload.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_timing.h"
#include "bench_offload_util.h"

#define BATCHES 31

static ol_device_handle_t host;

/* ---- olMemAlloc + olMemFree pairs ---- */

typedef struct {
  size_t size;
  int pairs;
  double batch_ns[BATCHES]; /* per pair */
} alloc_job_t;

static void *alloc_loop(void *arg) {
  alloc_job_t *job = (alloc_job_t *)arg;
  void *p = NULL;
  for (int w = 0; w < job->pairs / 4 + 1; ++w) { /* warm-up: fills a pool, if any */
    check(olMemAlloc(host, OL_ALLOC_TYPE_DEVICE, job->size, &p), "olMemAlloc");
    check(olMemFree(p), "olMemFree");
  }
  for (int b = 0; b < BATCHES; ++b) {
    double start = now_ns();
    for (int i = 0; i < job->pairs; ++i) {
      check(olMemAlloc(host, OL_ALLOC_TYPE_DEVICE, job->size, &p), "olMemAlloc");
      check(olMemFree(p), "olMemFree");
    }
    job->batch_ns[b] = (now_ns() - start) / job->pairs;
  }
  return NULL;
}

static void bench_alloc(void) {
  static const size_t sizes[] = {64, 4096, 1u << 20};
  static const char *const names[] = {"64B", "4KiB", "1MiB"};
  for (size_t s = 0; s < 3; ++s) {
    for (int threads = 1; threads <= 2; ++threads) {
      alloc_job_t jobs[2];
      pthread_t ids[2];
      for (int t = 0; t < threads; ++t) {
        jobs[t].size = sizes[s];
        jobs[t].pairs = sizes[s] >= (1u << 20) ? 200 : 2000;
        if (pthread_create(&ids[t], NULL, alloc_loop, &jobs[t]) != 0)
          exit(1);
      }
      double all[2 * BATCHES];
      size_t n = 0;
      for (int t = 0; t < threads; ++t) {
        pthread_join(ids[t], NULL);
        for (int b = 0; b < BATCHES; ++b)
          all[n++] = jobs[t].batch_ns[b];
      }
      printf("RESULT alloc_free_%s_%dthread %.1f\n", names[s], threads, median(all, n));
    }
  }
}

/* ---- olGetDeviceInfo of a fixed-size value ---- */

static void bench_info(void) {
  const int calls = 20000;
  double batch[BATCHES];
  uint32_t units = 0;
  for (int b = 0; b < BATCHES; ++b) {
    double start = now_ns();
    for (int i = 0; i < calls; ++i)
      check(olGetDeviceInfo(host, OL_DEVICE_INFO_NUM_COMPUTE_UNITS, sizeof units, &units),
            "olGetDeviceInfo");
    batch[b] = (now_ns() - start) / calls;
  }
  printf("RESULT device_info_num_compute_units %.1f\n", median(batch, BATCHES));
}

/* ---- 64 MiB copies: olMemcpy host <-> host-device memory vs memcpy ---- */

static void bench_memcpy(void) {
  const size_t size = 64u << 20;
  unsigned char *plain = malloc(size);
  unsigned char *plain2 = malloc(size);
  unsigned char *device = NULL;
  if (plain == NULL || plain2 == NULL)
    exit(1);
  check(olMemAlloc(host, OL_ALLOC_TYPE_DEVICE, size, (void **)&device), "olMemAlloc");
  memset(plain, 1, size); /* touch every page before timing */
  memset(plain2, 2, size);
  const unsigned char zero = 0;
  check(olMemFill(NULL, device, 1, &zero, size), "olMemFill");
  /* Host-device memory is host memory, so plain memcpy can do the same copies. */
  double ol_to[BATCHES], ol_from[BATCHES], libc_to[BATCHES], libc_from[BATCHES];
  for (int b = 0; b < BATCHES; ++b) {
    double t0 = now_ns();
    check(olMemcpy(NULL, device, host, plain, host, size), "olMemcpy to device");
    double t1 = now_ns();
    check(olMemcpy(NULL, plain2, host, device, host, size), "olMemcpy from device");
    double t2 = now_ns();
    memcpy(device, plain2, size);
    double t3 = now_ns();
    memcpy(plain, device, size);
    double t4 = now_ns();
    ol_to[b] = t1 - t0;
    ol_from[b] = t2 - t1;
    libc_to[b] = t3 - t2;
    libc_from[b] = t4 - t3;
  }
  if (plain[size - 1] != 1) /* the copies carried the first buffer's bytes all around */
    fprintf(stderr, "unexpected byte %u\n", plain[size - 1]);
  printf("RESULT memcpy64MiB_olMemcpy_host_to_device %.0f\n", median(ol_to, BATCHES));
  printf("RESULT memcpy64MiB_libc_host_to_device %.0f\n", median(libc_to, BATCHES));
  printf("RESULT memcpy64MiB_olMemcpy_device_to_host %.0f\n", median(ol_from, BATCHES));
  printf("RESULT memcpy64MiB_libc_device_to_host %.0f\n", median(libc_from, BATCHES));
  check(olMemFree(device), "olMemFree");
  free(plain);
  free(plain2);
}

int main(int argc, char **argv) {
  const char *which = argc > 1 ? argv[1] : "all";
  check(olInit(), "olInit");
  check(olIterateDevices(find_host, &host), "olIterateDevices");
  if (host == NULL)
    return 1;
  bool all = strcmp(which, "all") == 0;
  if (all || strcmp(which, "alloc") == 0)
    bench_alloc();
  if (all || strcmp(which, "info") == 0)
    bench_info();
  if (all || strcmp(which, "memcpy") == 0)
    bench_memcpy();
  check(olShutDown(), "olShutDown");
  return 0;
}
