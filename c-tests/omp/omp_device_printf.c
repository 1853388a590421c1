/* printf inside target regions: one line from a region without teams, and one per team
 * from a teams region (their order among themselves is the device's, so each team writes
 * its number into a table the host prints in order too). On NVIDIA GPUs the device's
 * printf goes through CUDA's buffer, printed when the region ends. */
#include <omp.h>
#include <stdio.h>

int main(void) {
#pragma omp target
  printf("from the region: initial device %d\n", omp_is_initial_device());
  fflush(stdout);

  int seen[4] = {0, 0, 0, 0};
#pragma omp target teams num_teams(4) map(tofrom : seen)
  {
    int team = omp_get_team_num();
    if (team < 4) {
      seen[team] = 1;
      if (team == 0)
        printf("team 0 of %d says hello\n", omp_get_num_teams() > 0);
    }
  }
  printf("teams seen: %d %d %d %d\n", seen[0], seen[1], seen[2], seen[3]);
  return 0;
}
