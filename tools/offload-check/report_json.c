/* The report as one JSON object, for tools: every device with its information, its
 * checks (status and reason) and, with --bench, its measurements. */
#include "report.h"

#include "json.h"

#include <string.h>

static void key(FILE *out, const char *name) {
  json_string(out, name);
  fputc(':', out);
}

static void measure_json(FILE *out, const measure_t *m) {
  if (!m->valid) {
    fputc('{', out);
    key(out, "error");
    json_string(out, m->why);
    fputc('}', out);
    return;
  }
  fputc('{', out);
  key(out, "median");
  json_number(out, m->median);
  fputc(',', out);
  key(out, "p90");
  json_number(out, m->p90);
  fputc(',', out);
  key(out, "samples");
  json_u64(out, m->samples);
  fputc('}', out);
}

static void bench_json(FILE *out, const bench_results_t *b) {
  fputc('{', out);
  for (int id = 0; id < BENCH_COUNT; ++id) {
    if (id > 0)
      fputc(',', out);
    key(out, BENCH_INFO[id].id);
    fputc('{', out);
    key(out, "title");
    json_string(out, BENCH_INFO[id].title);
    fputc(',', out);
    key(out, "unit");
    json_string(out, BENCH_INFO[id].unit);
    fputc(',', out);
    key(out, "liboffload");
    measure_json(out, &b->ours[id]);
    if (b->has_raw) {
      fputc(',', out);
      key(out, "cuda_driver");
      measure_json(out, &b->raw[id]);
    }
    fputc('}', out);
  }
  if (!b->has_raw && b->raw_note[0] != '\0') {
    fputc(',', out);
    key(out, "cuda_driver_note");
    json_string(out, b->raw_note);
  }
  fputc('}', out);
}

static void string_field(FILE *out, const char *name, const char *value) {
  key(out, name);
  json_string(out, value);
  fputc(',', out);
}

static void number_field(FILE *out, const char *name, uint64_t value) {
  key(out, name);
  json_u64(out, value);
  fputc(',', out);
}

static void device_json(FILE *out, const report_t *report, size_t index) {
  const device_t *d = &report->devices.items[index];
  fputs("\n  {", out);
  number_field(out, "index", (uint64_t)d->index);
  string_field(out, "backend", backend_name(d->backend));
  string_field(out, "type", device_type_name(d->type));
  string_field(out, "name", d->name);
  string_field(out, "product_name", d->product_name);
  string_field(out, "vendor", d->vendor);
  string_field(out, "driver_version", d->driver_version);
  string_field(out, "platform_name", d->platform_name);
  string_field(out, "platform_version", d->platform_version);
  number_field(out, "global_mem_size", d->global_mem_size);
  number_field(out, "max_mem_alloc_size", d->max_mem_alloc_size);
  number_field(out, "work_group_local_mem_size", d->local_mem_size);
  number_field(out, "num_compute_units", d->compute_units);
  number_field(out, "num_lanes", d->lanes);
  number_field(out, "max_clock_frequency_mhz", d->max_clock_mhz);
  number_field(out, "memory_clock_rate_mhz", d->memory_clock_mhz);
  number_field(out, "max_work_group_size", d->max_group_size);
  key(out, "max_work_group_size_per_dimension");
  fprintf(out, "[%u,%u,%u],", (unsigned)d->max_group_size_per_dim[0],
          (unsigned)d->max_group_size_per_dim[1], (unsigned)d->max_group_size_per_dim[2]);
  number_field(out, "address_bits", d->address_bits);
  key(out, "info_error");
  if (d->info_error[0] != '\0')
    json_string(out, d->info_error);
  else
    fputs("null", out);
  fputc(',', out);
  key(out, "tested");
  fputs(report->tested[index] ? "true" : "false", out);
  if (!report->tested[index]) {
    fputc('}', out);
    return;
  }
  fputc(',', out);
  key(out, "peer");
  if (report->peer[index] >= 0)
    fprintf(out, "%d", report->peer[index]);
  else
    fputs("null", out);
  fputc(',', out);
  key(out, "checks");
  fputc('{', out);
  for (size_t c = 0; c < CHECK_COUNT; ++c) {
    const check_result_t *r = &report->results[index][c];
    fputs(c > 0 ? ",\n    " : "\n    ", out);
    key(out, CHECKS[c].id);
    fputc('{', out);
    string_field(out, "title", CHECKS[c].title);
    string_field(out, "status", status_name(r->status));
    key(out, "reason");
    json_string(out, r->reason);
    fputc('}', out);
  }
  fputc('}', out);
  if (report->bench) {
    fputc(',', out);
    key(out, "bench");
    bench_json(out, &report->bench_results[index]);
  }
  fputc('}', out);
}

void print_json(FILE *out, const report_t *report) {
  size_t counts[4] = {0};
  for (size_t d = 0; d < report->devices.count; ++d)
    for (size_t c = 0; report->tested[d] && c < CHECK_COUNT; ++c)
      counts[report->results[d][c].status]++;
  fputc('{', out);
  string_field(out, "tool", "offload-check");
  key(out, "liboffload_version");
  fprintf(out, "\"%u.%u.%u\",", (unsigned)report->version[0], (unsigned)report->version[1],
          (unsigned)report->version[2]);
  key(out, "devices");
  fputc('[', out);
  for (size_t d = 0; d < report->devices.count; ++d) {
    if (d > 0)
      fputc(',', out);
    device_json(out, report, d);
  }
  fputs("],\n", out);
  key(out, "summary");
  fputc('{', out);
  number_field(out, "ok", counts[STATUS_OK]);
  number_field(out, "failed", counts[STATUS_FAILED]);
  key(out, "unsupported");
  json_u64(out, counts[STATUS_UNSUPPORTED]);
  fputs("},", out);
  if (report->bench) {
    key(out, "bench_plan");
    fprintf(out, "{\"repetitions\":%zu,\"queued_launches\":%zu,\"copy_bytes\":%zu,"
                 "\"copy_repetitions\":%zu},",
            report->plan.repetitions, report->plan.queued_launches, report->plan.copy_bytes,
            report->plan.copy_repetitions);
    string_field(out, "cuda_driver_note", report->cuda_driver_note);
  }
  key(out, "exit_status");
  fprintf(out, "%d}\n", report_exit_status(report));
}
