// CUDA source built with clang++-22 -x cuda -foffload-via-llvm: `<<<...>>>` launches go
// through libomptarget's kernel-language API (__llvmPushCallConfiguration,
// __llvmPopCallConfiguration, llvmLaunchKernel). Built for the host device (x86_64
// offload target) by the C tests, and for sm_90 by scripts/make-gpu-omp.sh. Kernels here
// have no thread ids (the host device runs each launch once). Checks the results (a double argument included: the host device calls kernels
// with the C calling convention), and that launches that cannot run are refused with a
// non-zero result: a grid of no blocks, and a host function that is no kernel.
// cuda_kernel_params.cu tests parameter types further.
#include <stdio.h>
#include <string.h>

extern "C" {
void *llvm_omp_target_alloc_shared(size_t Size, int DeviceNum);
void llvm_omp_target_free_shared(void *DevicePtr, int DeviceNum);
unsigned llvmLaunchKernel(const void *func, dim3 grid, dim3 block, void **args,
                          size_t shared, void *stream);
}

__global__ void store(long *p, long v) { p[0] = v; }
__global__ void add(long *p, const long *q, long n) {
  for (long i = 0; i < n; ++i)
    p[i] += q[i];
}
__global__ void narrow(int a, int b, short c, long *out) { *out = a * 100 + b * 10 + c; }
__global__ void scale(double factor, long *p) { p[0] = (long)(p[0] * factor); }

static void not_a_kernel(void) {}

static int failures = 0;
#define EXPECT(cond)                                                                      \
  do {                                                                                    \
    if (!(cond)) {                                                                        \
      printf("FAILED: %s (line %d)\n", #cond, __LINE__);                                  \
      ++failures;                                                                         \
    }                                                                                     \
  } while (0)

int main() {
  long *p = (long *)llvm_omp_target_alloc_shared(4 * sizeof(long), 0);
  long *q = (long *)llvm_omp_target_alloc_shared(4 * sizeof(long), 0);
  EXPECT(p != NULL && q != NULL);
  for (int i = 0; i < 4; ++i) {
    p[i] = i;
    q[i] = 10 * i;
  }
  store<<<1, 1>>>(p, 42);
  add<<<1, 1>>>(p, q, 4);
  EXPECT(p[0] == 42 && p[1] == 11 && p[2] == 22 && p[3] == 33);
  // Parameters narrower than 8 bytes, side by side in the packed arguments.
  narrow<<<1, 1>>>(3, 4, 5, q);
  EXPECT(q[0] == 345);

  // Refused, nothing run: the results stay as they were.
  struct {
    unsigned long long size;
    void *data, *pointers;
  } none = {0, NULL, NULL};
  EXPECT(llvmLaunchKernel((const void *)add, dim3(0), dim3(1), (void **)&none, 0, 0) != 0);
  EXPECT(llvmLaunchKernel((const void *)not_a_kernel, dim3(1), dim3(1), (void **)&none, 0, 0) != 0);
  scale<<<1, 1>>>(2.0, p);
  EXPECT(p[0] == 84);

  llvm_omp_target_free_shared(p, 0);
  llvm_omp_target_free_shared(q, 0);
  printf("%s\n", failures ? "FAILED" : "kernel-language launches: ok");
  return failures != 0;
}
