/* The rest of the device memory API: omp_target_memcpy_rect in 1, 2 and 3 dimensions
 * (offsets on both sides, every direction, the INT_MAX query and bad arguments),
 * omp_target_memcpy_async / _rect_async and omp_target_memset_async ordered by depend
 * objects, omp_target_memset, LLVM's host and shared allocations, locking host memory
 * and the dynamic shared memory query. */
#include <limits.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void *llvm_omp_target_alloc_host(size_t size, int device);
void *llvm_omp_target_alloc_shared(size_t size, int device);
void llvm_omp_target_free_host(void *ptr, int device);
void llvm_omp_target_free_shared(void *ptr, int device);
void *llvm_omp_target_lock_mem(void *ptr, size_t size, int device);
void llvm_omp_target_unlock_mem(void *ptr, int device);
void *llvm_omp_target_dynamic_shared_alloc(void);

static int dev, host;

static void print_ints(const char *what, const int *v, int n) {
  printf("%s:", what);
  for (int i = 0; i < n; i++) printf(" %d", v[i]);
  printf("\n");
}

static void rect_copies(void) {
  printf("query: %d\n",
         omp_target_memcpy_rect(NULL, NULL, 0, 0, NULL, NULL, NULL, NULL, NULL, dev,
                                host) == INT_MAX);
  printf("async query: %d\n",
         omp_target_memcpy_rect_async(NULL, NULL, 0, 0, NULL, NULL, NULL, NULL, NULL, dev,
                                      host, 0, NULL) == INT_MAX);
  int a[4] = {0}, b[4] = {0};
  size_t one[1] = {1}, zero[1] = {0};
  printf("bad: %d %d %d %d %d\n",
         omp_target_memcpy_rect(a, b, 4, 0, one, zero, zero, one, one, host, host),
         omp_target_memcpy_rect(a, b, 0, 1, one, zero, zero, one, one, host, host),
         omp_target_memcpy_rect(a, NULL, 4, 1, one, zero, zero, one, one, host, host),
         omp_target_memcpy_rect(a, b, 4, 1, NULL, zero, zero, one, one, host, host),
         omp_target_memcpy_rect_async(NULL, b, 4, 1, one, zero, zero, one, one, host,
                                      host, 0, NULL));

  /* 1D: 5 elements from src[3..8) to dev[2..7), back to out[0..5). */
  int src1[10], out1[10];
  for (int i = 0; i < 10; i++) src1[i] = 100 + i, out1[i] = -1;
  int *d1 = omp_target_alloc(sizeof src1, dev);
  size_t v1[1] = {5}, o_dev[1] = {2}, o_src[1] = {3}, o_out[1] = {0}, n10[1] = {10};
  printf("1d to device: %d\n",
         omp_target_memcpy_rect(d1, src1, sizeof(int), 1, v1, o_dev, o_src, n10, n10,
                                dev, host));
  printf("1d to host: %d\n",
         omp_target_memcpy_rect(out1, d1, sizeof(int), 1, v1, o_out, o_dev, n10, n10,
                                host, dev));
  print_ints("1d", out1, 10);
  omp_target_free(d1, dev);

  /* 2D: a 3x4 block at (1,2) of a 6x8 host array into (0,1) of a 4x5 device array. */
  int src2[6][8], out2[4][5];
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 8; j++) src2[i][j] = 10 * i + j;
  int *d2 = omp_target_alloc(sizeof out2, dev);
  memset(out2, 0, sizeof out2);
  printf("2d clear device: %d\n",
         omp_target_memcpy(d2, out2, sizeof out2, 0, 0, dev, host));
  size_t v2[2] = {3, 4}, dst_o2[2] = {0, 1}, src_o2[2] = {1, 2};
  size_t dst_d2[2] = {4, 5}, src_d2[2] = {6, 8};
  printf("2d to device: %d\n",
         omp_target_memcpy_rect(d2, src2, sizeof(int), 2, v2, dst_o2, src_o2, dst_d2,
                                src_d2, dev, host));
  printf("2d whole back: %d\n",
         omp_target_memcpy(out2, d2, sizeof out2, 0, 0, host, dev));
  for (int i = 0; i < 4; i++) print_ints("2d row", out2[i], 5);
  /* Device to host with offsets on both sides: rows 0..2, columns 1..4 of the device
   * array into (1,0) of a fresh 3x6 host array. */
  int out2b[3][6];
  memset(out2b, 0, sizeof out2b);
  size_t v2b[2] = {2, 3}, dst_o2b[2] = {1, 0}, src_o2b[2] = {0, 1}, dst_d2b[2] = {3, 6};
  printf("2d to host: %d\n",
         omp_target_memcpy_rect(out2b, d2, sizeof(int), 2, v2b, dst_o2b, src_o2b, dst_d2b,
                                dst_d2, host, dev));
  for (int i = 0; i < 3; i++) print_ints("2d back row", out2b[i], 6);

  /* 3D: a 2x2x3 block at (1,1,1) of a 3x4x5 host array, to the device (dense 2x2x3),
   * device to device (into (1,0,0) of a 3x2x3 array), then back to the host. */
  int src3[3][4][5], out3[3][2][3];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++)
      for (int k = 0; k < 5; k++) src3[i][j][k] = 100 * i + 10 * j + k;
  int *d3 = omp_target_alloc(2 * 2 * 3 * sizeof(int), dev);
  int *d3b = omp_target_alloc(sizeof out3, dev);
  memset(out3, 0, sizeof out3);
  omp_target_memcpy(d3b, out3, sizeof out3, 0, 0, dev, host);
  size_t v3[3] = {2, 2, 3}, z3[3] = {0, 0, 0}, s_o3[3] = {1, 1, 1};
  size_t dense3[3] = {2, 2, 3}, src_d3[3] = {3, 4, 5}, b_o3[3] = {1, 0, 0},
         b_d3[3] = {3, 2, 3};
  printf("3d to device: %d\n",
         omp_target_memcpy_rect(d3, src3, sizeof(int), 3, v3, z3, s_o3, dense3, src_d3,
                                dev, host));
  printf("3d device to device: %d\n",
         omp_target_memcpy_rect(d3b, d3, sizeof(int), 3, v3, b_o3, z3, b_d3, dense3, dev,
                                dev));
  printf("3d to host: %d\n",
         omp_target_memcpy_rect(out3, d3b, sizeof(int), 3, b_d3, z3, z3, b_d3, b_d3, host,
                                dev));
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 2; j++) print_ints("3d row", out3[i][j], 3);
  /* Host to host, 2D. */
  int hh[2][3];
  size_t v_hh[2] = {2, 3}, o_hh[2] = {0, 0}, d_hh[2] = {2, 3};
  printf("2d host to host: %d\n",
         omp_target_memcpy_rect(hh, src2, sizeof(int), 2, v_hh, o_hh, o_hh, d_hh, src_d2,
                                host, host));
  for (int i = 0; i < 2; i++) print_ints("hh row", hh[i], 3);
  omp_target_free(d2, dev);
  omp_target_free(d3, dev);
  omp_target_free(d3b, dev);
}

