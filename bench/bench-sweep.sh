#!/bin/sh
# bench/bench-sweep.sh: issue 11's sweep target (make bench): the CPU time of a sweep of
# POINTS short runs (one process: the scenario parsed and validated once, each point derived
# from it) against the same POINTS runs made one by one as plain runs, each its own process with
# the point's value as a --set. Target: the sweep costs at most 10 % more CPU (ratio <= 1.10);
# being one process, it usually costs less. The runs are checked to be the same runs: each plain
# run's event count equals the sweep's for that point.
#   BUILD    the build directory (default build)
#   POINTS   points of the sweep (default 100; the rate goes 1000/s, 1020/s, ... in steps of 20)
#   STRICT=1 exit 1 when the target is missed (default: report only; a loaded machine misses)
set -eu
B=${BUILD:-build}
bin="$B/retrysim"
POINTS=${POINTS:-100}
[ "$POINTS" -ge 2 ] || { echo "bench-sweep: POINTS must be at least 2" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# cpu FILE: user + system seconds of the shell's finished children, from `times` (run by the
# main shell into FILE: a command substitution would time only itself).
cpu() {
  awk 'NR == 2 { s = 0; for (i = 1; i <= NF; i++) { split($i, p, "m"); sub("s", "", p[2])
    s += p[1] * 60 + p[2] } printf "%.3f", s }' "$1"
}

# A short run: one quickstart variant for 5 simulated seconds (about 0.01 s of CPU each), so
# that what is paid once per process (start-up, loading, validation) shows.
last=$((1000 + 20 * (POINTS - 1)))
set -- experiments/quickstart.json --duration 5s --set drain=1s --variant retries --quiet
echo "== sweep: $POINTS points (clients.web.arrival.rate 1000/s to $last/s) as one sweep," \
  "against $POINTS plain runs"
times >"$tmp/c0"
"$bin" run "$@" --sweep "clients.web.arrival.rate=1000/s:$last/s:$POINTS" -j 1 --out "$tmp/sweep"
times >"$tmp/c1"
# Each point's value as the sweep wrote it, then each as its own process.
awk -F, 'NR > 1 && $6 == "events" { print $2 }' "$tmp/sweep/runs.csv" >"$tmp/values"
[ "$(wc -l <"$tmp/values")" -eq "$POINTS" ] ||
  { echo "bench-sweep: runs.csv has not $POINTS points" >&2; exit 1; }
i=0
while IFS= read -r v; do
  "$bin" run "$@" --set "clients.web.arrival.rate=$v" --format json >"$tmp/plain-$i.json"
  i=$((i + 1))
done <"$tmp/values"
times >"$tmp/c2"

# The same runs: the plain run of point i has the sweep's event count for point i.
awk -F, 'NR > 1 && $6 == "events" { print $7 }' "$tmp/sweep/runs.csv" >"$tmp/events-sweep"
i=0
: >"$tmp/events-plain"
while [ $i -lt "$POINTS" ]; do
  sed -n 's/^ *"events": *\([0-9]*\),*$/\1/p' "$tmp/plain-$i.json" | head -n 1 >>"$tmp/events-plain"
  i=$((i + 1))
done
cmp -s "$tmp/events-sweep" "$tmp/events-plain" || {
  echo "bench-sweep: the plain runs are not the sweep's runs (event counts differ)" >&2
  paste "$tmp/values" "$tmp/events-sweep" "$tmp/events-plain" | head >&2
  exit 1
}

c0=$(cpu "$tmp/c0")
c1=$(cpu "$tmp/c1")
c2=$(cpu "$tmp/c2")
cs=$(awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.2f", b - a }')
cp=$(awk -v a="$c1" -v b="$c2" 'BEGIN { printf "%.2f", b - a }')
r=$(awk -v s="$cs" -v p="$cp" 'BEGIN { printf "%.3f", (p > 0 ? s / p : 0) }')
echo "  sweep: $cs s CPU, $POINTS plain runs: $cp s CPU: ratio $r (target <= 1.10);" \
  "the same runs (event counts equal)"
missed=0
awk -v r="$r" 'BEGIN { exit !(r <= 1.10) }' || { echo "  target missed"; missed=1; }
echo "result sweep_cpu_s=$cs sweep_plain_cpu_s=$cp sweep_cpu_ratio=$r"
if [ "$missed" = 1 ] && [ "${STRICT:-0}" = 1 ]; then exit 1; fi
exit 0
