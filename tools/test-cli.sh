#!/bin/sh
# Checks the retrysim command line as docs/cli.md describes it: exit statuses (0 ok, 1 failed
# expectation, 2 usage or invalid scenario, 3 run-time), --help and --version, validate on good
# and bad files, the files of --out (names, headers, no temporary files, byte-identical reruns),
# --format json, --quiet, --check. Usage: BUILD=build sh tools/test-cli.sh
set -u
bin="${BUILD:-build}/retrysim"
[ -x "$bin" ] || { echo "test-cli: $bin not built"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
checks=0

fail() { fails=$((fails + 1)); echo "test-cli: FAIL: $*"; }

# run_rc WANT ARGS...: runs retrysim, keeps stdout/stderr in $tmp/out and $tmp/err, checks the
# exit status.
run_rc() {
  want=$1; shift
  checks=$((checks + 1))
  "$bin" "$@" >"$tmp/out" 2>"$tmp/err"
  got=$?
  if [ "$got" -ne "$want" ]; then
    fail "retrysim $* -> exit $got, want $want"
    sed 's/^/    stderr: /' "$tmp/err" | head -n 5
  fi
}

# has FILE TEXT: FILE contains the fixed string TEXT.
has() {
  checks=$((checks + 1))
  grep -qF -- "$2" "$1" || { fail "$1 lacks: $2"; sed 's/^/    /' "$1" | head -n 8; }
}
# empty FILE: FILE is empty.
empty() {
  checks=$((checks + 1))
  [ ! -s "$1" ] || { fail "$1 should be empty"; head -n 5 "$1"; }
}

# ------------------------------------------------------------------ scenarios
cat >"$tmp/good.json" <<'EOF'
{
  "name": "cli-smoke",
  "seed": 7,
  "duration": "2s",
  "services": {
    "api": {"replicas": 1, "workers": 4, "service_time": {"dist": "exponential", "mean": "5ms"}}
  },
  "clients": {
    "web": {"target": "api", "arrival": {"kind": "open", "rate": "100/s"},
            "methods": [{"name": "/pkg.Api/Get"}]}
  },
  "expect": {"calls.started": {"min": 1}, "calls.by_status.DATA_LOSS": 0}
}
EOF
sed -e 's/"calls.started": {"min": 1}/"calls.started": {"max": 0}/' "$tmp/good.json" >"$tmp/failing.json"
sed -e 's/"name": "cli-smoke",/"name": "cli-smoke", "bogus": 1,/' "$tmp/good.json" >"$tmp/bad.json"
printf '{"name": \n' >"$tmp/syntax.json"
cat >"$tmp/variants.json" <<'EOF'
{
  "name": "cli-variants",
  "seed": 3,
  "duration": "2s",
  "services": {
    "api": {"replicas": 1, "workers": 2, "service_time": {"dist": "exponential", "mean": "5ms"}}
  },
  "clients": {
    "web": {"target": "api", "arrival": {"kind": "open", "rate": "100/s"},
            "methods": [{"name": "/pkg.Api/Get"}]}
  },
  "variants": [
    {"name": "light"},
    {"name": "heavy", "set": {"clients.web.arrival.rate": "300/s"}}
  ]
}
EOF

# ------------------------------------------------------------------ help and version
version=$(sed -n 's/^#define RETRY_VERSION "\(.*\)"/\1/p' retry/retry.h 2>/dev/null)
run_rc 0 --version
has "$tmp/out" "retrysim ${version}"
for h in --help -h help; do
  run_rc 0 "$h"
  has "$tmp/out" "usage: retrysim run SCENARIO.json"
  has "$tmp/out" "exit status"
done
run_rc 0 run "$tmp/good.json" --help   # --help anywhere wins
has "$tmp/out" "usage:"

# ------------------------------------------------------------------ usage errors: exit 2
run_rc 2
has "$tmp/err" "usage:"
run_rc 2 frobnicate
has "$tmp/err" "unknown command 'frobnicate'"
run_rc 2 run
run_rc 2 run "$tmp/good.json" --bogus
has "$tmp/err" "unknown option '--bogus'"
run_rc 2 run "$tmp/good.json" --seed
run_rc 2 run "$tmp/good.json" --seed -1
run_rc 2 run "$tmp/good.json" --seed=12x
run_rc 2 run "$tmp/good.json" --format xml
run_rc 2 run "$tmp/good.json" --check=yes
run_rc 2 run "$tmp/good.json" --set noequals
run_rc 2 run "$tmp/good.json" extra-argument
run_rc 2 validate "$tmp/good.json" --seed 1
empty "$tmp/out"

# ------------------------------------------------------------------ validate
run_rc 0 validate "$tmp/good.json"
has "$tmp/out" "$tmp/good.json: ok (1 run)"
run_rc 0 validate "$tmp/variants.json"
has "$tmp/out" "ok (2 runs)"
run_rc 2 validate "$tmp/bad.json"
has "$tmp/err" "retrysim: $tmp/bad.json: \$.bogus: "
empty "$tmp/out"
run_rc 2 validate "$tmp/syntax.json"
has "$tmp/err" "retrysim: $tmp/syntax.json:2:"
run_rc 2 validate "$tmp/missing.json"
has "$tmp/err" "retrysim: $tmp/missing.json"
run_rc 2 validate "$tmp/good.json" --set services.api.workers=0
has "$tmp/err" "\$.services.api.workers"
run_rc 2 validate "$tmp/good.json" --duration 5     # a duration needs its unit
run_rc 0 validate "$tmp/good.json" --duration=1s --set services.api.workers=2

# ------------------------------------------------------------------ run
run_rc 0 run "$tmp/good.json"
has "$tmp/out" "scenario      cli-smoke (seed 7"
has "$tmp/out" "latency ms    p50 "
empty "$tmp/err"
run_rc 0 run "$tmp/good.json" --quiet
empty "$tmp/out"
run_rc 0 run "$tmp/good.json" --format=json --seed=99
has "$tmp/out" '"scenario": "cli-smoke",'
has "$tmp/out" '"seed": 99,'
has "$tmp/out" '"variant": null,'
run_rc 0 run "$tmp/variants.json" --format json
has "$tmp/out" '"variants": ['
has "$tmp/out" '"variant": "heavy",'
run_rc 0 run "$tmp/variants.json"
has "$tmp/out" "top stop"
has "$tmp/out" "heavy "

# ------------------------------------------------------------------ --set and --duration change the run
# An expectation set from the command line tells whether the override reached the world:
# 100/s for 2 s makes about 200 calls, 300/s about 600, and 6 s at 100/s about 600.
many='expect={"calls.started": {"min": 500, "max": 700}}'
run_rc 1 run "$tmp/good.json" --quiet --check --set "$many"
run_rc 0 run "$tmp/good.json" --quiet --check --set "$many" --set clients.web.arrival.rate=300/s
run_rc 0 run "$tmp/good.json" --quiet --check --set "$many" --duration 6s
run_rc 0 run "$tmp/good.json" --quiet --check \
  --set 'expect={"calls.by_status.UNAVAILABLE": {"min": 1}}' \
  --set 'services.api.faults=[{"kind": "refuse", "status": "UNAVAILABLE"}]'

# ------------------------------------------------------------------ --out files
run_rc 0 run "$tmp/good.json" --out "$tmp/o1/deeper" -q
for f in summary.json timeseries.csv latency.csv; do
  checks=$((checks + 1))
  [ -s "$tmp/o1/deeper/$f" ] || fail "--out did not write $f"
done
checks=$((checks + 1))
[ "$(head -n 1 "$tmp/o1/deeper/latency.csv")" = "variant,lo_ms,hi_ms,count,cumulative_fraction" ] ||
  fail "latency.csv header: $(head -n 1 "$tmp/o1/deeper/latency.csv")"
checks=$((checks + 1))
head -n 1 "$tmp/o1/deeper/timeseries.csv" | grep -q '^t_s,' || fail "timeseries.csv header"
checks=$((checks + 1))
[ -z "$(find "$tmp/o1" -name '*.tmp.*')" ] || fail "temporary files left in --out"
run_rc 0 run "$tmp/good.json" --out "$tmp/o2" -q
for f in summary.json timeseries.csv latency.csv; do
  checks=$((checks + 1))
  cmp -s "$tmp/o1/deeper/$f" "$tmp/o2/$f" || fail "$f differs between two equal runs"
done
run_rc 0 run "$tmp/good.json" --out "$tmp/o3" -q --seed 8
checks=$((checks + 1))
cmp -s "$tmp/o2/summary.json" "$tmp/o3/summary.json" && fail "--seed 8 gave the same summary"
run_rc 0 run "$tmp/variants.json" --out "$tmp/ov" -q
for f in timeseries-light.csv timeseries-heavy.csv; do
  checks=$((checks + 1))
  [ -s "$tmp/ov/$f" ] || fail "--out with variants did not write $f"
done
checks=$((checks + 1))
head -n 1 "$tmp/ov/timeseries.csv" | grep -q '^variant,t_s,' || fail "variants timeseries header"
# Nothing is written for an invalid scenario; an --out that is a file is a usage error.
run_rc 2 run "$tmp/bad.json" --out "$tmp/never"
checks=$((checks + 1))
[ ! -e "$tmp/never" ] || fail "an invalid scenario created --out"
run_rc 2 run "$tmp/good.json" --out "$tmp/good.json"

# ------------------------------------------------------------------ --check
run_rc 0 run "$tmp/good.json" --check -q
empty "$tmp/err"
run_rc 0 run "$tmp/good.json" --check
has "$tmp/err" "retrysim: check: 2 passed, 0 failed"
run_rc 1 run "$tmp/failing.json" --check
has "$tmp/err" "FAIL cli-smoke: calls.started: expected <= 0, got "
has "$tmp/err" "retrysim: check: 1 passed, 1 failed"
run_rc 1 run "$tmp/failing.json" --check --quiet
has "$tmp/err" "FAIL cli-smoke: calls.started"
empty "$tmp/out"
run_rc 1 run "$tmp/failing.json" --check --format json
has "$tmp/err" "PASS cli-smoke: calls.by_status.DATA_LOSS: expected 0, got 0"
has "$tmp/out" '"scenario": "cli-smoke"'
run_rc 0 run "$tmp/failing.json"   # expectations are checked only with --check

# ------------------------------------------------------------------ --plot
run_rc 2 run "$tmp/good.json" --plot          # pictures need --out
has "$tmp/err" "--plot needs --out DIR"
run_rc 2 validate "$tmp/good.json" --plot
if command -v gnuplot >/dev/null 2>&1; then
  run_rc 0 run "$tmp/variants.json" --quiet --plot --out "$tmp/plot"
  empty "$tmp/err"
  for f in report.md compare.svg variants.svg latency-cdf.svg; do
    checks=$((checks + 1)); [ -s "$tmp/plot/$f" ] || fail "--plot did not write $f"
  done
  checks=$((checks + 1))
  ls "$tmp/plot" | grep -q '^timeseries-.*\.svg$' || fail "--plot wrote no timeseries-VARIANT.svg"
  checks=$((checks + 1))
  ls "$tmp/plot" | grep -q 'tmp' && fail "--plot left temporary files: $(ls "$tmp/plot")"
  has "$tmp/plot/report.md" "# cli-variants"
  has "$tmp/plot/report.md" "](compare.svg)"
  has "$tmp/plot/report.md" "## In short"
  has "$tmp/plot/report.md" "--plot --out"
  # Same run, same pictures and report, byte for byte.
  run_rc 0 run "$tmp/variants.json" --quiet --plot --out "$tmp/plot2"
  for f in report.md compare.svg variants.svg latency-cdf.svg; do
    checks=$((checks + 1))
    # The report quotes the command line, which names its own directory.
    if [ "$f" = report.md ]; then
      sed 's/plot2/plot/' "$tmp/plot2/$f" | cmp -s - "$tmp/plot/$f" || fail "$f differs on a rerun"
    else
      cmp -s "$tmp/plot/$f" "$tmp/plot2/$f" || fail "$f differs on a rerun"
    fi
  done
  # Scripts that cannot be found: exit 3, the CSV files are there, no picture half-written.
  RETRYSIM_PLOTS="$tmp/nowhere" run_rc 3 run "$tmp/good.json" --quiet --plot --out "$tmp/noplot"
  has "$tmp/err" "cannot read the plot script"
  checks=$((checks + 1))
  [ -s "$tmp/noplot/summary.json" ] || fail "summary.json missing after a failed --plot"
  checks=$((checks + 1))
  ls "$tmp/noplot" | grep -q 'svg' && fail "a picture was left after a failed --plot"
else
  echo "test-cli: gnuplot not installed, --plot runs skipped (make deps installs it)"
fi

if [ "$fails" -ne 0 ]; then
  echo "test-cli: $fails of $checks checks failed"
  exit 1
fi
echo "test-cli: all $checks checks passed"