/* The asynchronous forms wait for a task that writes their source (depend objects). */
static void async_copies(void) {
  int src[16], back[16], rect_back[2][4];
  int *d = omp_target_alloc(sizeof src, dev);
  memset(src, 0, sizeof src);
  int rc_copy = -5, rc_rect = -5, same = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
  {
#pragma omp task depend(out : src)
    {
      usleep(100000);
      for (int i = 0; i < 16; i++) src[i] = 7 * i;
    }
    omp_depend_t in_src;
#pragma omp depobj(in_src) depend(in : src)
    rc_copy = omp_target_memcpy_async(d, src, sizeof src, 0, 0, dev, host, 1, &in_src);
#pragma omp taskwait
    memset(back, 0, sizeof back);
    omp_target_memcpy(back, d, sizeof back, 0, 0, host, dev);

    /* A task rewrites src; the rect copy (2x4 block at (1,2) of src seen as 4x4) waits. */
#pragma omp task depend(out : src)
    {
      usleep(100000);
      for (int i = 0; i < 16; i++) src[i] = 1000 + i;
    }
    size_t vol[2] = {2, 4}, dst_o[2] = {0, 0}, src_o[2] = {1, 0}, dims[2] = {4, 4};
    rc_rect = omp_target_memcpy_rect_async(d, src, sizeof(int), 2, vol, dst_o, src_o,
                                           dims, dims, dev, host, 1, &in_src);
#pragma omp taskwait
    omp_target_memcpy(rect_back, d, sizeof rect_back, 0, 0, host, dev);

    /* memset_async after a task that fills the device buffer through a region. */
    omp_depend_t inout_d;
#pragma omp depobj(inout_d) depend(inout : d[0])
#pragma omp task depend(inout : d[0])
    {
      usleep(100000);
      omp_target_memcpy(d, src, sizeof src, 0, 0, dev, host);
    }
    same = omp_target_memset_async(d, 0x5a, 8 * sizeof(int), dev, 1, &inout_d) == d;
#pragma omp taskwait
#pragma omp depobj(in_src) destroy
#pragma omp depobj(inout_d) destroy
  }
  printf("memcpy_async: %d\n", rc_copy);
  print_ints("async copy", back, 16);
  printf("memcpy_rect_async: %d\n", rc_rect);
  for (int i = 0; i < 2; i++) print_ints("async rect row", rect_back[i], 4);
  unsigned char bytes[16 * sizeof(int)];
  omp_target_memcpy(bytes, d, sizeof bytes, 0, 0, host, dev);
  printf("memset_async returns ptr: %d, first %x, byte 31 %x, byte 32 %x\n", same,
         bytes[0], bytes[31], bytes[32]);
  printf("memcpy_async NULL: %d\n",
         omp_target_memcpy_async(NULL, src, 4, 0, 0, dev, host, 0, NULL));
  printf("memset_async NULL: %d\n",
         omp_target_memset_async(NULL, 1, 4, dev, 0, NULL) == NULL);
  omp_target_free(d, dev);
}

