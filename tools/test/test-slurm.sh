#!/bin/sh
# Issue 11: a study through a real Slurm cluster gives exactly the files of one local run.
# Starts a one-node cluster on this machine (tools/ops/slurm-up.sh: munged, slurmctld and slurmd on
# localhost, everything under a temporary folder), submits a sweep's shards as a job array
# (sbatch --array=1-4, task K runs `--shard K/4`) and the merge as a job that depends on it
# (--dependency=afterok:ARRAY), both job scripts taken from docs/scaling-out.md, waits by
# polling squeue (sbatch --wait polls at 2, 10, 42 s), checks every task and the merge
# COMPLETED with exit 0 and in that order (scontrol show job), and compares every merged file
# with the local run's (cmp). Stops what it started, always.
# As root it installs what it needs (tools/ops/deps.sh slurm); not as root it skips, saying so,
# because slurmd must run as root (CI runs as root: there it runs).
# Usage: BUILD=build sh tools/test/test-slurm.sh          (make test-slurm)
set -u
. "$(dirname "$0")/lib.sh"
need_bin
need_root "slurmd runs as root; CI runs this as root"
sh "$ops/deps.sh" slurm || { echo "test-slurm: FAIL: could not install Slurm and munge"; exit 1; }
PATH="$PATH:/usr/sbin:/sbin"
t_bindir
top=$(pwd)

