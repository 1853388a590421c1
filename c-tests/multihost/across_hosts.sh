#!/bin/sh
# Runs an MPI job across three test hosts made of network namespaces: the application on
# the first, device servers on the others, MPI (OpenMPI's UCX layer) over TCP through a
# bridge between them; each host has its own address and host name, so nothing of the job
# takes the same-node shortcuts (shared memory, the server's watch of the application's
# process). The hosts are made for the run and removed after it.
#
#   across_hosts.sh TAG SERVERS [--delay MS] -- APPLICATION ARGS...
#
# TAG (a number 1-250) names the hosts (ofh<TAG>a, -b, -c) and their subnet
# (10.78.TAG.0/24), so that jobs can run side by side; SERVERS (1 or 2) device servers
# on the second (and third) host, ranks 0 (and 1); the application is the last rank.
# --delay MS: the first server's link delays each frame MS milliseconds each way.
# The application's environment names the first server's link for network faults:
#   OFFLOAD_TEST_LINK_DOWN / _UP     take that link down / bring it back
#   OFFLOAD_TEST_LINK_LOSS / _CLEAR  lose 5% of its packets / stop losing them
# OFFLOAD_MPI_SERVER names offload-mpi-device, OFFLOAD_LINK_EMULATOR the link emulator.
# Needs root, ip (iproute2) with netns, unshare and /dev/net/tun; exits 77 otherwise.
set -u
tag=$1
servers=$2
shift 2
delay=""
if [ "${1:-}" = "--delay" ]; then delay=$2; shift 2; fi
[ "${1:-}" = "--" ] && shift
here=$(cd "$(dirname "$0")" && pwd)

if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null || ! command -v unshare >/dev/null ||
   [ ! -e /dev/net/tun ]; then
  echo "skipped: test hosts need root, ip, unshare and /dev/net/tun (iproute2, util-linux)"
  exit 77
fi
bridge="ofb$tag"
hosts="ofh${tag}a ofh${tag}b ofh${tag}c"
net="10.78.$tag"
teardown() {
  status=$?
  [ -s "$work/emulator.pid" ] && kill "$(cat "$work/emulator.pid")" 2>/dev/null
  for h in $hosts; do
    pids=$(ip netns pids "$h" 2>/dev/null)
    [ -n "$pids" ] && kill -9 $pids 2>/dev/null
    ip netns del "$h" 2>/dev/null
  done
  ip link del "$bridge" 2>/dev/null
  # (A host's end goes with its namespace once no process holds that any more.)
  for l in "ofv${tag}1" "ofv${tag}2" "ofv${tag}3" "ofe${tag}o"; do ip link del "$l" 2>/dev/null; done
  rm -rf "$work"
  exit $status
}
work=$(mktemp -d "${TMPDIR:-/tmp}/offload-hosts.XXXXXX")
trap teardown EXIT
# The hosts, each with eth0 on the bridge (MTU 9000). The first server's host is linked
# through the link emulator (OFFLOAD_LINK_EMULATOR, multihost/link_emulator.c: a delay and
# packet loss on demand; this kernel's tc may have no netem); the others by veth pairs.
for h in $hosts; do
  ip netns del "$h" 2>/dev/null
  ip netns add "$h" || { echo "skipped: cannot make network namespaces"; exit 77; }
