/* Reading a whole file (a device image), for the benchmarks: this header needs no
 * offload header, so the programs built against LLVM's OffloadAPI.h use it too. */
#ifndef OFFLOAD_BENCH_FILE_H
#define OFFLOAD_BENCH_FILE_H

#include <stdio.h>
#include <stdlib.h>

/* The whole file at `path` (its length in *length); exits when it cannot be read. */
static inline char *read_whole_file(const char *path, size_t *length) {
  FILE *file = fopen(path, "rb");
  if (!file) {
    perror(path);
    exit(1);
  }
  fseek(file, 0, SEEK_END);
  long size = ftell(file);
  fseek(file, 0, SEEK_SET);
  char *bytes = malloc(size > 0 ? (size_t)size : 1);
  if (size < 0 || !bytes || fread(bytes, 1, (size_t)size, file) != (size_t)size) {
    fprintf(stderr, "%s: cannot read it\n", path);
    exit(1);
  }
  fclose(file);
  *length = (size_t)size;
  return bytes;
}

#endif
