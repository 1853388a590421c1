/* JSON strings and numbers. */
#include "json.h"

#include <inttypes.h>
#include <math.h>

/* The length of the valid UTF-8 sequence at `s` (1 to 4), or 0 if it is not one. */
static int utf8_length(const unsigned char *s) {
  if (s[0] < 0x80)
    return 1;
  int length;
  uint32_t code;
  if ((s[0] & 0xe0) == 0xc0) {
    length = 2;
    code = s[0] & 0x1fu;
  } else if ((s[0] & 0xf0) == 0xe0) {
    length = 3;
    code = s[0] & 0x0fu;
  } else if ((s[0] & 0xf8) == 0xf0) {
    length = 4;
    code = s[0] & 0x07u;
  } else {
    return 0;
  }
  for (int i = 1; i < length; ++i) {
    if ((s[i] & 0xc0) != 0x80) /* also stops at the terminating NUL */
      return 0;
    code = (code << 6) | (s[i] & 0x3fu);
  }
  static const uint32_t smallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (code < smallest[length] || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff))
    return 0; /* overlong, out of range, or a surrogate */
  return length;
}

void json_string(FILE *out, const char *text) {
  const unsigned char *s = (const unsigned char *)(text != NULL ? text : "");
  fputc('"', out);
  while (*s != '\0') {
    const unsigned char c = *s;
    if (c == '"' || c == '\\') {
      fputc('\\', out);
      fputc(c, out);
      ++s;
    } else if (c == '\n') {
      fputs("\\n", out);
      ++s;
    } else if (c == '\t') {
      fputs("\\t", out);
      ++s;
    } else if (c == '\r') {
      fputs("\\r", out);
      ++s;
    } else if (c < 0x20 || c == 0x7f) {
      fprintf(out, "\\u%04x", c);
      ++s;
    } else {
      const int length = utf8_length(s);
      if (length == 0) {
        fputs("\\ufffd", out);
        ++s;
      } else {
        fwrite(s, 1, (size_t)length, out);
        s += length;
      }
    }
  }
  fputc('"', out);
}

void json_number(FILE *out, double value) {
  if (isfinite(value))
    fprintf(out, "%.6g", value);
  else
    fputs("null", out);
}

void json_u64(FILE *out, uint64_t value) { fprintf(out, "%" PRIu64, value); }
