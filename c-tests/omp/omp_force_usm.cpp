// Built with -fopenmp-force-usm: clang reaches each `declare target` global through a
// device pointer (`<name>_decl_tgt_ref_ptr`) that the runtime sets to the host
// variable's address when it loads the image; the region then works on host memory.
#include <cstdio>
#include <cstdlib>

int total;
#pragma omp declare target
int *counter;
#pragma omp end declare target

int main() {
  total = 0;
  counter = static_cast<int *>(std::malloc(sizeof(int)));
  *counter = 5;
  int step = 3;
#pragma omp target map(counter[ : 1], total)
  {
    total = step * 2;
    *counter += step;
  }
  std::printf("total=%d counter=%d\n", total, *counter);
  std::free(counter);
  return 0;
}
