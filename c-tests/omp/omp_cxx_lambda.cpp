// C++: lambdas capturing by reference inside target regions (the captured variables'
// device copies are attached to the lambda's copy), a class whose member function maps
// its own members, and a std::vector's buffer mapped through data().
#include <cstdio>
#include <vector>

struct Accumulator {
  double total = 0;
  int count = 0;
  double values[4] = {1.5, 2.5, 3.5, 4.5};

  void sum_on_device() {
#pragma omp target map(tofrom : total, count) map(to : values)
    {
      for (int i = 0; i < 4; i++) total += values[i];
      count = 4;
    }
  }
};

int main() {
  int hits = 0;
  double scale = 3.0;
  int out[8] = {0};
  auto work = [&](int i) {
    out[i] = static_cast<int>(i * scale);
    hits += 1;
  };
#pragma omp target map(tofrom : hits, out) map(to : scale)
  {
    for (int i = 0; i < 8; i++) work(i);
  }
  std::printf("lambda: hits=%d out:", hits);
  for (int v : out) std::printf(" %d", v);
  std::printf("\n");

  Accumulator acc;
  acc.sum_on_device();
  std::printf("member function: total=%.1f count=%d\n", acc.total, acc.count);

  std::vector<long> v(10);
  for (size_t i = 0; i < v.size(); i++) v[i] = static_cast<long>(i);
  long *p = v.data();
  size_t n = v.size();
#pragma omp target map(tofrom : p[0 : n])
  for (size_t i = 0; i < n; i++) p[i] = p[i] * p[i];
  std::printf("vector:");
  for (long x : v) std::printf(" %ld", x);
  std::printf("\n");
  return 0;
}
