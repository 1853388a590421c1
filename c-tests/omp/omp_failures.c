/* Failures that must end the program as LLVM's libomptarget ends it: one case per
 * run, chosen by the first argument. */
#include <omp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A binary registered by hand whose requires entries disagree on reverse_offload, in
 * the entry layout of the compiler's release (LLVM 22's entries of version 0 are read
 * as LLVM reads them). */
static int anchor;
static char no_name[] = "";
#if __clang_major__ >= 20
typedef struct {
  uint64_t reserved;
  uint16_t version, kind;
  uint32_t flags;
  void *address;
  char *name;
  uint64_t size, data;
  void *aux;
} req_entry;
#define REQ_ENTRY(value) {0, 0, 1, 0x10, NULL, no_name, 0, (value), NULL}
#else
typedef struct {
  void *address;
  char *name;
  size_t size;
  int32_t flags, data;
} req_entry;
#define REQ_ENTRY(value) {&anchor, no_name, 0, 0x10, (value)}
#endif
typedef struct {
  void *start, *end;
  req_entry *entries_begin, *entries_end;
} req_image;
typedef struct {
  int32_t count;
  req_image *images;
  req_entry *entries_begin, *entries_end;
} req_binary;
void __tgt_register_lib(req_binary *binary);

static void register_inconsistent_requires(void) {
  static req_entry entries[] = {REQ_ENTRY(1), REQ_ENTRY(2)};
  static req_image image = {NULL, NULL, &entries[0], &entries[2]};
  static req_binary binary = {1, &image, &entries[0], &entries[2]};
  (void)anchor;
  __tgt_register_lib(&binary);
}

/* A mapper whose component must be present: each construct through it fails inside the
 * mapper (LLVM 22 words the targetDataBegin line of that failure without a period). */
typedef struct {
  int x, y;
} pair_t;
#pragma omp declare mapper(needs_y : pair_t p) map(present, tofrom : p.y)
static pair_t pair;

int main(int argc, char **argv) {
  const char *which = argc > 1 ? argv[1] : "";
  int a[4] = {1, 2, 3, 4};
  int b = 3;
  printf("case %s\n", which);
  fflush(stdout);
  if (!strcmp(which, "present-region")) {
#pragma omp target map(present, to : a) map(tofrom : b)
    { b += a[0]; }
  } else if (!strcmp(which, "present-enter")) {
#pragma omp target enter data map(present, to : a)
  } else if (!strcmp(which, "present-exit")) {
#pragma omp target exit data map(present, from : a)
  } else if (!strcmp(which, "present-update")) {
#pragma omp target update to(present : a)
  } else if (!strcmp(which, "extension")) {
#pragma omp target enter data map(to : a[0 : 2])
#pragma omp target map(tofrom : a[0 : 4])
    { a[3] = 0; }
  } else if (!strcmp(which, "bad-device")) {
#pragma omp target device(42) map(tofrom : b)
    { b = 1; }
  } else if (!strcmp(which, "mapper-enter")) {
#pragma omp target enter data map(mapper(needs_y), to : pair)
  } else if (!strcmp(which, "mapper-exit")) {
#pragma omp target exit data map(mapper(needs_y), from : pair)
  } else if (!strcmp(which, "mapper-update")) {
#pragma omp target update to(mapper(needs_y) : pair)
  } else if (!strcmp(which, "mapper-region")) {
#pragma omp target map(mapper(needs_y), tofrom : pair)
    { pair.y = 1; }
  } else if (!strcmp(which, "requires-mismatch")) {
    register_inconsistent_requires();
  } else {
    printf("unknown case\n");
    return 2;
  }
  printf("not reached: %d %d %d\n", a[0], b, pair.y);
  return 0;
}
