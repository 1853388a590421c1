/* Parsing the few options; anything else is a usage error (exit status 2). */
#include "options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out) {
  fputs("usage: offload-check [--json] [--bench [--quick]] [--device N] [--help]\n"
        "\n"
        "Lists every platform and device liboffload finds, runs a short conformance set on\n"
        "each device (memory, copies, fills, queues, events, host functions, kernels) and\n"
        "prints a table of the results: ok, FAILED: why, or unsupported: why.\n"
        "\n"
        "  --json       the same results as JSON on stdout\n"
        "  --bench      also measure launches, syncs, events, allocations and copies (and the\n"
        "               same through the CUDA driver directly, where it is installed)\n"
        "  --quick      with --bench: small sizes and few repetitions (seconds, not minutes)\n"
        "  --device N   only device N (the numbers of the device list)\n"
        "  --help       this text\n"
        "\n"
        "Exit status: 0 when no check FAILED, 1 when one did, 2 for a bad command line.\n",
        out);
}

static int bad_usage(const char *format, const char *what) {
  fprintf(stderr, "offload-check: ");
  fprintf(stderr, format, what);
  fprintf(stderr, "\n");
  usage(stderr);
  return EXIT_USAGE;
}

int parse_options(int argc, char **argv, options_t *options) {
  options->json = false;
  options->bench = false;
  options->quick = false;
  options->device = -1;
  for (int i = 1; i < argc; ++i) {
    const char *arg = argv[i];
    if (strcmp(arg, "--json") == 0) {
      options->json = true;
    } else if (strcmp(arg, "--bench") == 0) {
      options->bench = true;
    } else if (strcmp(arg, "--quick") == 0) {
      options->quick = true;
    } else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      usage(stdout);
      return EXIT_ALL_OK;
    } else if (strcmp(arg, "--device") == 0 || strncmp(arg, "--device=", 9) == 0) {
      const char *value = arg[8] == '=' ? arg + 9 : (i + 1 < argc ? argv[++i] : NULL);
      if (value == NULL)
        return bad_usage("%s needs a device number", "--device");
      char *end = NULL;
      errno = 0;
      long n = strtol(value, &end, 10);
      if (value[0] == '\0' || *end != '\0' || errno != 0 || n < 0 || n > 1000000)
        return bad_usage("--device wants a device number, not \"%s\"", value);
      options->device = (int)n;
    } else {
      return bad_usage("unknown option \"%s\"", arg);
    }
  }
  if (options->quick && !options->bench)
    return bad_usage("%s only applies with --bench", "--quick");
  return -1;
}
