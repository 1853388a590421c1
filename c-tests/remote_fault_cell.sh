#!/usr/bin/env bash
# The application rank of one cell of the remote-device fault matrix (see
# test_remote_mpi_faults.c): runs the test program, then checks what only the outside
# can see: that the program exited by itself, with the status it chose, within
# OFFLOAD_MPI_TIMEOUT + 2 s of deciding to. Then it lets the MPI job end: a stopped
# server is resumed, and servers of this job still there after a grace are killed (and
# said so). The verdict is the last line: "fault cell FAULT MOMENT: ok" or "... FAILED".
# Usage: remote_fault_cell.sh TEST_PROGRAM FAULT MOMENT QUEUE_WORK
program=$1
shift
fault=$1
moment=$2
timeout=${OFFLOAD_MPI_TIMEOUT:-5}
output=$(mktemp)
trap 'rm -f "$output"' EXIT

# Straight into the file, shown afterwards (a tee in a process substitution may not
# have written the last lines yet when they are looked for, on a busy machine).
"$program" "$@" > "$output" 2>&1
status=$?
ended=$(date +%s.%N)
cat "$output"

verdict=ok
why=""
fail() { verdict=FAILED; why="$why; $*"; }

grep -q '^skipped: no remote device' "$output" && { echo "skipped: no remote device"; exit 77; }
grep -Eq '^test_remote_mpi_faults: [0-9]+ checks, 0 failed' "$output" || fail "checks failed (see above)"
chosen=$(sed -n 's/^exit status chosen: \([0-9]*\) at wall .*/\1/p' "$output")
chosen_at=$(sed -n 's/^exit status chosen: [0-9]* at wall \(.*\)/\1/p' "$output")
if [ -z "$chosen" ]; then
  fail "the program never chose its exit status (it ended with $status)"
else
  [ "$status" = "$chosen" ] || fail "the program chose status $chosen but exited with $status"
  took=$(awk -v a="$chosen_at" -v b="$ended" 'BEGIN { printf "%.2f", b - a }')
  echo "exit took $took s after the program chose its status"
  awk -v t="$took" -v limit="$timeout" 'BEGIN { exit !(t <= limit + 2) }' ||
    fail "exit took $took s (more than OFFLOAD_MPI_TIMEOUT + 2 = $((${timeout%.*} + 2)) s)"
  [ "$moment" = exit ] && echo "MATRIX $fault exit $took"
fi

# A network fault across test hosts: the link comes back (multihost/across_hosts.sh),
# unless it is to stay down until the servers ended: then the server cut off from this
# application must learn from its silence that it is gone (OFFLOAD_MPI_ORPHAN_TIMEOUT)
# and end by itself. (The link comes back afterwards all the same: mpirun's own daemon
# on that host reports its end over it, and mpirun waits for that.)
stays_down=${OFFLOAD_TEST_LINK_STAYS_DOWN:-0}
restore_network() {
  [ -n "${OFFLOAD_TEST_NET_RESTORE:-}" ] && sh -c "$OFFLOAD_TEST_NET_RESTORE" 2>/dev/null
}
[ "$stays_down" != 1 ] && restore_network

# This job's servers: resume the stopped one, give them a grace to end, then make sure.
servers() {
  for pid in $(pgrep -x offload-mpi-dev); do
    tr '\0' '\n' < "/proc/$pid/environ" 2>/dev/null | grep -qx "PMIX_NAMESPACE=$PMIX_NAMESPACE" &&
      echo "$pid"
  done
}
for pid in $(servers); do kill -CONT "$pid" 2>/dev/null; done
grace=$(awk -v t="$timeout" 'BEGIN { printf "%d", 4 * t + 25 }')
[ "$stays_down" = 1 ] && grace=$(awk -v t="${OFFLOAD_MPI_ORPHAN_TIMEOUT:-30}" 'BEGIN { printf "%d", t + 10 }')
waited=0
while [ -n "$(servers)" ] && [ "$waited" -lt "$grace" ]; do sleep 1; waited=$((waited + 1)); done
left=$(servers)
if [ -n "$left" ]; then
  echo "servers still running $grace s after the application: killed ($left)"
  kill -KILL $left 2>/dev/null
  [ "$stays_down" = 1 ] && fail "the server cut off from the application did not end by itself within $grace s"
else
  echo "the servers ended by themselves within $waited s"
fi
[ "$stays_down" = 1 ] && restore_network
echo "fault cell $fault $moment: $verdict${why}"
exit 0
