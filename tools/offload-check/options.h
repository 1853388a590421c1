/* offload-check's command line. */
#ifndef OFFLOAD_CHECK_OPTIONS_H
#define OFFLOAD_CHECK_OPTIONS_H

#include <stdbool.h>

typedef struct {
  bool json;   /* --json: results as JSON on stdout instead of the table */
  bool bench;  /* --bench: add the benchmarks */
  bool quick;  /* --quick: benchmarks with small sizes and few repetitions */
  int device;  /* --device N: only device N (-1: every device) */
} options_t;

/* Exit statuses. */
enum { EXIT_ALL_OK = 0, EXIT_SOMETHING_FAILED = 1, EXIT_USAGE = 2 };

/* Parses argv. Returns -1 to go on, or the status to exit with (after --help, or a usage
 * error, which it has reported on stderr). */
int parse_options(int argc, char **argv, options_t *options);

#endif
