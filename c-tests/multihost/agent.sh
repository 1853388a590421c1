#!/bin/sh
# The "ssh" of the test hosts (OpenMPI's plm_rsh_agent): `agent.sh HOST COMMAND...` runs
# the command in HOST's network namespace, under HOST as its host name (a UTS namespace
# of its own), as ssh would run it on that machine. Options before HOST are ssh's and
# ignored.
while [ "${1#-}" != "$1" ]; do shift; done
host=$1
shift
exec ip netns exec "$host" unshare --uts sh -c "hostname '$host' && $*"
