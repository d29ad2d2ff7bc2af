#!/bin/sh
# Starts a one-node Slurm cluster on localhost, by hand (no systemd), everything under DIR:
# a munge key and munged, slurmctld and slurmd with their sockets, pid files, logs, spool and
# state. Waits until the node is idle, then prints the line that points Slurm's commands at it:
#   export SLURM_CONF=DIR/slurm.conf
# Usage: tools/ops/slurm-up.sh DIR        (as root; tools/ops/slurm-down.sh DIR stops what it started)
# Needs Debian's slurmctld, slurmd, slurm-client and munge (sh tools/ops/deps.sh slurm).
#
# Why this shape (Debian 12, Slurm 22.05): the cgroup plugins fail where there is no freezer
# cgroup (containers, CI), so processes are tracked by proctrack/linuxproc with task/none;
# there is no accounting (scontrol show job keeps finished jobs for MinJobAge); the node has
# this machine's real CPUs and memory (slurmd -C). The ports are free ones picked now (or
# RETRYSIM_SLURM_PORT and the next one), so a second cluster or a system one is not disturbed.
set -eu

[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "slurm-up: must run as root (slurmd runs jobs as their user)" >&2; exit 1; }
for p in munged mungekey munge slurmctld slurmd sinfo python3; do
  command -v "$p" >/dev/null 2>&1 || [ -x "/usr/sbin/$p" ] || {
    echo "slurm-up: $p not found; install it: sh tools/ops/deps.sh slurm" >&2; exit 1; }
done
PATH="$PATH:/usr/sbin:/sbin"

mkdir -p "$1"
dir=$(cd "$1" && pwd)
if [ -f "$dir/run/slurmctld.pid" ] && kill -0 "$(cat "$dir/run/slurmctld.pid")" 2>/dev/null; then
  echo "slurm-up: a cluster already runs in $dir (tools/ops/slurm-down.sh $dir stops it)" >&2; exit 1
fi
# munged refuses a socket or key in a folder others may write to (and one others cannot enter).
rm -rf "$dir/munge" "$dir/state" "$dir/spool" "$dir/run" "$dir/log"
mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/run" "$dir/log"
chmod 0755 "$dir/munge"
chmod 0755 "$dir" "$dir/state" "$dir/spool" "$dir/run" "$dir/log"
sock="$dir/munge/munge.socket"
if [ ${#sock} -ge 100 ]; then
  echo "slurm-up: $dir is too long a path for a Unix socket; use a shorter folder" >&2; exit 2
fi

t0=$(date +%s)
# From here on, a failure stops whatever this script started (and only that).
here=$(cd "$(dirname "$0")" && pwd)
trap 'sh "$here/slurm-down.sh" "$dir"' EXIT
# ---- munge: its own key, socket, pid file, seed and log
mungekey --create --keyfile="$dir/munge/munge.key" --bits=1024
chmod 0400 "$dir/munge/munge.key"
munged --socket="$sock" --key-file="$dir/munge/munge.key" --pid-file="$dir/run/munged.pid" \
  --seed-file="$dir/munge/munged.seed" --log-file="$dir/log/munged.log"
if ! munge -n -S "$sock" | unmunge -S "$sock" >/dev/null; then
  echo "slurm-up: munged does not answer on $sock (see $dir/log/munged.log)" >&2; exit 1
fi

# ---- two free TCP ports on loopback (slurmctld's and slurmd's)
if [ -n "${RETRYSIM_SLURM_PORT:-}" ]; then
  ctld_port=$RETRYSIM_SLURM_PORT
  slurmd_port=$((RETRYSIM_SLURM_PORT + 1))
else
  ports=$(python3 -c 'import socket
ss = [socket.socket() for _ in range(2)]
for s in ss: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))')
  ctld_port=${ports% *}
  slurmd_port=${ports#* }
fi

# ---- slurm.conf: this machine as the one node, with its real CPUs and memory
node=$(hostname -s)
hw=$(slurmd -C | sed -n 's/^NodeName=[^ ]* //p')
# Slurm wants the memory it was told to exist; leave a little for the system.
mem=$(printf '%s\n' "$hw" | sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p')
hw=$(printf '%s\n' "$hw" | sed 's/ *RealMemory=[0-9]*//')
mem=$((mem * 95 / 100))
cat >"$dir/slurm.conf" <<EOF
# One-node cluster of tools/ops/slurm-up.sh (everything under $dir)
ClusterName=retrysim
SlurmctldHost=$node(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
AuthInfo=socket=$sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/builtin
SchedulerParameters=batch_sched_delay=0
MailProg=/bin/true
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MinJobAge=600
SlurmdTimeout=60
SlurmctldTimeout=60
NodeName=$node NodeAddr=127.0.0.1 NodeHostname=$node $hw RealMemory=$mem State=UNKNOWN
PartitionName=local Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
echo "export SLURM_CONF=$dir/slurm.conf" >"$dir/env"
SLURM_CONF="$dir/slurm.conf"
export SLURM_CONF

# ---- the daemons: each forks and writes its pid file; -i ignores an old state (clean start)
slurmctld -f "$SLURM_CONF" -i
slurmd -f "$SLURM_CONF" -N "$node"

# ---- wait until the node is idle (ReturnToService=2 brings it up when slurmd registers), for
# at most 60 s; a daemon that died (a port taken, a bad config) fails at once, with its log.
running() {
  p=$(cat "$dir/run/$1.pid" 2>/dev/null) && kill -0 "$p" 2>/dev/null &&
    ! grep -q '^[0-9]* (.*) Z' "/proc/$p/stat" 2>/dev/null
}
deadline=$(($(date +%s) + 60))
while :; do
  state=$(timeout 5 sinfo -h -N -n "$node" -o %t 2>/dev/null || true)
  [ "$state" = idle ] && break
  for d in slurmctld slurmd munged; do
    # slurmctld and slurmd write their pid files a moment after they fork.
    [ -f "$dir/run/$d.pid" ] || [ $(($(date +%s) + 55)) -lt "$deadline" ] || continue
    running "$d" && continue
    log="$dir/log/$d.log"
    echo "slurm-up: $d is not running; the end of $log:" >&2
    tail -n 5 "$log" >&2 2>/dev/null || true
    exit 1
  done
  if [ "$(date +%s)" -ge "$deadline" ]; then
    echo "slurm-up: node $node not idle after 60 s (state '${state:-none}'); logs in $dir/log/" >&2
    tail -n 5 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" >&2 || true
    exit 1
  fi
  sleep 0.5
done
trap - EXIT
echo "slurm-up: node $node idle after $(($(date +%s) - t0)) s (ports $ctld_port, $slurmd_port); logs in $dir/log/" >&2
echo "export SLURM_CONF=$dir/slurm.conf"
