/* 16 threads at once, each allocating (1 B .. 2 MiB, every type), filling, copying,
 * querying and freeing, many iterations, every byte checked. */
#include "offload_test.h"

#include <pthread.h>

#define THREADS 16
#define ITERATIONS 120
#define MAX_SIZE (2u << 20)

static ol_device_handle_t host;

typedef struct {
  unsigned id;
  int failures;
  unsigned char *scratch; /* MAX_SIZE bytes of plain host memory */
} worker_t;

static uint32_t next_random(uint32_t *state) {
  *state = *state * 1664525u + 1013904223u;
  return *state >> 8;
}

static size_t pick_size(uint32_t *state) {
  static const size_t limits[] = {64, 4096, 65536, MAX_SIZE};
  size_t limit = limits[next_random(state) % 4];
  return 1 + next_random(state) % limit;
}

#define WORKER_CHECK(w, call)                                                          \
  do {                                                                                 \
    ol_result_t r_ = (call);                                                           \
    if (r_ != OL_SUCCESS) {                                                            \
      fprintf(stderr, "thread %u: %s: OL_ERRC_%s: %s\n", (w)->id, #call,               \
              errc_name(r_->Code), r_->Details);                                       \
      ++(w)->failures;                                                                 \
      return;                                                                          \
    }                                                                                  \
  } while (0)
#define WORKER_EXPECT(w, cond)                                                         \
  do {                                                                                 \
    if (!(cond)) {                                                                     \
      fprintf(stderr, "thread %u: failed: %s\n", (w)->id, #cond);                      \
      ++(w)->failures;                                                                 \
      return;                                                                          \
    }                                                                                  \
  } while (0)

static void one_round(worker_t *w, uint32_t *state) {
  static const ol_alloc_type_t types[] = {OL_ALLOC_TYPE_HOST, OL_ALLOC_TYPE_DEVICE,
                                          OL_ALLOC_TYPE_MANAGED};
  static const size_t pattern_sizes[] = {1, 2, 4, 8};
  size_t size = pick_size(state);
  ol_alloc_type_t type = types[next_random(state) % 3];
  size_t pattern_size = pattern_sizes[next_random(state) % 4];
  size_t fill = size - size % pattern_size;
  unsigned char pattern[8];
  for (size_t i = 0; i < sizeof pattern; ++i)
    pattern[i] = (unsigned char)(w->id * 16 + i + 1);

  unsigned char *a = NULL, *b = NULL;
  WORKER_CHECK(w, olMemAlloc(host, type, size, (void **)&a));
  WORKER_CHECK(w, olMemAlloc(host, OL_ALLOC_TYPE_DEVICE, size, (void **)&b));
  WORKER_EXPECT(w, (uintptr_t)a % 64 == 0 && (uintptr_t)b % 64 == 0);
  const unsigned char tail = (unsigned char)(0xf0 | w->id);
  WORKER_CHECK(w, olMemFill(NULL, a, 1, &tail, size));
  if (fill > 0)
    WORKER_CHECK(w, olMemFill(NULL, a, pattern_size, pattern, fill));
  WORKER_CHECK(w, olMemcpy(NULL, b, host, a, host, size));

  /* Queries from an interior pointer. */
  const unsigned char *inside = b + size / 2;
  void *base = NULL;
  size_t got_size = 0;
  ol_alloc_type_t got_type = 99;
  WORKER_CHECK(w, olGetMemInfo(inside, OL_MEM_INFO_BASE, sizeof base, &base));
  WORKER_CHECK(w, olGetMemInfo(inside, OL_MEM_INFO_SIZE, sizeof got_size, &got_size));
  WORKER_CHECK(w, olGetMemInfo(a, OL_MEM_INFO_TYPE, sizeof got_type, &got_type));
  WORKER_EXPECT(w, base == b && got_size == size && got_type == type);

  memset(w->scratch, 0, size);
  WORKER_CHECK(w, olMemcpy(NULL, w->scratch, host, b, host, size));
  for (size_t i = 0; i < size; ++i) {
    unsigned char want = i < fill ? pattern[i % pattern_size] : tail;
    if (w->scratch[i] != want) {
      fprintf(stderr, "thread %u: byte %zu of %zu is %#x, want %#x\n", w->id, i, size,
              w->scratch[i], want);
      ++w->failures;
      break;
    }
  }
  WORKER_CHECK(w, olMemFree(a));
  WORKER_CHECK(w, olMemFree(b));
  /* No second free of `a` here: another thread may have been given the same address by
   * now, and freeing it would free that thread's memory (the test, not the library, would
   * be wrong). test_memory checks double frees, on one thread. */
}

static void *worker_main(void *arg) {
  worker_t *w = (worker_t *)arg;
  uint32_t state = 0x9e3779b9u * (w->id + 1);
  for (int i = 0; i < ITERATIONS && w->failures == 0; ++i)
    one_round(w, &state);
  return NULL;
}

int main(void) {
  REQUIRE_OK(olInit());
  host = host_device();
  pthread_t threads[THREADS];
  worker_t workers[THREADS];
  for (unsigned i = 0; i < THREADS; ++i) {
    workers[i].id = i;
    workers[i].failures = 0;
    workers[i].scratch = (unsigned char *)malloc(MAX_SIZE);
    REQUIRE(workers[i].scratch != NULL);
  }
  for (unsigned i = 0; i < THREADS; ++i)
    REQUIRE(pthread_create(&threads[i], NULL, worker_main, &workers[i]) == 0);
  for (unsigned i = 0; i < THREADS; ++i) {
    REQUIRE(pthread_join(threads[i], NULL) == 0);
    CHECK_EQ(workers[i].failures, 0);
    free(workers[i].scratch);
  }
  CHECK_OK(olShutDown());
  return test_finish("test_threads");
}
