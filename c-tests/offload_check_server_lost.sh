#!/usr/bin/env bash
# The application rank of an MPI job with one device server: runs offload-check, and
# once it has listed the devices (so the server's device is among them), kills the
# server. The checks that reach the lost server then fail with the library's error
# naming its rank, and offload-check must say FAILED and exit with 1, by itself, within
# the test's timeout (every wait of the library on a server has a deadline:
# OFFLOAD_MPI_TIMEOUT). The verdict is the last line: "offload-check with a lost
# server: ok" or "... FAILED: why".
# Usage (under mpirun --enable-recovery ... offload-mpi-device : -np 1):
#   offload_check_server_lost.sh OFFLOAD_CHECK
tool=$1
output=$(mktemp)
trap 'rm -f "$output"' EXIT

# This job's device server (same PMIx namespace; its name is cut to 15 characters).
server_pid() {
  local pid
  for pid in $(pgrep -x offload-mpi-dev); do
    if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "PMIX_NAMESPACE=$PMIX_NAMESPACE"; then
      echo "$pid"
      return
    fi
  done
}

"$tool" >"$output" 2>&1 &
checker=$!
# Wait (at most 30 s) for the device list, which comes before any check runs; then hold
# offload-check while its server is found and killed (on a loaded machine the checks
# could otherwise all pass first, and its exit end the server).
for _ in $(seq 1500); do
  grep -q '^[0-9]* devices*:' "$output" && break
  kill -0 "$checker" 2>/dev/null || break
  sleep 0.02
done
kill -STOP "$checker" 2>/dev/null
if ! grep -q '^  #[0-9]* *MPI ' "$output"; then
  kill -CONT "$checker" 2>/dev/null
  wait "$checker"
  cat "$output"
  echo "skipped: no remote device"
  exit 0
fi
server=$(server_pid)
if [ -n "$server" ]; then
  kill -KILL "$server"
  echo "killed the device server (pid $server) after offload-check listed the devices"
fi
kill -CONT "$checker" 2>/dev/null
wait "$checker"
status=$?
cat "$output"

verdict=ok
[ -n "$server" ] || verdict="FAILED: found no device server of this job to kill"
[ "$status" = 1 ] || verdict="FAILED: offload-check exited with $status, expected 1"
grep -q 'FAILED' "$output" || verdict="FAILED: no check says FAILED"
grep -q 'rank 0' "$output" || verdict="FAILED: no reason names the lost server (rank 0)"
echo "offload-check with a lost server: $verdict"
