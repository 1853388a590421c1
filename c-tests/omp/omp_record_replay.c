// Three target regions for kernel record and replay: a vector update with a literal
// argument, a structure whose mapped copy holds a pointer the runtime attached (the
// pointer lies inside the recorded memory: replay must put that memory back at the same
// address), and a region that reads a `declare target` global (its `.globals` record).
// Recorded with LIBOMPTARGET_RECORD=1 LIBOMPTARGET_RR_SAVE_OUTPUT=1, each kernel is then
// replayed by LLVM's llvm-omp-kernel-replay --verify (c-tests/omp/record_replay.cmake).
#include <stdio.h>

#define N 1000

#pragma omp declare target
int offset_on_device = 7;
#pragma omp end declare target

struct list {
  int n;
  int *data;
};

int main(void) {
  int a[N], b[N];
  for (int i = 0; i < N; i++) {
    a[i] = i;
    b[i] = 1;
  }
  int scale = 3;
#pragma omp target teams distribute parallel for map(to : a) map(tofrom : b) firstprivate(scale)
  for (int i = 0; i < N; i++)
    b[i] += scale * a[i];

  struct list l = {N, a};
  long sum = 0;
#pragma omp target map(to : l, l.data[0 : N]) map(tofrom : sum)
  for (int i = 0; i < l.n; i++)
    sum += l.data[i];

  int shifted[16];
#pragma omp target map(from : shifted)
  for (int i = 0; i < 16; i++)
    shifted[i] = i + offset_on_device;

  printf("b[%d] = %d, sum = %ld, shifted[15] = %d\n", N - 1, b[N - 1], sum, shifted[15]);
  return 0;
}
