/* A target region that faults on a remote device (a store through a null device
 * pointer): the server ends, and the application's launch fails at once with the
 * server's words (the signal and the address), not after OFFLOAD_MPI_TIMEOUT of
 * silence. LLVM's libomptarget then stops the program, as for any failed region. */
#include <stdio.h>

int main(void) {
  int ran = 0;
#pragma omp target map(from : ran)
  ran = 1;
  printf("a region ran: %d\n", ran);
  fflush(stdout);
  int *nowhere = NULL;
#pragma omp target is_device_ptr(nowhere)
  *nowhere = 1;
  printf("not reached\n");
  return 0;
}
