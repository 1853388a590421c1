// An OMPT tool inside the program: it registers the device callbacks (the EMI forms, or
// with OMPT_MODE=plain the older ones; with OMPT_MODE=none nothing, and with
// OMPT_MODE=refuse its initializer returns 0, which must change nothing) and prints each, with pointers and ids
// replaced by labels in order of first sight (p1, p2, ...; t1 for target ids, o1 for
// operation ids) and the host named `host`, so that LLVM's libomptarget and ours print
// the same lines for the same program when they deliver the same events.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <omp-tools.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void);
static int plain, none, refuse;
static int initial_device = -2;

// Labels: each value seen gets the next number of its kind.
#define LABELS 256
static struct {
  const void *value[LABELS];
  int count;
} pointers, ops;
static int next_target = 1;

static int label_of(const void *value, int *count, const void **table) {
  for (int i = 0; i < *count; i++)
    if (table[i] == value)
      return i + 1;
  if (*count == LABELS)
    return 0;
  table[*count] = value;
  return ++*count;
}

// A freed address's label is forgotten: when the allocator gives the address out again,
// it gets a new label, whichever addresses each library's allocator reuses.
static void forget(const void *p) {
  for (int i = 0; i < pointers.count; i++)
    if (pointers.value[i] == p)
      pointers.value[i] = (const void *)1;
}

static const char *ptr(const void *p, char *buf) {
  if (!p)
    return "nil";
  sprintf(buf, "p%d", label_of(p, &pointers.count, pointers.value));
  return buf;
}

static const char *device(int num, char *buf) {
  if (num == initial_device)
    return "host";
  sprintf(buf, "%d", num);
  return buf;
}

// Where the construct's return address lies: in this program, or elsewhere.
static const char *code(const void *ra) {
  if (!ra)
    return "nil";
  Dl_info here, there;
  if (!dladdr((void *)main, &here) || !dladdr(ra, &there))
    return "unknown";
  return here.dli_fbase == there.dli_fbase ? "program" : "elsewhere";
}

static const char *endpoint(ompt_scope_endpoint_t e) {
  return e == ompt_scope_begin ? "begin" : e == ompt_scope_end ? "end" : "beginend";
}

static const char *target_kind(ompt_target_t k) {
  switch (k) {
  case ompt_target: return "target";
  case ompt_target_enter_data: return "enter_data";
  case ompt_target_exit_data: return "exit_data";
  case ompt_target_update: return "update";
  default: return "other";
  }
}

static const char *op_kind(ompt_target_data_op_t kind) {
  int op = kind; // 7, ompt_target_data_memset, is newer than LLVM 19's header
  switch (op) {
  case ompt_target_data_alloc: return "alloc";
  case ompt_target_data_transfer_to_device: return "to_device";
  case ompt_target_data_transfer_from_device: return "from_device";
  case ompt_target_data_delete: return "delete";
  case ompt_target_data_associate: return "associate";
  case ompt_target_data_disassociate: return "disassociate";
  case 7: return "memset";
  default: return "other";
  }
}

static void on_device_initialize(int device_num, const char *type, ompt_device_t *dev,
                                 ompt_function_lookup_t lookup, const char *doc) {
  (void)type, (void)dev, (void)doc;
  // LLVM's host plugin offers four devices, ours one: device 0 is the one compared.
  if (device_num == 0)
    printf("device_initialize device=0 lookup=%s\n", lookup ? "yes" : "no");
}

static void on_device_load(int device_num, const char *filename, int64_t offset,
                           void *vma, size_t bytes, void *host_addr, void *device_addr,
                           uint64_t module_id) {
  (void)filename, (void)offset, (void)vma, (void)host_addr, (void)device_addr, (void)module_id;
  if (device_num == 0)
    printf("device_load device=0 bytes=%s\n", bytes ? "some" : "0");
}

// Delivered at the end of the program, after main returned and libomp ended the tool.
static void on_device_finalize(int device_num) {
  if (device_num == 0)
    printf("device_finalize device=0\n");
}

static void on_target_emi(ompt_target_t kind, ompt_scope_endpoint_t e, int device_num,
                          ompt_data_t *task_data, ompt_data_t *target_task_data,
                          ompt_data_t *target_data, const void *codeptr_ra) {
  (void)task_data, (void)target_task_data;
  char d[16];
  if (e == ompt_scope_begin)
    target_data->value = next_target++;
  printf("target %s %s device=%s target=t%lu code=%s\n", target_kind(kind), endpoint(e),
         device(device_num, d), (unsigned long)target_data->value, code(codeptr_ra));
}

static void on_target(ompt_target_t kind, ompt_scope_endpoint_t e, int device_num,
                      ompt_data_t *task_data, ompt_id_t target_id, const void *codeptr_ra) {
  (void)task_data;
  char d[16];
  printf("target %s %s device=%s target=%s code=%s\n", target_kind(kind), endpoint(e),
         device(device_num, d), target_id ? "id" : "0", code(codeptr_ra));
}

static void print_op(const char *when, const char *target, const char *op_id,
                     ompt_target_data_op_t op, void *src, int src_dev, void *dst,
                     int dst_dev, size_t bytes, const void *codeptr_ra) {
  char s[16], sd[16], t[16], td[16];
  printf("data_op %s%s target=%s op=%s src=%s@%s dst=%s@%s bytes=%zu code=%s\n",
         op_kind(op), when, target, op_id, ptr(src, s), device(src_dev, sd), ptr(dst, t),
         device(dst_dev, td), bytes, code(codeptr_ra));
  if (op == ompt_target_data_delete && strcmp(when, " begin") != 0)
    forget(src);
}

