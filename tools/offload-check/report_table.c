/* The human-readable report: devices, then rows = checks and columns = devices, with
 * reasons too long for a cell as numbered footnotes (one number per distinct reason). */
#include "report.h"

#include <inttypes.h>
#include <string.h>

enum { CELL_WIDTH_MIN = 12, INLINE_REASON_MAX = 28, MAX_NOTES = 256 };

/* One row of a table, padded cell by cell and printed without trailing blanks. */
typedef struct {
  char text[4096];
  size_t used;
} row_t;

static void row_add(row_t *row, int width, const char *cell) {
  if (row->used < sizeof row->text) {
    int n = snprintf(row->text + row->used, sizeof row->text - row->used, "%-*s", width, cell);
    if (n > 0)
      row->used += (size_t)n;
    if (row->used >= sizeof row->text)
      row->used = sizeof row->text - 1;
  }
}

static void row_print(FILE *out, row_t *row) {
  while (row->used > 0 && row->text[row->used - 1] == ' ')
    --row->used;
  row->text[row->used] = '\0';
  fprintf(out, "%s\n", row->text);
  row->used = 0;
}

const char *status_name(check_status_t status) {
  switch (status) {
  case STATUS_OK: return "ok";
  case STATUS_FAILED: return "FAILED";
  case STATUS_UNSUPPORTED: return "unsupported";
  default: return "not run";
  }
}

static void print_bytes(FILE *out, uint64_t bytes) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = (double)bytes;
  size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < sizeof units / sizeof units[0]) {
    value /= 1024.0;
    ++unit;
  }
  fprintf(out, unit == 0 ? "%.0f %s" : "%.1f %s", value, units[unit]);
}

void print_devices(FILE *out, const report_t *report) {
  fprintf(out, "offload-check: liboffload %" PRIu32 ".%" PRIu32 ".%" PRIu32
               " (LLVM offload API %d.%d.%d)\n\n",
          report->version[0], report->version[1], report->version[2], OL_VERSION_MAJOR,
          OL_VERSION_MINOR, OL_VERSION_PATCH);
  fprintf(out, "%zu device%s:\n", report->devices.count, report->devices.count == 1 ? "" : "s");
  for (size_t i = 0; i < report->devices.count; ++i) {
    const device_t *d = &report->devices.items[i];
    char label[32];
    device_label(d, label, sizeof label);
    fprintf(out, "  %-10s %s", label, d->name);
    if (strcmp(d->product_name, d->name) != 0 && strcmp(d->product_name, "?") != 0)
      fprintf(out, " (%s)", d->product_name);
    fprintf(out, ", %s, vendor %s, driver %s\n", device_type_name(d->type), d->vendor,
            d->driver_version);
    fprintf(out, "             platform %s %s; memory ", d->platform_name, d->platform_version);
    print_bytes(out, d->global_mem_size);
    fprintf(out, " (largest allocation ");
    print_bytes(out, d->max_mem_alloc_size);
    fprintf(out, "), local memory ");
    print_bytes(out, d->local_mem_size);
    fprintf(out, "\n             %" PRIu32 " compute units x %" PRIu32 " lanes, %" PRIu32
                 " MHz, memory clock %" PRIu32 " MHz, groups up to %" PRIu32 " (%" PRIu32
                 " x %" PRIu32 " x %" PRIu32 "), %" PRIu32 "-bit addresses\n",
            d->compute_units, d->lanes, d->max_clock_mhz, d->memory_clock_mhz, d->max_group_size,
            d->max_group_size_per_dim[0], d->max_group_size_per_dim[1],
            d->max_group_size_per_dim[2], d->address_bits);
    if (d->info_error[0] != '\0')
      fprintf(out, "             (an info query failed: %s)\n", d->info_error);
  }
  fputc('\n', out);
  fflush(out);
}

/* The numbered reasons below the table. */
typedef struct {
  const check_result_t *items[MAX_NOTES];
  size_t count;
} notes_t;

static size_t note_number(notes_t *notes, const check_result_t *result) {
  for (size_t i = 0; i < notes->count; ++i)
    if (notes->items[i]->status == result->status &&
        strcmp(notes->items[i]->reason, result->reason) == 0)
      return i + 1;
  if (notes->count == MAX_NOTES)
    return 0;
  notes->items[notes->count++] = result;
  return notes->count;
}

/* The cell's text: "ok", "FAILED: short why", or "unsupported [3]". */
static void cell_text(const check_result_t *result, notes_t *notes, char *cell, size_t size) {
  const char *status = status_name(result->status);
  if (result->status != STATUS_FAILED && result->status != STATUS_UNSUPPORTED) {
    snprintf(cell, size, "%s", status);
  } else if (strlen(result->reason) <= INLINE_REASON_MAX) {
    snprintf(cell, size, "%s: %s", status, result->reason);
  } else {
    snprintf(cell, size, "%s [%zu]", status, note_number(notes, result));
  }
}