done
ip link del "$bridge" 2>/dev/null
for l in "ofv${tag}1" "ofv${tag}2" "ofv${tag}3" "ofe${tag}o"; do ip link del "$l" 2>/dev/null; done
ip link add "$bridge" type bridge && ip link set "$bridge" mtu 9000 up || exit 1
set -- $hosts "$@"
app_host=$1 first=$2 second=$3
shift 3
emulator=${OFFLOAD_LINK_EMULATOR:?OFFLOAD_LINK_EMULATOR names the link emulator}
n=1
for h in $hosts; do
  if [ "$h" = "$first" ] && [ "${OFFLOAD_HOSTS_EMULATOR:-1}" = 1 ]; then
    # The wire does not wait for a CPU: real-time priority where the system allows it
    # (MPI ranks that busy-poll would otherwise delay its frames by whole time slices).
    rt=""
    command -v chrt >/dev/null && chrt -f 10 true 2>/dev/null && rt="chrt -f 10"
    $rt "$emulator" "ofe${tag}i" "ofe${tag}o" "${delay:-0}" "$work/emulator.pid" &
    for _ in 1 2 3 4 5 6 7 8 9 10; do [ -s "$work/emulator.pid" ] && break; sleep 0.1; done
    [ -s "$work/emulator.pid" ] || { echo "skipped: the link emulator could not start (TAP devices)"; exit 77; }
    ip link set "ofe${tag}i" netns "$h" &&
      ip netns exec "$h" ip link set "ofe${tag}i" name eth0 &&
      ip link set "ofe${tag}o" mtu 9000 master "$bridge" up || exit 1
  else
    ip link add "ofv$tag$n" type veth peer name eth0 netns "$h" &&
      ip link set "ofv$tag$n" mtu 9000 master "$bridge" up || exit 1
  fi
  ip netns exec "$h" ip link set eth0 mtu 9000 &&
    ip netns exec "$h" ip addr add "$net.$n/24" dev eth0 &&
    ip netns exec "$h" ip link set eth0 up &&
    ip netns exec "$h" ip link set lo up || exit 1
  n=$((n + 1))
done
printf '%s slots=8\n%s slots=8\n%s slots=8\n' "$app_host" "$first" "$second" > "$work/hosts"

# The first server's link, for the network faults of the fault matrix.
pid=$(cat "$work/emulator.pid" 2>/dev/null)
export OFFLOAD_TEST_LINK_DOWN="ip netns exec $first ip link set eth0 down"
export OFFLOAD_TEST_LINK_UP="ip netns exec $first ip link set eth0 up"
export OFFLOAD_TEST_LINK_LOSS="kill -USR1 $pid"
export OFFLOAD_TEST_LINK_CLEAR="kill -USR2 $pid"
export OFFLOAD_TEST_NET_RESTORE="$OFFLOAD_TEST_LINK_UP; $OFFLOAD_TEST_LINK_CLEAR"
# MPI's layer: UCX over TCP (OpenMPI's ob1 layer deadlocks on a reset peer; README), or
# OFFLOAD_HOSTS_MPI=ob1 (its TCP transport), for comparisons.
if [ "${OFFLOAD_HOSTS_MPI:-ucx}" = ob1 ]; then
  mpi_layer="--mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include $net.0/24"
else
  mpi_layer="--mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any"
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Tests that check what differs between nodes read it (test_remote_mpi).
export OFFLOAD_TEST_ACROSS_HOSTS=1
export UCX_TLS=tcp,self UCX_NET_DEVICES=eth0
# Everything the job's processes read, passed to the other hosts too.
pass=""
for v in $(env | sed -n 's/^\(OFFLOAD_[A-Z0-9_]*\|UCX_[A-Z0-9_]*\|LD_LIBRARY_PATH\|ASAN_OPTIONS\|LSAN_OPTIONS\|UBSAN_OPTIONS\)=.*/\1/p'); do
  pass="$pass -x $v"
done
server=${OFFLOAD_MPI_SERVER:?OFFLOAD_MPI_SERVER names offload-mpi-device}
if [ "$servers" = 2 ]; then
  ranks="-np 1 --host $first $server : -np 1 --host $second $server"
else
  ranks="-np 1 --host $first $server"
fi
# With a server that may be lost (the fault cells: OFFLOAD_HOSTS_RECOVERY=1), mpirun
# must not end the job for it; otherwise a rank that fails fails the job.
recovery=""
[ "${OFFLOAD_HOSTS_RECOVERY:-0}" = 1 ] && recovery=--enable-recovery
ip netns exec "$app_host" unshare --uts sh -c "hostname $app_host &&
  exec mpirun --mca orte_tmpdir_base '$work' --hostfile '$work/hosts' \
    --mca plm_rsh_agent '$here/agent.sh' --mca oob_tcp_if_include $net.0/24 \
    $mpi_layer \
    --bind-to none $recovery $pass $ranks : -np 1 --host $app_host \"\$@\"" sh "$@" &
job=$!
# Stopped from outside (a test's timeout): the job goes, and the hosts with it (below,
# every process still in them is killed before the namespaces go).
trap 'kill $job 2>/dev/null; exit 143' TERM INT
wait $job
