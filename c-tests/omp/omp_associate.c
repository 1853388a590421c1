/* omp_target_associate_ptr / omp_target_disassociate_ptr (map clauses on an associated
 * range neither copy nor release it; the error returns), ompx_dump_mapping_tables
 * (device 0's lines, addresses masked: they differ from run to run) and
 * __tgt_print_device_info (run in a child process: LLVM prints through its own stream,
 * which reaches a pipe only at exit). */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void ompx_dump_mapping_tables(void);
int __tgt_print_device_info(int64_t device_id);

static int dev, host;

/* Prints the lines of device 0's table with every 0x%016x address replaced by ADDR. */
static void dump_device_0(const char *when) {
  printf("-- mapping table %s\n", when);
  fflush(stdout);
  FILE *tmp = tmpfile();
  int saved = dup(1);
  dup2(fileno(tmp), 1);
  ompx_dump_mapping_tables();
  fflush(stdout);
  dup2(saved, 1);
  close(saved);
  rewind(tmp);
  char line[512];
  while (fgets(line, sizeof line, tmp)) {
    if (strncmp(line, "omptarget device 0 info: ", 25) != 0) continue;
    for (char *p = line; (p = strstr(p, "0x")) != NULL;) {
      size_t n = strspn(p + 2, "0123456789abcdef");
      if (n == 16) memmove(p + 4, p + 18, strlen(p + 18) + 1), memcpy(p, "ADDR", 4);
      p += 2;
    }
    fputs(line, stdout);
  }
  fclose(tmp);
}

static void print_device_info_in_child(const char *self) {
  char command[4200];
  snprintf(command, sizeof command, "'%s' print-device-info", self);
  fflush(stdout);
  FILE *child = popen(command, "r");
  char line[512];
  int returned_one = 0, device_type = 0;
  while (child && fgets(line, sizeof line, child)) {
    if (strcmp(line, "rc=1\n") == 0) returned_one = 1;
    if (strncmp(line, "    Device Type ", 16) == 0) device_type = 1;
  }
  int status = child ? pclose(child) : -1;
  printf("print_device_info: returned 1: %d, printed a Device Type line: %d, child "
         "status %d\n",
         returned_one, device_type, status);
}

int main(int argc, char **argv) {
  dev = omp_get_default_device();
  host = omp_get_initial_device();
  if (argc > 1 && strcmp(argv[1], "print-device-info") == 0) {
    printf("rc=%d\n", __tgt_print_device_info(dev));
    return 0;
  }
  dump_device_0("before any mapping");

  int a[8], b[8], c[4];
  for (int i = 0; i < 8; i++) a[i] = i, b[i] = 0;
  int *d = omp_target_alloc(sizeof a, dev);
  int *e = omp_target_alloc(64, dev);
  printf("associate: %d\n", omp_target_associate_ptr(a, d, sizeof a, 0, dev));
  printf("again, same pair: %d\n", omp_target_associate_ptr(a, d, sizeof a, 0, dev));
  printf("same host, other offset: %d\n",
         omp_target_associate_ptr(a, d, sizeof a, 4, dev));
  printf("same host, other size: %d\n",
         omp_target_associate_ptr(a, d, sizeof a - 4, 0, dev));
  printf("initial device: %d\n", omp_target_associate_ptr(b, d, 8, 0, host));
  printf("NULL host: %d, NULL device: %d, size 0: %d\n",
         omp_target_associate_ptr(NULL, d, 8, 0, dev),
         omp_target_associate_ptr(b, NULL, 8, 0, dev),
         omp_target_associate_ptr(b, d, 0, 0, dev));
  printf("with an offset: %d\n", omp_target_associate_ptr(c, e, sizeof c, 16, dev));
  printf("mapped at the offset: %d\n", omp_get_mapped_ptr(c, dev) == (char *)e + 16);
  printf("present: %d, mapped to d: %d\n", omp_target_is_present(a, dev),
         omp_get_mapped_ptr(&a[3], dev) == d + 3);

  /* The device copy starts as whatever d holds: fill it explicitly. */
  int init[8];
  for (int i = 0; i < 8; i++) init[i] = 100 + i;
  omp_target_memcpy(d, init, sizeof init, 0, 0, dev, host);
  /* tofrom on an associated range copies neither way (the count never reaches 0). */
#pragma omp target map(tofrom : a[0 : 8])
  for (int i = 0; i < 8; i++) a[i] += 1000;
  for (int i = 0; i < 8; i++) printf("%d ", a[i]);
  printf("(host unchanged)\n");
#pragma omp target update from(a[0 : 8])
  for (int i = 0; i < 8; i++) printf("%d ", a[i]);
  printf("(after update from)\n");
#pragma omp target exit data map(delete : a[0 : 8])
  printf("still present after delete: %d\n", omp_target_is_present(a, dev));

  /* A range mapped by a clause is not an association. */
#pragma omp target enter data map(to : b[0 : 8])
#pragma omp target enter data map(to : b[0 : 8])
  dump_device_0("with associations and a mapped range");
  printf("disassociate mapped: %d\n", omp_target_disassociate_ptr(b, dev));
  printf("disassociate unknown: %d\n", omp_target_disassociate_ptr(&a[1], dev));
  printf("disassociate on the initial device: %d\n", omp_target_disassociate_ptr(a, host));
  printf("disassociate NULL: %d\n", omp_target_disassociate_ptr(NULL, dev));
  printf("disassociate: %d\n", omp_target_disassociate_ptr(a, dev));
  printf("disassociate again: %d\n", omp_target_disassociate_ptr(a, dev));
  printf("present after disassociate: %d\n", omp_target_is_present(a, dev));
#pragma omp target exit data map(release : b[0 : 8])
#pragma omp target exit data map(from : b[0 : 8])
  dump_device_0("after releasing b");

  /* The device memory is still the user's: usable, then freed by the user. */
  int back[8];
  omp_target_memcpy(back, d, sizeof back, 0, 0, host, dev);
  printf("device memory after disassociate: %d %d\n", back[0], back[7]);
  omp_target_free(d, dev);
  /* c stays associated until exit; its device memory is the user's to free. */
  omp_target_free(e, dev);

  print_device_info_in_child(argv[0]);
  return 0;
}