static void print_checks(FILE *out, const report_t *report) {
  static notes_t notes; /* static: large, and printed once */
  static char cells[MAX_CHECKS][MAX_DEVICES][64];
  notes.count = 0;
  size_t width[MAX_DEVICES] = {0}, title_width = strlen("check");
  for (size_t c = 0; c < CHECK_COUNT; ++c)
    if (strlen(CHECKS[c].title) > title_width)
      title_width = strlen(CHECKS[c].title);
  /* Cells first, column by column, so footnotes number down each device's column. */
  for (size_t d = 0; d < report->devices.count; ++d) {
    if (!report->tested[d])
      continue;
    char label[32];
    device_label(&report->devices.items[d], label, sizeof label);
    width[d] = strlen(label) > CELL_WIDTH_MIN ? strlen(label) : CELL_WIDTH_MIN;
    for (size_t c = 0; c < CHECK_COUNT; ++c) {
      cell_text(&report->results[d][c], &notes, cells[c][d], sizeof cells[c][d]);
      if (strlen(cells[c][d]) > width[d])
        width[d] = strlen(cells[c][d]);
    }
  }
  static row_t row;
  row.used = 0;
  row_add(&row, (int)title_width, "check");
  for (size_t d = 0; d < report->devices.count; ++d)
    if (report->tested[d]) {
      char label[32];
      device_label(&report->devices.items[d], label, sizeof label);
      row_add(&row, 2, "");
      row_add(&row, (int)width[d], label);
    }
  row_print(out, &row);
  for (size_t c = 0; c < CHECK_COUNT; ++c) {
    row_add(&row, (int)title_width, CHECKS[c].title);
    for (size_t d = 0; d < report->devices.count; ++d)
      if (report->tested[d]) {
        row_add(&row, 2, "");
        row_add(&row, (int)width[d], cells[c][d]);
      }
    row_print(out, &row);
  }
  if (notes.count > 0)
    fputc('\n', out);
  for (size_t i = 0; i < notes.count; ++i)
    fprintf(out, "[%zu] %s\n", i + 1, notes.items[i]->reason);
}

static void add_measure(row_t *row, const measure_t *m, const char *unit) {
  char text[64];
  if (!m->valid)
    snprintf(text, sizeof text, "-");
  else if (strcmp(unit, "us") == 0)
    snprintf(text, sizeof text, "%.2f us (p90 %.2f)", m->median, m->p90);
  else
    snprintf(text, sizeof text, "%.2f GB/s", m->median);
  row_add(row, 2, "");
  row_add(row, 24, text);
}

static void print_bench(FILE *out, const report_t *report) {
  const bench_plan_t *plan = &report->plan;
  fprintf(out, "\nBenchmarks (medians; latencies with their 90th percentile; %zu repetitions, "
               "%zu queued launches, %zu MiB copies)\n",
          plan->repetitions, plan->queued_launches, plan->copy_bytes >> 20);
  fprintf(out, "%s\n", report->cuda_driver_note);
  for (size_t d = 0; d < report->devices.count; ++d) {
    if (!report->tested[d])
      continue;
    const bench_results_t *b = &report->bench_results[d];
    char label[32];
    device_label(&report->devices.items[d], label, sizeof label);
    static row_t row;
    row.used = 0;
    fputc('\n', out);
    row_add(&row, 44, label);
    row_add(&row, 2, "");
    row_add(&row, 24, "liboffload");
    if (b->has_raw) {
      row_add(&row, 2, "");
      row_add(&row, 24, "CUDA driver");
    }
    row_print(out, &row);
    for (int id = 0; id < BENCH_COUNT; ++id) {
      row_add(&row, 44, BENCH_INFO[id].title);
      add_measure(&row, &b->ours[id], BENCH_INFO[id].unit);
      if (b->has_raw)
        add_measure(&row, &b->raw[id], BENCH_INFO[id].unit);
      row_print(out, &row);
    }
    for (int id = 0; id < BENCH_COUNT; ++id)
      if (!b->ours[id].valid)
        fprintf(out, "  %s not measured: %s\n", BENCH_INFO[id].title, b->ours[id].why);
    for (int id = 0; b->has_raw && id < BENCH_COUNT; ++id)
      if (!b->raw[id].valid)
        fprintf(out, "  %s (CUDA driver) not measured: %s\n", BENCH_INFO[id].title,
                b->raw[id].why);
    if (!b->has_raw && b->raw_note[0] != '\0')
      fprintf(out, "  %s\n", b->raw_note);
  }
}

void print_table(FILE *out, const report_t *report) {
  print_checks(out, report);
  if (report->bench)
    print_bench(out, report);
  size_t counts[4] = {0};
  for (size_t d = 0; d < report->devices.count; ++d)
    for (size_t c = 0; report->tested[d] && c < CHECK_COUNT; ++c)
      counts[report->results[d][c].status]++;
  fprintf(out, "\n%s: %zu ok, %zu FAILED, %zu unsupported\n",
          counts[STATUS_FAILED] == 0 ? "PASSED" : "FAILED", counts[STATUS_OK],
          counts[STATUS_FAILED], counts[STATUS_UNSUPPORTED]);
}
