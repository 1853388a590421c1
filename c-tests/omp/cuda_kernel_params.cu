// CUDA source built with clang++-22 -x cuda -foffload-via-llvm for the host device
// (x86_64 offload target): kernels whose parameters are float, double, mixed-width
// integers, structs by value, an enum, a class with a copy constructor, a template and
// an extern "C" kernel, launched through libomptarget's kernel-language API. The host
// device calls each with the C calling convention from its parameter types.
//
// Built three times by the C tests. Without debug information (DEBUG_INFO=0) the kernels
// whose types only the debug information gives (classes and an enum by value, the
// extern "C" kernel) are refused: their results stay untouched, and llvmLaunchKernel
// returns non-zero with a message that says to build with -g. With -g (DEBUG_INFO=1)
// they run, but for the class with a copy constructor: clang's debug information gives
// a class's layout only where a constructor of it is compiled, not in the device code.
// With -g -fstandalone-debug (DEBUG_INFO=2) every kernel runs. Every result is checked.
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifndef DEBUG_INFO
#define DEBUG_INFO 0
#endif

extern "C" {
void *llvm_omp_target_alloc_shared(size_t Size, int DeviceNum);
void llvm_omp_target_free_shared(void *DevicePtr, int DeviceNum);
unsigned llvmLaunchKernel(const void *func, dim3 grid, dim3 block, void **args,
                          size_t shared, void *stream);
}

struct P {
  float x;
  int n;
};
struct Q {
  double a, b;
};
struct Big {
  long a, b, c;
};
enum Colour : short { Red = 3, Green = 5 };
class Counted {
public:
  long v;
  __host__ __device__ Counted(long x) : v(x) {}
  __host__ __device__ Counted(const Counted &o) : v(o.v + 1) {}
};

__global__ void twice(float f, float *out) { *out = 2 * f; }
__global__ void halve(double d, double *out) { *out = d / 2; }
__global__ void add(int *a, int x, long y, double z) {
  a[0] = x;
  a[1] = (int)(y - 10000000000L);
  a[2] = (int)(z * 4);
}
__global__ void narrow(char c, unsigned char u, short s, bool b, long *out) {
  *out = c * 1000 + u * 100 + s * 10 + b;
}
__global__ void many(double a, double b, double c, double d, double e, double f, double g,
                     double h, double i, double j, float k, double *out) {
  *out = a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h + 9 * i + 10 * j + 11 * k;
}
template <typename T> __global__ void axpy(T a, T *x, T *y) { *y = a * *x + *y; }
__global__ void scale_p(P p, float *out) { *out = p.x * p.n; }
__global__ void diff_q(Q q, double *out) { *out = q.a - q.b; }
__global__ void structs(char c, P p, float f, Q q, short s, double *out) {
  *out = c + p.x * p.n + f + q.a * q.b + s;
}
__global__ void big(Big b, long *out) { *out = b.a + 10 * b.b + 100 * b.c; }
__global__ void colour(Colour c, long *out) { *out = c; }
__global__ void counted(Counted c, long *out) { *out = c.v; }
extern "C" __global__ void c_linkage(double d, double *out) { *out = d + 1; }

