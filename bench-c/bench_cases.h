/* For the benchmarks written against LLVM's header (offload/OffloadAPI.h), one binary for
 * LLVM 22's library and ours: each case runs in a child process of its own on the host
 * device (listed last by both libraries), so a library that crashes on a call costs that
 * case only. A refused call ends its case with  REFUSED <call> <errc> <details>,  a crash
 * is reported as  CRASH <case> <signal>. */
#ifndef OFFLOAD_BENCH_CASES_H
#define OFFLOAD_BENCH_CASES_H

#include <offload/OffloadAPI.h>

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Reports a failed call and ends the child. */
static void must(ol_result_t r, const char *name) {
  if (r == OL_SUCCESS)
    return;
  printf("REFUSED %s %u %s\n", name, (unsigned)r->Code, r->Details ? r->Details : "");
  fflush(stdout);
  _exit(0);
}

static bool last_device(ol_device_handle_t d, void *out) {
  *(ol_device_handle_t *)out = d;
  return true; /* keep going: the host device is listed last */
}

struct bench_case {
  const char *name;
  void (*run)(ol_device_handle_t);
};

/* Runs each case in a child of its own: olInit, the case on the host device, olShutDown.
 * Returns 0, or 1 when a child cannot be made. */
static int run_cases_in_children(const struct bench_case *cases, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    fflush(stdout);
    pid_t child = fork();
    if (child < 0)
      return 1;
    if (child == 0) {
      must(olInit(), "olInit");
      ol_device_handle_t host = NULL;
      must(olIterateDevices(last_device, &host), "olIterateDevices");
      cases[i].run(host);
      fflush(stdout);
      olShutDown();
      _exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    if (WIFSIGNALED(status))
      printf("CRASH %s %s\n", cases[i].name, strsignal(WTERMSIG(status)));
  }
  return 0;
}

#endif