static void on_data_op_emi(ompt_scope_endpoint_t e, ompt_data_t *target_task_data,
                           ompt_data_t *target_data, ompt_id_t *host_op_id,
                           ompt_target_data_op_t op, void *src, int src_dev, void *dst,
                           int dst_dev, size_t bytes, const void *codeptr_ra) {
  (void)target_task_data;
  static unsigned long next_op = 1;
  if (e == ompt_scope_begin)
    *host_op_id = next_op++;
  char target[16], id[16], when[16];
  sprintf(target, target_data && target_data->value ? "t%lu" : "none",
          target_data ? (unsigned long)target_data->value : 0ul);
  sprintf(id, "o%lu", (unsigned long)*host_op_id);
  sprintf(when, " %s", endpoint(e));
  // The destination of an allocation is known only at its end.
  if (op == ompt_target_data_alloc && e == ompt_scope_begin)
    dst = NULL;
  print_op(when, target, id, op, src, src_dev, dst, dst_dev, bytes, codeptr_ra);
}

static void on_data_op(ompt_id_t target_id, ompt_id_t host_op_id, ompt_target_data_op_t op,
                       void *src, int src_dev, void *dst, int dst_dev, size_t bytes,
                       const void *codeptr_ra) {
  char id[16];
  sprintf(id, "o%d", label_of((void *)(uintptr_t)host_op_id, &ops.count, ops.value));
  print_op("", target_id ? "id" : "0", id, op, src, src_dev, dst, dst_dev, bytes,
           codeptr_ra);
}

static void on_submit_emi(ompt_scope_endpoint_t e, ompt_data_t *target_data,
                          ompt_id_t *host_op_id, unsigned int requested_num_teams) {
  static unsigned long next_op = 1000;
  if (e == ompt_scope_begin)
    *host_op_id = next_op++;
  printf("submit %s target=t%lu op=s%lu teams=%u\n", endpoint(e),
         (unsigned long)target_data->value, (unsigned long)*host_op_id - 999,
         requested_num_teams);
}

static void on_submit(ompt_id_t target_id, ompt_id_t host_op_id,
                      unsigned int requested_num_teams) {
  printf("submit target=%s op=%s teams=%u\n", target_id ? "id" : "0",
         host_op_id ? "id" : "0", requested_num_teams);
}

static int initialize(ompt_function_lookup_t lookup, int initial_device_num,
                      ompt_data_t *tool_data) {
  (void)initial_device_num, (void)tool_data;
  if (refuse)
    return 0;
  if (none)
    return 1;
  ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
#define SET(event, fn) set(event, (ompt_callback_t)(fn))
  SET(ompt_callback_device_initialize, on_device_initialize);
  SET(ompt_callback_device_load, on_device_load);
  SET(ompt_callback_device_finalize, on_device_finalize);
  if (plain) {
    SET(ompt_callback_target, on_target);
    SET(ompt_callback_target_data_op, on_data_op);
    SET(ompt_callback_target_submit, on_submit);
  } else {
    SET(ompt_callback_target_emi, on_target_emi);
    SET(ompt_callback_target_data_op_emi, on_data_op_emi);
    SET(ompt_callback_target_submit_emi, on_submit_emi);
  }
#undef SET
  return 1;
}

static void finalize(ompt_data_t *tool_data) { (void)tool_data; }

ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime) {
  (void)omp_version, (void)runtime;
  const char *mode = getenv("OMPT_MODE");
  plain = mode && strcmp(mode, "plain") == 0;
  none = mode && strcmp(mode, "none") == 0;
  refuse = mode && strcmp(mode, "refuse") == 0;
  static ompt_start_tool_result_t result = {initialize, finalize, {0}};
  return &result;
}

int main(void) {
  initial_device = omp_get_initial_device();
  int a[64], b[64], c[64];
  for (int i = 0; i < 64; i++)
    a[i] = i, b[i] = 0, c[i] = 1;

  printf("-- target map(to: a) map(from: b) num_teams(3)\n");
#pragma omp target teams num_teams(3) map(to : a) map(from : b)
  for (int i = 0; i < 64; i++)
    b[i] = 2 * a[i];
  printf("b[63] = %d\n", b[63]);

  printf("-- target data map(tofrom: c), a region inside, update from\n");
#pragma omp target data map(tofrom : c)
  {
#pragma omp target
    c[0] = 7;
#pragma omp target update from(c)
  }
  printf("c[0] = %d\n", c[0]);

  printf("-- enter data, exit data\n");
#pragma omp target enter data map(to : a)
#pragma omp target exit data map(release : a)

  printf("-- the device memory routines\n");
  int dev = omp_get_default_device();
  int *d = omp_target_alloc(sizeof a, dev);
  omp_target_memcpy(d, a, sizeof a, 0, 0, dev, initial_device);
  omp_target_memcpy(b, d, sizeof a, 0, 0, initial_device, dev);
  omp_target_memset(d, 0, sizeof a, dev);
  omp_target_associate_ptr(c, d, sizeof c, 0, dev);
  omp_target_disassociate_ptr(c, dev);
  // (OMPT_ONE_DEVICE=1: a run on one remote device, compared with LLVM's four host ones.)
  const char *one = getenv("OMPT_ONE_DEVICE");
  if (omp_get_num_devices() > 1 && !(one && atoi(one))) {
    // Device to device: both libraries offer several host devices.
    printf("-- omp_target_memcpy between two devices\n");
    pointers.count = 0;  // fresh labels: which addresses malloc reuses is its own affair
    int *e = omp_target_alloc(sizeof a, 1);
    omp_target_memcpy(e, d, sizeof a, 0, 0, 1, dev);
    omp_target_free(e, 1);
  }
  omp_target_free(d, dev);
  printf("b[5] = %d\n", b[5]);
  return 0;
}
