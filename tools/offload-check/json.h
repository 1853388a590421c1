/* Writing JSON values: strings escaped (control characters, quotes, backslashes, and
 * bytes that are not UTF-8, which become U+FFFD), numbers that are always valid. */
#ifndef OFFLOAD_CHECK_JSON_H
#define OFFLOAD_CHECK_JSON_H

#include <stdint.h>
#include <stdio.h>

void json_string(FILE *out, const char *text);
/* A finite number, or null (JSON has no NaN or infinity). */
void json_number(FILE *out, double value);
void json_u64(FILE *out, uint64_t value);

#endif