static void fills(void) {
  unsigned char *d = omp_target_alloc(64, dev);
  unsigned char out[64];
  printf("memset returns ptr: %d\n", omp_target_memset(d, 0x11, 64, dev) == d);
  printf("memset 0x1ff returns ptr: %d\n", omp_target_memset(d + 8, 0x1ff, 8, dev) == d + 8);
  printf("memset of 0 bytes returns ptr: %d\n", omp_target_memset(d, 0x22, 0, dev) == d);
  printf("memset NULL returns NULL: %d\n", omp_target_memset(NULL, 0, 8, dev) == NULL);
  omp_target_memcpy(out, d, 64, 0, 0, host, dev);
  printf("device bytes: %x %x %x %x\n", out[0], out[8], out[15], out[16]);
  unsigned char h[8];
  printf("memset on the initial device: %d\n", omp_target_memset(h, 3, 8, host) == h);
  printf("host bytes: %d %d\n", h[0], h[7]);
  omp_target_free(d, dev);
}

static void host_and_shared(void) {
  printf("alloc_host(0) is NULL: %d\n", llvm_omp_target_alloc_host(0, dev) == NULL);
  int *h = llvm_omp_target_alloc_host(8 * sizeof(int), dev);
  int *s = llvm_omp_target_alloc_shared(8 * sizeof(int), dev);
  printf("alloc_host: %d, alloc_shared: %d\n", h != NULL, s != NULL);
  for (int i = 0; i < 8; i++) h[i] = i, s[i] = 10 * i;
#pragma omp target is_device_ptr(h, s)
  for (int i = 0; i < 8; i++) s[i] += h[i];
  print_ints("shared after region", s, 8);
  llvm_omp_target_free_host(h, dev);
  llvm_omp_target_free_shared(s, dev);
  int *ih = llvm_omp_target_alloc_host(16, host);
  int *is = llvm_omp_target_alloc_shared(16, host);
  printf("initial device host/shared: %d %d\n", ih != NULL, is != NULL);
  llvm_omp_target_free_host(ih, host);
  llvm_omp_target_free_shared(is, host);

  int buf[32];
  for (int i = 0; i < 32; i++) buf[i] = i;
  int *locked = llvm_omp_target_lock_mem(buf, sizeof buf, dev);
  /* LLVM's host plugin hands back the host address itself; so does liboffload's host
   * device. */
  printf("lock_mem: %d, same address: %d\n", locked != NULL, locked == buf);
  int *dl = omp_target_alloc(sizeof buf, dev);
  printf("copy from locked memory: %d\n",
         omp_target_memcpy(dl, buf, sizeof buf, 0, 0, dev, host));
  int check[32];
  omp_target_memcpy(check, dl, sizeof check, 0, 0, host, dev);
  printf("check[31]=%d\n", check[31]);
  llvm_omp_target_unlock_mem(buf, dev);
  omp_target_free(dl, dev);
  printf("dynamic shared memory on the host: %d\n",
         llvm_omp_target_dynamic_shared_alloc() == NULL);
}

int main(void) {
  dev = omp_get_default_device();
  host = omp_get_initial_device();
  rect_copies();
  async_copies();
  fills();
  host_and_shared();
  return 0;
}