# A short folder: munged's socket path must fit a Unix socket's 108 bytes.
tmp=$(mktemp -d /tmp/retrysim-slurm.XXXXXX)
chmod 0755 "$tmp"
cluster="$tmp/c"
cleanup() {
  sh "$ops/slurm-down.sh" "$cluster"
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# Milliseconds since the epoch (GNU date), and a span of them as seconds with one decimal.
now_ms() { echo $(($(date +%s%N) / 1000000)); }
secs() { ms=$(($(now_ms) - $1)); echo "$((ms / 1000)).$((ms % 1000 / 100))"; }

fail() {
  echo "test-slurm: FAIL: $*"
  for f in "$cluster"/log/*.log "$tmp"/out/*.out; do
    [ -f "$f" ] && { echo "--- $f"; tail -n 20 "$f"; }
  done
  exit 1
}

t0=$(now_ms)
up=$(sh "$ops/slurm-up.sh" "$cluster" 2>"$tmp/up.log") || { cat "$tmp/up.log"; fail "slurm-up failed"; }
eval "$up"
[ -n "${SLURM_CONF:-}" ] || fail "slurm-up printed no SLURM_CONF"
t_up=$(secs "$t0")

# The sweep of tools/test/test-parallel.sh: 2 rates x 2 variants x 3 replications = 12 runs.
scenario=experiments/quickstart.json
set -- --duration 40s --reps 3 \
  --variant no-retries --variant throttled --sweep clients.web.arrival.rate=1500/s,2500/s --quiet
"$bin" run "$scenario" "$@" --out "$tmp/local" >"$tmp/local.log" 2>&1 ||
  { cat "$tmp/local.log"; fail "the local run failed"; }

# docs/scaling-out.md's two job scripts, as written there: the fenced block after each line
# "<!-- tools/test/test-slurm.sh submits this block as it stands -->" (the shards', then the merge's).
doc_block() {
  awk -v n="$1" '/^<!-- tools\/test\/test-slurm.sh submits this block/ { c++; want = (c == n); next }
    want && /^```/ { if (inside) exit; inside = 1; next }
    want && inside { print }' "$top/docs/scaling-out.md"
}
doc_block 1 >"$tmp/shards.sbatch"
doc_block 2 >"$tmp/merge.sbatch"
grep -q -- '--shard' "$tmp/shards.sbatch" || fail "no shard job script found in docs/scaling-out.md"
grep -q 'retrysim merge' "$tmp/merge.sbatch" || fail "no merge job script found in docs/scaling-out.md"
mkdir -p "$tmp/out" "$tmp/study"
# The jobs find this build's retrysim on PATH (sbatch passes the environment on).
PATH="$bindir:$PATH"
export PATH
t1=$(now_ms)
array=$(sbatch --parsable --array=1-4 --chdir="$tmp" "$tmp/shards.sbatch" "$top/$scenario" "$@") ||
  fail "sbatch of the shard array failed"
array=${array%%;*}
merge=$(sbatch --parsable --chdir="$tmp" --dependency=afterok:"$array" --kill-on-invalid-dep=yes \
  "$tmp/merge.sbatch") || fail "sbatch of the merge job failed"
merge=${merge%%;*}

# Wait by polling: both jobs leave squeue when they ended (pending, running, completing).
i=0
while [ -n "$(squeue -h -j "$array,$merge" -o %i 2>/dev/null)" ]; do
  i=$((i + 1))
  [ $i -ge 600 ] && fail "jobs $array and $merge still queued after 300 s: $(squeue -j "$array,$merge")"
  sleep 0.5
done
t_jobs=$(secs "$t1")

# Every array task and the merge job COMPLETED, exit 0 (scontrol keeps ended jobs MinJobAge).
scontrol -o show job "$array" >"$tmp/array.txt" 2>&1 || fail "scontrol show job $array: $(cat "$tmp/array.txt")"
scontrol -o show job "$merge" >"$tmp/merge.txt" 2>&1 || fail "scontrol show job $merge: $(cat "$tmp/merge.txt")"
tasks=$(grep -c 'JobState=COMPLETED .*ExitCode=0:0' "$tmp/array.txt")
[ "$tasks" -eq 4 ] || { cat "$tmp/array.txt"; fail "$tasks of 4 array tasks COMPLETED with exit 0"; }
grep -q 'JobState=COMPLETED .*ExitCode=0:0' "$tmp/merge.txt" ||
  { cat "$tmp/merge.txt"; fail "the merge job did not complete with exit 0"; }
# The merge started after the last task ended (afterok), not beside it (ISO times sort as text).
last_end=$(sed -n 's/.* EndTime=\([^ ]*\) .*/\1/p' "$tmp/array.txt" | LC_ALL=C sort | tail -n 1)
merge_start=$(sed -n 's/.* StartTime=\([^ ]*\) .*/\1/p' "$tmp/merge.txt")
{ [ -n "$last_end" ] && [ -n "$merge_start" ]; } || fail "no EndTime/StartTime in scontrol's answers"
[ "$(printf '%s\n%s\n' "$last_end" "$merge_start" | LC_ALL=C sort | head -n 1)" = "$last_end" ] ||
  fail "the merge started at $merge_start, before the last shard ended ($last_end)"

(cd "$tmp/local" && find . -maxdepth 1 -type f | LC_ALL=C sort) >"$tmp/list-a"
# The merged files sit beside the shard folders, as with plan's merge line.
(cd "$tmp/study" && find . -maxdepth 1 -type f | LC_ALL=C sort) >"$tmp/list-b"
cmp -s "$tmp/list-a" "$tmp/list-b" || { diff "$tmp/list-a" "$tmp/list-b"; fail "not the same files as the local run"; }
[ -s "$tmp/list-a" ] || fail "the local run wrote no files"
while IFS= read -r f; do
  cmp "$tmp/local/$f" "$tmp/study/$f" || fail "$f differs from the local run's"
done <"$tmp/list-a"

# slurm-down ends the three daemons (a zombie not yet reaped by its parent counts as ended).
pids=$(cat "$cluster/run/munged.pid" "$cluster/run/slurmctld.pid" "$cluster/run/slurmd.pid")
t2=$(now_ms)
sh "$ops/slurm-down.sh" "$cluster"
t_down=$(secs "$t2")
for p in $pids; do
  if kill -0 "$p" 2>/dev/null && ! grep -q '^[0-9]* (.*) Z' "/proc/$p/stat" 2>/dev/null; then
    fail "process $p ($(cat "/proc/$p/comm" 2>/dev/null)) still runs after slurm-down"
  fi
done
echo "test-slurm: a sweep of 12 runs (2 rates x 2 variants x 3 replications) as a Slurm array" \
  "of 4 shards ($(sinfo -V 2>/dev/null || echo slurm)) and a dependent merge job equals the" \
  "local run, every file cmp-identical;" \
  "cluster up in ${t_up} s, jobs done in ${t_jobs} s, down in ${t_down} s, $(secs "$t0") s in all"
