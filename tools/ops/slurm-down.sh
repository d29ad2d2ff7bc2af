#!/bin/sh
# Stops the one-node cluster tools/ops/slurm-up.sh DIR started, and only that: cancels its jobs,
# then ends slurmd, slurmctld and munged by the pids in DIR/run/, waiting for each to exit.
# Usage: tools/ops/slurm-down.sh DIR     (safe to run again; leaves DIR/log/ for reading)
set -u

[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
[ -d "$1" ] || exit 0
dir=$(cd "$1" && pwd)
PATH="$PATH:/usr/sbin:/sbin"

# A pid file's process, if it still runs and is the program named (a reused pid is left alone).
live_pid() {
  [ -f "$dir/run/$1.pid" ] || return 1
  p=$(cat "$dir/run/$1.pid" 2>/dev/null) || return 1
  case "$p" in '' | *[!0-9]*) return 1 ;; esac
  [ -r "/proc/$p/comm" ] && grep -q "^$1" "/proc/$p/comm" || return 1
  echo "$p"
}

# Still running (a zombie waiting for its parent to reap it counts as ended).
alive() {
  kill -0 "$1" 2>/dev/null || return 1
  ! grep -q '^[0-9]* (.*) Z' "/proc/$1/stat" 2>/dev/null
}

# Jobs first, while slurmctld and slurmd still run: their steps end cleanly.
if [ -f "$dir/slurm.conf" ] && live_pid slurmctld >/dev/null; then
  SLURM_CONF="$dir/slurm.conf" scancel --quiet --full --user=root 2>/dev/null || true
  i=0
  while [ $i -lt 20 ] && [ -n "$(SLURM_CONF="$dir/slurm.conf" squeue -h -o %i 2>/dev/null)" ]; do
    sleep 0.5; i=$((i + 1))
  done
fi

# slurmd and slurmctld together (slurmctld takes a few seconds to save its state), munged last.
stop() {
  pids=""
  for d in "$@"; do
    p=$(live_pid "$d") || continue
    kill "$p" 2>/dev/null && pids="$pids $p"
  done
  i=0
  for p in $pids; do
    while alive "$p"; do
      i=$((i + 1))
      if [ $i -ge 60 ]; then kill -9 "$p" 2>/dev/null || true; break; fi
      sleep 0.25
    done
  done
  for d in "$@"; do rm -f "$dir/run/$d.pid"; done
}
stop slurmd slurmctld
stop munged
# slurmstepd of a step that outlived its slurmd (they name the spool folder in their socket).
for pd in /proc/[0-9]*; do
  grep -q '^slurmstepd' "$pd/comm" 2>/dev/null || continue
  if { tr '\0' '\n' <"$pd/environ"; } 2>/dev/null | grep -qx "SLURM_CONF=$dir/slurm.conf"; then
    kill -9 "${pd#/proc/}" 2>/dev/null
  fi
done
exit 0
