// C++ globals with constructors and destructors in device code. On a GPU the image's
// constructors run when it is loaded (before the first region), in priority order, and
// its destructors when it is unloaded; on the host device the loader runs them. Each
// constructor records its turn in a device global that a region reads back; each
// destructor prints (on NVIDIA through the device's printf; AMD's needs LLVM's GPU libc).
#include <cstdio>

#pragma omp declare target
// Read at run time, so the compiler cannot run the constructors at build time.
volatile int offset = 0;
int order[4];
int turns = 0;

struct Recorder {
  int value;
  explicit Recorder(int v) : value(v + offset) { order[turns++] = value; }
  ~Recorder() {
#ifndef __AMDGCN__
    printf("destructor of %d\n", value);
#endif
  }
};

__attribute__((init_priority(200))) Recorder late(2);
__attribute__((init_priority(101))) Recorder early(1);
Recorder plain(3);
#pragma omp end declare target

int main() {
  int seen[4] = {0, 0, 0, 0}, count = 0, values[3] = {0, 0, 0};
#pragma omp target map(from : seen, count, values)
  {
    for (int i = 0; i < 4; i++) seen[i] = order[i];
    count = turns;
    values[0] = early.value;
    values[1] = late.value;
    values[2] = plain.value;
  }
  printf("constructors ran: %d\n", count);
  printf("in priority order: %d %d %d\n", seen[0], seen[1], seen[2]);
  printf("values: %d %d %d\n", values[0], values[1], values[2]);
  fflush(stdout);
  return 0;
}