static int failures = 0;
#define EXPECT(cond)                                                                      \
  do {                                                                                    \
    if (!(cond)) {                                                                        \
      printf("FAILED: %s (line %d)\n", #cond, __LINE__);                                  \
      ++failures;                                                                         \
    }                                                                                     \
  } while (0)

// Launches c_linkage(d, out) through llvmLaunchKernel itself, as clang's stub does, and
// keeps what it writes to stderr in `said`.
static unsigned launch_c_linkage(double d, double *out, char *said, size_t room) {
  struct {
    double d;
    double *out;
  } packed = {d, out};
  struct {
    unsigned long long size;
    void *data, *pointers;
  } params = {sizeof packed, &packed, NULL};
  fflush(stderr);
  FILE *capture = tmpfile();
  int saved = dup(2);
  if (capture)
    dup2(fileno(capture), 2);
  unsigned result = llvmLaunchKernel((const void *)c_linkage, dim3(1), dim3(1),
                                     (void **)&params, 0, 0);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  said[0] = 0;
  if (capture) {
    rewind(capture);
    size_t n = fread(said, 1, room - 1, capture);
    said[n] = 0;
    fclose(capture);
  }
  return result;
}

int main() {
  float *f = (float *)llvm_omp_target_alloc_shared(4 * sizeof(float), 0);
  double *d = (double *)llvm_omp_target_alloc_shared(4 * sizeof(double), 0);
  long *l = (long *)llvm_omp_target_alloc_shared(4 * sizeof(long), 0);
  int *a = (int *)llvm_omp_target_alloc_shared(4 * sizeof(int), 0);
  EXPECT(f && d && l && a);
  memset(f, 0, 4 * sizeof(float));
  memset(d, 0, 4 * sizeof(double));
  memset(l, 0, 4 * sizeof(long));
  memset(a, 0, 4 * sizeof(int));

  // Types the mangled name gives: these run with or without debug information.
  twice<<<1, 1>>>(1.25f, f);
  EXPECT(f[0] == 2.5f);
  halve<<<1, 1>>>(7.0, d);
  EXPECT(d[0] == 3.5);
  add<<<1, 1>>>(a, -7, 10000000042L, 2.25);
  printf("add: %d %d %d\n", a[0], a[1], a[2]);
  EXPECT(a[0] == -7 && a[1] == 42 && a[2] == 9);
  narrow<<<1, 1>>>(-2, 200, 3, true, l);
  EXPECT(l[0] == -2000 + 20000 + 30 + 1);
  many<<<1, 1>>>(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0.5f, d + 1);
  printf("many: %g\n", d[1]);
  EXPECT(d[1] == 55 + 5.5);
  f[1] = 2;
  f[2] = 1;
  axpy<float><<<1, 1>>>(3.0f, f + 1, f + 2);
  EXPECT(f[2] == 7);

  // Classes by value and an extern "C" kernel: their types are in the debug
  // information only. Without it they are refused and their results stay 0.
  P p = {1.5f, 4};
  scale_p<<<1, 1>>>(p, f + 3);
  Q q = {10.0, 2.5};
  diff_q<<<1, 1>>>(q, d + 2);
  structs<<<1, 1>>>(1, p, 0.25f, q, -3, d + 3);
  big<<<1, 1>>>(Big{1, 2, 3}, l + 1);
  colour<<<1, 1>>>(Green, l + 2);
  counted<<<1, 1>>>(Counted(40), l + 3);
  printf("structs: %g %g %g %ld %ld %ld\n", f[3], d[2], d[3], l[1], l[2], l[3]);
  EXPECT(f[3] == (DEBUG_INFO ? 6.0f : 0));
  EXPECT(d[2] == (DEBUG_INFO ? 7.5 : 0));
  EXPECT(d[3] == (DEBUG_INFO ? 1 + 6 + 0.25 + 25 - 3 : 0));
  EXPECT(l[1] == (DEBUG_INFO ? 321 : 0));
  EXPECT(l[2] == (DEBUG_INFO ? 5 : 0));
  // The host stub packs the object's bytes (its copy constructor, which adds 1, does
  // not run on the way), and the kernel gets the address of a copy of those.
  EXPECT(l[3] == (DEBUG_INFO == 2 ? 40 : 0));

  char said[1024];
  d[0] = 0;
  unsigned result = launch_c_linkage(2.5, d, said, sizeof said);
  printf("c_linkage: result %u, d %g, stderr: %s", result, d[0], said[0] ? said : "-\n");
  if (DEBUG_INFO) {
    EXPECT(result == 0 && d[0] == 3.5);
  } else {
    EXPECT(result != 0 && d[0] == 0);
    EXPECT(strstr(said, "c_linkage") != NULL);
    EXPECT(strstr(said, "build the program with -g") != NULL);
  }

  llvm_omp_target_free_shared(f, 0);
  llvm_omp_target_free_shared(d, 0);
  llvm_omp_target_free_shared(l, 0);
  llvm_omp_target_free_shared(a, 0);
  printf("%s\n", failures ? "FAILED" : "kernel-language parameters: ok");
  return failures != 0;
}
