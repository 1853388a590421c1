/* 2 GiB + 1 byte to a remote device and back (`mpirun -np 1 offload-mpi-device : -np 1
 * test_remote_mpi_2gib`): more than one MPI message can carry (sizes are 64-bit all the
 * way), and a server busy for longer than OFFLOAD_MPI_TIMEOUT with one copy is not taken
 * for a dead one (it says it is alive while it works). Skips without a remote device. */
#include "offload_test.h"

int main(void) {
  REQUIRE_OK(olInit());
  ol_device_handle_t host = host_device(), remote = remote_test_device();
  const size_t n = ((size_t)2 << 30) + 1;
  unsigned char *a = malloc(n), *b = malloc(n);
  REQUIRE(a && b);
  for (size_t i = 0; i < n; i += 4096) a[i] = (unsigned char)(i >> 12);
  a[n - 1] = 0x5a;
  void *mem = NULL;
  REQUIRE_OK(olMemAlloc(remote, OL_ALLOC_TYPE_DEVICE, n, &mem));
  CHECK_OK(olMemcpy(NULL, mem, remote, a, host, n));
  memset(b, 0, n);
  CHECK_OK(olMemcpy(NULL, b, host, mem, remote, n));
  size_t wrong = 0;
  for (size_t i = 0; i < n; i += 4096) wrong += a[i] != b[i];
  CHECK_EQ(wrong, 0);
  CHECK_EQ(b[n - 1], 0x5a); /* the one byte past 2 GiB */
  CHECK_OK(olMemFree(mem));
  free(a);
  free(b);
  CHECK_OK(olShutDown());
  return test_finish("test_remote_mpi_2gib");
}
