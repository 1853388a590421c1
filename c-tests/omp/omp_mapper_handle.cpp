// The handle a declare-mapper function receives is, in practice, part of the ABI:
// LLVM's runtime keeps the pushed components in a std::vector of five-field records,
// and a program may build that list itself and push through
// __tgt_push_mapper_component. The runtime must grow the program's (empty) vector in
// storage its destructor can free. A declare mapper then runs in a target region.
#include <cstdint>
#include <cstdio>
#include <vector>

struct Component {
  void *base;
  void *begin;
  int64_t size;
  int64_t type;
  void *name;
};

struct ComponentList {
  std::vector<Component> items;
};

extern "C" int64_t __tgt_mapper_num_components(void *handle);
extern "C" void __tgt_push_mapper_component(void *handle, void *base, void *begin,
                                            int64_t size, int64_t type, void *name);

struct Buffer {
  int n;
  int *data;
};
#pragma omp declare mapper(Buffer b) map(b, b.data[0 : b.n])

int main() {
  int values[10];
  for (int round = 1; round <= 3; ++round) {
    ComponentList list;
    for (int i = 0; i < 3 * round; ++i)
      __tgt_push_mapper_component(&list, values, &values[i], sizeof(int), 1, nullptr);
    std::printf("round %d: %lld components\n", round,
                static_cast<long long>(__tgt_mapper_num_components(&list)));
  }

  Buffer buf = {10, values};
  for (int i = 0; i < 10; ++i) values[i] = i;
#pragma omp target map(tofrom : buf)
  for (int i = 0; i < buf.n; ++i) buf.data[i] *= 3;
  std::printf("values:");
  for (int i = 0; i < 10; ++i) std::printf(" %d", values[i]);
  std::printf("\n");
  return 0;
}
