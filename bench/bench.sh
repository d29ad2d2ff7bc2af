#!/bin/sh
# bench/bench.sh: the side-by-side measurements of `make bench`, each reported as a ratio of
# two runs made here, one after the other, so the machine's speed and load cancel out as far
# as they can (docs/performance.md records the figures and the targets of issue 12).
#   BUILD      the build directory (default build)
#   MM1_CUSTOMERS   customers of the two M/M/1 runs (default 10000000, which bench/mm1.json's
#                   duration of 11111 s at 900/s matches)
#   FLEET      the fleet sizes (default "100 10000 100000 1000000"), FLEET_DURATION their time
#   WINDOWS    the fleet sizes with a Finagle budget and adaptive throttling (default
#              "100 100000", bench/reference-windows.json, 30 s)
#   CACHE      the look-aside cache capacities (default "1000 1000000"), bench/cache.json, 120 s
#   INFLIGHT   the arrival rates of the calls-in-flight runs (default "10000 100000 1000000");
#              the runs with a retry policy (bench/inflight-retry.json) take the first and last
#   REPEAT     how many times each timed run is made (default 3), the runs of a comparison
#              alternated; each side keeps its fastest run, the one least disturbed by
#              whatever else the machine did (every run of a side simulates the same events)
# With PEERS=1 it runs the SimPy M/M/1 instead (make bench-peers), SIMPY_CUSTOMERS customers.
#   C_REPEAT   with PEERS=1, how many times the bare C and the retrysim runs are made in each
#              of the REPEAT rounds (default 3): each takes about 0.1 s against SimPy's 10 s,
#              and a run that short is more exposed to the machine's hiccups (a stray 0.05 s
#              is a third of it), so each C side keeps the fastest of REPEAT x C_REPEAT runs
set -eu
B=${BUILD:-build}
MM1_CUSTOMERS=${MM1_CUSTOMERS:-10000000}
FLEET=${FLEET:-"100 10000 100000 1000000"}
FLEET_DURATION=${FLEET_DURATION:-120s}
INFLIGHT=${INFLIGHT:-"10000 100000 1000000"}
REPEAT=${REPEAT:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# field FILE KEY: the value of KEY= on the file's "result" line.
field() {
  awk -v k="$2" '$1 == "result" { for (i = 2; i <= NF; i++) { split($i, kv, "=");
    if (kv[1] == k) print kv[2] } }' "$1"
}
# run NAME COMMAND...: runs it, shows its output indented, keeps it in $tmp/NAME.
run() {
  name=$1
  shift
  if ! "$@" >"$tmp/$name" 2>&1; then
    cat "$tmp/$name" >&2
    echo "bench: '$*' failed" >&2
    exit 1
  fi
  grep -v '^result ' "$tmp/$name" | sed 's/^/  /'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
# best NAME KEY [N]: of the runs NAME.1 .. NAME.N (N defaults to $REPEAT), keeps as NAME the
# one with the smallest KEY, and prints every run's KEY (so that the spread shows).
best() {
  b="" bv="" all="" n=${3:-$REPEAT}
  for r in $(seq 1 "$n"); do
    v=$(field "$tmp/$1.$r" "$2")
    all="$all $v"
    if [ -z "$bv" ] || awk -v a="$v" -v b="$bv" 'BEGIN { exit !(a < b) }'; then b=$r bv=$v; fi
  done
  cp "$tmp/$1.$b" "$tmp/$1"
  echo "  $1: $2 of $n runs:$all (kept $bv)"
}
# check_mean NAME: the run's mean sojourn must be within 5 % of theory.
check_mean() {
  m=$(field "$tmp/$1" "$2")
  awk -v m="$m" -v t=10 'BEGIN { exit !(m > 0.95 * t && m < 1.05 * t) }' || {
    echo "bench: $1's mean sojourn $m ms is not within 5 % of 10 ms" >&2
    exit 1
  }
}

if [ "${PEERS:-0}" = 1 ]; then
  SIMPY_CUSTOMERS=${SIMPY_CUSTOMERS:-1000000}
  echo "== M/M/1 (rho 0.9) side by side: bare C, retrysim, SimPy ($SIMPY_CUSTOMERS customers each)"
  duration=$(awk -v n="$SIMPY_CUSTOMERS" 'BEGIN { printf "%.0fs", n / 900 }')
  C_REPEAT=${C_REPEAT:-3}
  for r in $(seq 1 "$REPEAT"); do
    for c in $(seq 1 "$C_REPEAT"); do
      i=$(((r - 1) * C_REPEAT + c))
      run "bare.$i" "$B/bench/bench_mm1_bare" "$SIMPY_CUSTOMERS"
      run "sim.$i" "$B/bench/bench_sim" bench/mm1.json "$duration"
    done
    run "simpy.$r" /usr/bin/python3 bench/mm1_simpy.py "$SIMPY_CUSTOMERS"
  done
  best bare ns_per_customer $((REPEAT * C_REPEAT))
  best sim cpu_s $((REPEAT * C_REPEAT))
  best simpy ns_per_customer
  check_mean bare mean_ms
  check_mean simpy mean_ms
  bare=$(field "$tmp/bare" ns_per_customer)
  sim=$(awk -v c="$(field "$tmp/sim" cpu_s)" -v n="$(field "$tmp/sim" calls)" \
    'BEGIN { printf "%.3f", c * 1e9 / n }')
  simpy=$(field "$tmp/simpy" ns_per_customer)
  echo "ratio: ns per customer bare C $bare, retrysim $sim, SimPy $simpy"
  echo "ratio: SimPy / retrysim $(ratio "$simpy" "$sim") (target >= 50)," \
    "SimPy / bare C $(ratio "$simpy" "$bare")"
  exit 0
fi

echo "== M/M/1 (rho 0.9, $MM1_CUSTOMERS customers): bare C loop against retrysim"
duration=$(awk -v n="$MM1_CUSTOMERS" 'BEGIN { printf "%.0fs", n / 900 }')
for r in $(seq 1 "$REPEAT"); do
  run "bare.$r" "$B/bench/bench_mm1_bare" "$MM1_CUSTOMERS"
  run "sim.$r" "$B/bench/bench_sim" bench/mm1.json "$duration"
done
best bare ns_per_customer
best sim cpu_s
check_mean bare mean_ms
check_mean sim mean_latency_ms
bare=$(field "$tmp/bare" ns_per_customer)
sim=$(awk -v c="$(field "$tmp/sim" cpu_s)" -v n="$(field "$tmp/sim" calls)" \
  'BEGIN { printf "%.3f", c * 1e9 / n }')
echo "ratio: M/M/1 ns per customer retrysim $sim / bare C $bare = $(ratio "$sim" "$bare")" \
  "(target <= 3)"

echo "== fleet: bench/reference.json's policy, $FLEET_DURATION simulated, clients: $FLEET"
first=""
for r in $(seq 1 "$REPEAT"); do
  for n in $FLEET; do
    run "fleet$n.$r" "$B/bench/bench_sim" bench/reference.json "$FLEET_DURATION" 1 \
      "clients.web.count=$n"
    [ -n "$first" ] || first=$n
  done
done
for n in $FLEET; do best "fleet$n" ns_per_event; done
base_ns=$(field "$tmp/fleet$first" ns_per_event)
base_rss=$(field "$tmp/fleet$first" built_rss_kib)
echo "clients  ns/event  x ($first)  built RSS  peak RSS  bytes per idle client"
for n in $FLEET; do
  ns=$(field "$tmp/fleet$n" ns_per_event)
  built=$(field "$tmp/fleet$n" built_rss_kib)
  peak=$(field "$tmp/fleet$n" rss_kib)
  per="-"
  [ "$n" = "$first" ] ||
    per=$(awk -v a="$built" -v b="$base_rss" -v n="$n" -v m="$first" \
      'BEGIN { printf "%.0f", (a - b) * 1024 / (n - m) }')
  printf '%-8s %-9s %-9s %-10s %-9s %s\n' "$n" "$ns" "$(ratio "$ns" "$base_ns")" \
    "$(awk -v k="$built" 'BEGIN { printf "%.1fM", k / 1024 }')" \
    "$(awk -v k="$peak" 'BEGIN { printf "%.1fM", k / 1024 }')" "$per"
done
echo "ratio: fleet ns per event $n / $first clients = $(ratio "$ns" "$base_ns") (target <= 2)," \
  "bytes per idle client $per (target <= 300)"

# Edges whose shared state has windows that expire with time (a Finagle budget, adaptive
# throttling): the time series' gauges read again only the holders that changed.
WINDOWS=${WINDOWS:-"100 100000"}
echo "== fleet with a Finagle budget and adaptive throttling: bench/reference-windows.json," \
  "30s simulated, clients: $WINDOWS"
first=""
for r in $(seq 1 "$REPEAT"); do
  for n in $WINDOWS; do
    run "windows$n.$r" "$B/bench/bench_sim" bench/reference-windows.json 30s 1 \
      "clients.web.count=$n"
    [ -n "$first" ] || first=$n
  done
done
for n in $WINDOWS; do best "windows$n" ns_per_event; done
echo "clients  ns/event  x ($first)"
for n in $WINDOWS; do
  ns=$(field "$tmp/windows$n" ns_per_event)
  printf '%-8s %-9s %s\n' "$n" "$ns" "$(ratio "$ns" "$(field "$tmp/windows$first" ns_per_event)")"
done
echo "ratio: windows fleet ns per event $n / $first clients =" \
  "$(ratio "$ns" "$(field "$tmp/windows$first" ns_per_event)")"

# A look-aside cache's cost per request as it grows past the processor's caches: the same
# load, about half the lookups hitting, a table of a thousand and of a million entries.
CACHE=${CACHE:-"1000 1000000"}
echo "== look-aside cache: bench/cache.json, 120s simulated, capacities: $CACHE"
first=""
for r in $(seq 1 "$REPEAT"); do
  for c in $CACHE; do
    run "cache$c.$r" "$B/bench/bench_sim" bench/cache.json 120s 1 \
      "services.db.cache.capacity=$c" "services.db.cache.keys.n=$((2 * c))"
    [ -n "$first" ] || first=$c
  done
done
for c in $CACHE; do best "cache$c" ns_per_event; done
echo "entries  ns/event  ns/call  x ($first)  peak RSS"
for c in $CACHE; do
  ns=$(field "$tmp/cache$c" ns_per_event)
  per_call=$(awk -v t="$(field "$tmp/cache$c" cpu_s)" -v n="$(field "$tmp/cache$c" calls)" \
    'BEGIN { printf "%.1f", t * 1e9 / n }')
  printf '%-8s %-9s %-8s %-9s %s\n' "$c" "$ns" "$per_call" \
    "$(ratio "$ns" "$(field "$tmp/cache$first" ns_per_event)")" \
    "$(awk -v k="$(field "$tmp/cache$c" rss_kib)" 'BEGIN { printf "%.1fM", k / 1024 }')"
done
echo "ratio: cache ns per event $c / $first entries =" \
  "$(ratio "$ns" "$(field "$tmp/cache$first" ns_per_event)")," \
  "peak RSS at $c entries $(awk -v k="$(field "$tmp/cache$c" rss_kib)" 'BEGIN { printf "%.1f", k / 1024 }') MiB"

echo "== calls in flight: bench/inflight.json, arrival rates: $INFLIGHT"
first=""
for r in $INFLIGHT; do
  run "inflight$r" "$B/bench/bench_sim" bench/inflight.json 2s 1 "clients.src.arrival.rate=$r/s"
  [ -n "$first" ] || first=$r
done
echo "rate/s   peak in flight  peak RSS  bytes per call in flight (against $first/s)"
for r in $INFLIGHT; do
  fl=$(field "$tmp/inflight$r" peak_in_flight)
  rss=$(field "$tmp/inflight$r" rss_kib)
  per="-"
  [ "$r" = "$first" ] ||
    per=$(awk -v a="$rss" -v b="$(field "$tmp/inflight$first" rss_kib)" -v f="$fl" \
      -v g="$(field "$tmp/inflight$first" peak_in_flight)" \
      'BEGIN { printf "%.0f", (a - b) * 1024 / (f - g) }')
  printf '%-8s %-15s %-9s %s\n' "$r" "$fl" "$(awk -v k="$rss" 'BEGIN { printf "%.1fM", k / 1024 }')" "$per"
done
echo "ratio: bytes per call in flight $per (target <= 256)"

# The same with bench/reference.json's policy (a gRPC retry policy and retryThrottling), so
# that every call runs the retry engine: the first and the last rate.
lo=$first
for r in $INFLIGHT; do hi=$r; done
echo "== calls in flight with a retry policy: bench/inflight-retry.json, arrival rates: $lo $hi"
for r in $lo $hi; do
  run "retry$r" "$B/bench/bench_sim" bench/inflight-retry.json 2s 1 "clients.src.arrival.rate=$r/s"
done
fl_lo=$(field "$tmp/retry$lo" peak_in_flight)
fl_hi=$(field "$tmp/retry$hi" peak_in_flight)
rss_lo=$(field "$tmp/retry$lo" rss_kib)
rss_hi=$(field "$tmp/retry$hi" rss_kib)
per=$(awk -v a="$rss_hi" -v b="$rss_lo" -v f="$fl_hi" -v g="$fl_lo" \
  'BEGIN { printf "%.0f", (a - b) * 1024 / (f - g) }')
printf 'rate/s %s: %s in flight, peak RSS %s; rate/s %s: %s in flight, peak RSS %s\n' \
  "$lo" "$fl_lo" "$(awk -v k="$rss_lo" 'BEGIN { printf "%.1fM", k / 1024 }')" \
  "$hi" "$fl_hi" "$(awk -v k="$rss_hi" 'BEGIN { printf "%.1fM", k / 1024 }')"
echo "ratio: bytes per call in flight with a retry policy $per (target <= 256)"
