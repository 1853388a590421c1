/* Printing what ran: the device list, the table of checks with footnotes and the
 * benchmark tables (report_table.c), or all of it as JSON (report_json.c). */
#ifndef OFFLOAD_CHECK_REPORT_H
#define OFFLOAD_CHECK_REPORT_H

#include "run.h"

#include <stdio.h>

/* The device list, before the checks run (so a user sees what was found even if a
 * check takes long). */
void print_devices(FILE *out, const report_t *report);
void print_table(FILE *out, const report_t *report);
void print_json(FILE *out, const report_t *report);

const char *status_name(check_status_t status);

#endif
