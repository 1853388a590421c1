/* offload-check: does this machine's hardware work through liboffload? Lists every
 * device, runs the conformance checks (and with --bench the benchmarks) on each, and
 * prints a table or JSON. Exit status: 0 nothing FAILED, 1 something did, 2 bad usage. */
#include "options.h"
#include "report.h"
#include "run.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  options_t options;
  const int early = parse_options(argc, argv, &options);
  if (early >= 0)
    return early;

  ol_result_t r = olInit();
  if (r != OL_SUCCESS) {
    fprintf(stderr, "offload-check: olInit failed: %s\n", describe(r));
    return EXIT_SOMETHING_FAILED;
  }
  report_t *report = calloc(1, sizeof *report);
  char why[512];
  int status = EXIT_SOMETHING_FAILED;
  if (report == NULL) {
    fprintf(stderr, "offload-check: out of memory\n");
    goto shut_down;
  }
  r = olGetVersion(&report->version[0], &report->version[1], &report->version[2]);
  if (r != OL_SUCCESS)
    fprintf(stderr, "offload-check: olGetVersion: %s\n", describe(r));
  if (!collect_devices(&report->devices, why, sizeof why)) {
    fprintf(stderr, "offload-check: %s\n", why);
    goto shut_down;
  }
  if (options.device >= 0 && (size_t)options.device >= report->devices.count) {
    fprintf(stderr, "offload-check: --device %d: there %s %zu device%s (0 to %zu)\n",
            options.device, report->devices.count == 1 ? "is" : "are", report->devices.count,
            report->devices.count == 1 ? "" : "s", report->devices.count - 1);
    status = EXIT_USAGE;
    goto shut_down;
  }
  if (!options.json)
    print_devices(stdout, report);
  run_all(report, &options);
  if (options.json)
    print_json(stdout, report);
  else
    print_table(stdout, report);
  status = report_exit_status(report);

shut_down:
  free(report);
  /* Reported, not counted: after a GPU's fault check its context is spoiled, and
   * shutting it down may say so. */
  r = olShutDown();
  if (r != OL_SUCCESS)
    fprintf(stderr, "offload-check: olShutDown: %s\n", describe(r));
  fflush(stdout);
  return status;
}
