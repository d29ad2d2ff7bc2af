#!/bin/sh
# Checks the retrysim command line as docs/cli.md describes it: exit statuses (0 ok, 1 failed
# expectation, 2 usage or invalid scenario, 3 run-time), --help and --version, validate on good
# and bad files, the files of --out (names, headers, no temporary files, byte-identical reruns),
# --format json, --quiet, --check. Usage: BUILD=build sh tools/test/test-cli.sh
set -u
. "$(dirname "$0")/lib.sh"
need_bin
t_tmp

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
has "$tmp/err" "retrysim: no command given; the commands are run, validate, explain, plan and merge (see retrysim --help)"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "a missing command is not one line"
for bad in frobnicate --bogus "$tmp/good.json"; do
  run_rc 2 "$bad"
  has "$tmp/err" "retrysim: unknown command '$bad'; the commands are run, validate, explain, plan and merge (see retrysim --help)"
  [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "an unknown command is not one line: $bad"
done
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
  ok
  [ -s "$tmp/o1/deeper/$f" ] || fail "--out did not write $f"
done
ok
[ "$(head -n 1 "$tmp/o1/deeper/latency.csv")" = "variant,lo_ms,hi_ms,count,cumulative_fraction" ] ||
  fail "latency.csv header: $(head -n 1 "$tmp/o1/deeper/latency.csv")"
ok
head -n 1 "$tmp/o1/deeper/timeseries.csv" | grep -q '^t_s,' || fail "timeseries.csv header"
no_temp_files "$tmp/o1" "--out"
run_rc 0 run "$tmp/good.json" --out "$tmp/o2" -q
for f in summary.json timeseries.csv latency.csv; do
  ok
  cmp -s "$tmp/o1/deeper/$f" "$tmp/o2/$f" || fail "$f differs between two equal runs"
done
run_rc 0 run "$tmp/good.json" --out "$tmp/o3" -q --seed 8
ok
cmp -s "$tmp/o2/summary.json" "$tmp/o3/summary.json" && fail "--seed 8 gave the same summary"
run_rc 0 run "$tmp/variants.json" --out "$tmp/ov" -q
for f in timeseries-light.csv timeseries-heavy.csv; do
  ok
  [ -s "$tmp/ov/$f" ] || fail "--out with variants did not write $f"
done
ok
head -n 1 "$tmp/ov/timeseries.csv" | grep -q '^variant,t_s,' || fail "variants timeseries header"
# Nothing is written for an invalid scenario; an --out that is a file is a usage error.
run_rc 2 run "$tmp/bad.json" --out "$tmp/never"
ok
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
    ok; [ -s "$tmp/plot/$f" ] || fail "--plot did not write $f"
  done
  ok
  ls "$tmp/plot" | grep -q '^timeseries-.*\.svg$' || fail "--plot wrote no timeseries-VARIANT.svg"
  ok
  ls "$tmp/plot" | grep -q 'tmp' && fail "--plot left temporary files: $(ls "$tmp/plot")"
  has "$tmp/plot/report.md" "# cli-variants"
  has "$tmp/plot/report.md" "](compare.svg)"
  has "$tmp/plot/report.md" "## In short"
  has "$tmp/plot/report.md" "--plot --out"
  # Same run, same pictures and report, byte for byte.
  run_rc 0 run "$tmp/variants.json" --quiet --plot --out "$tmp/plot2"
  for f in report.md compare.svg variants.svg latency-cdf.svg; do
    ok
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
  ok
  [ -s "$tmp/noplot/summary.json" ] || fail "summary.json missing after a failed --plot"
  ok
  ls "$tmp/noplot" | grep -q 'svg' && fail "a picture was left after a failed --plot"
else
  echo "test-cli: gnuplot not installed, --plot runs skipped (make deps installs it)"
fi

# ------------------------------------------------------------------ issue 10, defect 9: one line
# A usage error is one line, the hint to --help at its end (docs/cli.md, "Standard streams").
run_rc 2 run "$tmp/good.json" --bogus
ok
[ "$(wc -l <"$tmp/err")" -eq 1 ] || { fail "a usage error takes more than one line"; cat "$tmp/err"; }
has "$tmp/err" "retrysim: unknown option '--bogus' (see retrysim --help)"

# ------------------------------------------------------------------ issue 10, defect 1: --out --quiet
run_rc 2 run "$tmp/good.json" --out --quiet
has "$tmp/err" "--out needs a directory, got the option '--quiet'"
ok
[ ! -e ./--quiet ] && [ ! -e "$tmp/--quiet" ] || fail "--out --quiet made a directory '--quiet'"
run_rc 2 run "$tmp/good.json" -o -q
run_rc 0 run "$tmp/good.json" --quiet --out "$tmp/-dash"   # a name with '-' inside is fine

# ------------------------------------------------------------------ issue 10: provenance
mkdir -p "$tmp/prov"
cat >"$tmp/prov/policy.json" <<'JSON'
{"methodConfig": [{"name": [{}], "retryPolicy": {"maxAttempts": 3, "initialBackoff": "0.01s",
  "maxBackoff": "0.1s", "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}}],
 "retryThrottling": {"maxTokens": 10, "tokenRatio": 0.1}}
JSON
sed -e 's|"methods": \[{"name": "/pkg.Api/Get"}\]}|"methods": [{"name": "/pkg.Api/Get"}], "policy": "policy.json"}|' \
  "$tmp/good.json" >"$tmp/prov/s.json"
run_rc 0 run "$tmp/prov/s.json" --quiet --out "$tmp/prov/o1" --set services.api.workers=3 --duration 1s
s1="$tmp/prov/o1/summary.json"
has "$s1" '"role": "policy",'
has "$s1" '"path": "policy.json",'
has "$s1" "\"sha256\": \"$(sha256sum "$tmp/prov/policy.json" | cut -c1-64)\""
has "$s1" "\"sha256\": \"$(sha256sum "$tmp/prov/s.json" | cut -c1-64)\""
has "$s1" '"$.clients.web.policy"'
# The overrides in order, as given; the document as run (workers 3, the policy inlined).
ok
tr -d ' \n' <"$s1" | grep -q '"overrides":\[{"path":"services.api.workers","value":"3"},{"path":"duration","value":"1s"}\]' ||
  fail "summary.json does not record the overrides in order"
ok
tr -d ' \n' <"$s1" | grep -q '"document":{"name":"cli-smoke".*"workers":3,' ||
  fail "summary.json does not record the document after --set"
ok
tr -d ' \n' <"$s1" | grep -q '"policy":{"methodConfig"' ||
  fail "the recorded document does not hold the policy file's content"
# Editing the policy file changes what is recorded.
sed -i 's/"maxTokens": 10/"maxTokens": 20/' "$tmp/prov/policy.json"
run_rc 0 run "$tmp/prov/s.json" --quiet --out "$tmp/prov/o2" --set services.api.workers=3 --duration 1s
ok
cmp -s "$s1" "$tmp/prov/o2/summary.json" && fail "editing the policy file left summary.json unchanged"
has "$tmp/prov/o2/summary.json" "\"sha256\": \"$(sha256sum "$tmp/prov/policy.json" | cut -c1-64)\""

# ------------------------------------------------------------------ issue 10: --set into a policy file
# Before, a policy kept in a file could only be replaced: '"...policy" is a string, not an object'.
run_rc 0 validate "$tmp/prov/s.json" --set 'clients.web.policy.retryThrottling.maxTokens=5'
run_rc 2 validate "$tmp/prov/s.json" --set 'clients.web.policy.methodConfig[0].retryPolicy.maxAttempts=1'
has "$tmp/err" "\$.clients.web.policy.methodConfig[0].retryPolicy.maxAttempts: \"maxAttempts\" must be an integer > 1"
# A run tells whether the patch reached the world: maxAttempts 2 against a refusing service
# makes exactly two attempts per call.
run_rc 0 run "$tmp/prov/s.json" --quiet --check --set 'services.api.faults=[{"kind": "refuse", "status": "UNAVAILABLE"}]' \
  --set 'clients.web.policy.methodConfig[0].retryPolicy.maxAttempts=2' \
  --set 'clients.web.policy.retryThrottling=null' \
  --set 'expect={"amplification.edges[0].amplification": 2}'
# ... and a variant's "set" reaches into it too.
run_rc 0 run "$tmp/prov/s.json" --quiet --check --set 'services.api.faults=[{"kind": "refuse", "status": "UNAVAILABLE"}]' \
  --set 'clients.web.policy.retryThrottling=null' \
  --set 'variants=[{"name": "three", "expect": {"amplification.edges[0].amplification": 3}},
                   {"name": "two", "set": {"clients.web.policy.methodConfig[0].retryPolicy.maxAttempts": 2},
                    "expect": {"amplification.edges[0].amplification": 2}}]'

# ------------------------------------------------------------------ issue 10, defects 3 and 6: policy-file I/O
mkdir -p "$tmp/prov/adir"
run_rc 2 validate "$tmp/prov/s.json" --set 'clients.web.policy=adir'
has "$tmp/err" "retrysim: $tmp/prov/s.json: \$.clients.web.policy: cannot open the policy file \"adir\": it is a directory, not a regular file"
run_rc 2 validate "$tmp/prov/s.json" --set 'clients.web.policy=/dev/zero'
has "$tmp/err" "retrysim: $tmp/prov/s.json: \$.clients.web.policy: cannot open the policy file \"/dev/zero\": it is a character device, not a regular file"
if [ "$(id -u)" != 0 ]; then   # root reads a file whatever its mode
  cp "$tmp/prov/policy.json" "$tmp/prov/locked.json" && chmod 000 "$tmp/prov/locked.json"
  run_rc 2 validate "$tmp/prov/s.json" --set 'clients.web.policy=locked.json'
  has "$tmp/err" "retrysim: $tmp/prov/s.json: \$.clients.web.policy: cannot open the policy file \"locked.json\": Permission denied"
fi

# ------------------------------------------------------------------ issue 10, defect 5: a long policy path
# A name longer than retry_error.source (255 bytes) still names the file: the error's source
# keeps the end of the path, "...name-8/broken.json:2:0: ...".
long="$tmp/prov"
for i in 1 2 3 4 5 6 7 8; do long="$long/directory-with-a-rather-long-name-$i"; done
mkdir -p "$long"
printf '{"methodConfig": [\n' >"$long/broken.json"
run_rc 2 validate "$tmp/prov/s.json" --set "clients.web.policy=$long/broken.json"
has "$tmp/err" "retrysim: ...ith-a-rather-long-name-"
has "$tmp/err" "directory-with-a-rather-long-name-8/broken.json:2:0: invalid JSON"

# ------------------------------------------------------------------ issue 10: --variant
run_rc 0 run "$tmp/variants.json" --format json --variant heavy
has "$tmp/out" '"variant": "heavy",'
ok
grep -q '"variant": "light"' "$tmp/out" && fail "--variant heavy also ran light"
run_rc 0 validate "$tmp/variants.json" --variant light --variant=heavy
has "$tmp/out" "ok (2 runs)"
run_rc 2 run "$tmp/variants.json" --variant nope
has "$tmp/err" "--variant \"nope\": no such variant; variants: light, heavy"
run_rc 2 run "$tmp/good.json" --variant x
has "$tmp/err" "the scenario has no variants"

# ------------------------------------------------------------------ issue 10: --junit
run_rc 2 run "$tmp/good.json" --junit "$tmp/j.xml"     # needs --check
has "$tmp/err" "--junit needs --check"
run_rc 1 run "$tmp/failing.json" --check --quiet --junit "$tmp/j.xml"
has "$tmp/j.xml" '<testsuites name="cli-smoke" tests="2" failures="1" errors="0">'
has "$tmp/j.xml" '<testcase name="calls.by_status.DATA_LOSS" classname="cli-smoke.cli-smoke" time="0"/>'
has "$tmp/j.xml" '<failure message="expected &lt;= 0, got '
if command -v xmllint >/dev/null 2>&1; then
  ok
  xmllint --noout "$tmp/j.xml" || fail "--junit wrote XML that xmllint refuses"
fi
ok
ls "$tmp" | grep -q 'j.xml.tmp' && fail "--junit left a temporary file"
run_rc 3 run "$tmp/good.json" --check --quiet --junit "$tmp/nowhere/j.xml"
has "$tmp/err" "retrysim: $tmp/nowhere/j.xml: cannot create (writing $tmp/nowhere/j.xml.tmp."

# ------------------------------------------------------------------ issue 10, defect 7: a long cycle
# 100,000 services in a chain whose last one calls back into it: found and named in linear
# time (it took 11.5 s before); 20 s allows for a sanitizer build.
awk 'BEGIN { n = 100000; printf "{\"duration\": \"1s\", \"services\": {";
  for (i = 0; i < n; i++) printf "%s\"s%d\": {\"service_time\": \"1ms\", \"calls\": [{\"service\": \"s%d\", \"method\": \"/a.B/C\"}]}", (i ? ", " : ""), i, (i + 1 < n ? i + 1 : n - 3);
  printf "}, \"clients\": {\"c\": {\"target\": \"s0\", \"arrival\": {\"kind\": \"open\", \"rate\": \"1/s\"}, \"methods\": [\"/a.B/C\"]}}}\n" }' \
  >"$tmp/chain.json"
start=$(date +%s)
run_rc 2 validate "$tmp/chain.json"
took=$(( $(date +%s) - start ))
has "$tmp/err" "\$.services.s99999.calls[0].service: the calls form a cycle: s99997 -> s99998 -> s99999 -> s99997"
ok
[ "$took" -le 20 ] || fail "a cycle check through 100,000 services took $took s"
# A chain of 3,000 services without a cycle builds its world in linear time too: the
# edges' worst cases took cubic time (51 s for these 3,000 services).
awk 'BEGIN { n = 3000; printf "{\"duration\": \"100ms\", \"services\": {";
  for (i = 0; i < n; i++) { printf "%s\"s%d\": {\"service_time\": \"1ms\"", (i ? ", " : ""), i;
    if (i + 1 < n) printf ", \"calls\": [{\"service\": \"s%d\", \"method\": \"/a.B/C\"}]", i + 1; printf "}" }
  printf "}, \"clients\": {\"c\": {\"target\": \"s0\", \"arrival\": {\"kind\": \"open\", \"rate\": \"1/s\"}, \"methods\": [\"/a.B/C\"]}}}\n" }' \
  >"$tmp/chain-ok.json"
start=$(date +%s)
run_rc 0 run "$tmp/chain-ok.json" --quiet
took=$(( $(date +%s) - start ))
ok
[ "$took" -le 20 ] || fail "building a world of 3,000 chained services took $took s"

# ------------------------------------------------------------------ issue 10, defect 8: memory
awk 'BEGIN { printf "{\"duration\": \"1s\", \"services\": {\"api\": {\"service_time\": \"1ms\"}}, \"clients\": {";
  for (i = 0; i < 1000; i++) printf "%s\"c%d\": {\"count\": 1000000, \"target\": \"api\", \"arrival\": {\"kind\": \"open\", \"rate\": \"1/s\"}, \"methods\": [\"/a.B/C\"]}", (i ? ", " : ""), i;
  printf "}}\n" }' >"$tmp/huge.json"
run_rc 2 validate "$tmp/huge.json"
has "$tmp/err" "retrysim: $tmp/huge.json: run \"huge\" needs about "
has "$tmp/err" "over the limit of 8.0 GiB (--max-memory SIZE raises it)"
run_rc 2 run "$tmp/huge.json" --quiet
run_rc 0 validate "$tmp/huge.json" --max-memory none
run_rc 2 run "$tmp/good.json" --quiet --max-memory 1KiB
has "$tmp/err" "over the limit of 1.0 KiB"
run_rc 0 run "$tmp/good.json" --quiet --max-memory=1.5GiB
run_rc 2 run "$tmp/good.json" --max-memory lots
has "$tmp/err" "--max-memory needs a size"

# ------------------------------------------------------------------ issue 14: ok % and cancels
# A 2-of-3 fan-out whose third call is always cancelled: the edge's ok % counts the calls its
# caller did not cancel (100 %, not 66.67 %), and the cancelled column shows the rest.
cat >"$tmp/quorum.json" <<'JSON'
{"duration": "1s", "services": {
  "agg": {"service_time": "1ms", "workers": 10, "calls_mode": "fanout", "wait_for": 2,
          "calls": [{"service": "s", "method": "/s.S/M", "fanout": 3}]},
  "s": {"service_time": {"dist": "uniform", "min": "5ms", "max": "20ms"}, "workers": 100}},
 "clients": {"c": {"target": "agg", "methods": ["/a.A/M"], "arrival": {"kind": "open", "rate": "50/s"}}}}
JSON
run_rc 0 run "$tmp/quorum.json" --edges
ok
awk '$1 == "agg->s" { found = 1; if ($7 != "100.00" || $8 + 0 != $2 / 3) bad = 1 }
     END { exit !(found && !bad) }' "$tmp/out" ||
  { fail "agg->s: ok % of the calls not cancelled, and a third cancelled"; grep -F 'agg->s' "$tmp/out"; }

# The cancel travels down: mid, whose handler waits for db when agg's 1-of-2 fan-out goes on
# with the fast answer, is cancelled every time; only it has a cancelled count, in the text
# table and in summary.json (services that cannot hear a cancel carry no such key).
cat >"$tmp/quorum3.json" <<'JSON'
{"duration": "1s", "services": {
  "agg": {"service_time": "1ms", "workers": 10, "calls_mode": "fanout", "wait_for": 1,
          "calls": [{"service": "fast", "method": "/f.F/M"}, {"service": "mid", "method": "/m.M/M"}]},
  "fast": {"service_time": "2ms", "workers": 100},
  "mid": {"service_time": "1ms", "workers": 100, "calls": [{"service": "db", "method": "/d.D/M"}]},
  "db": {"service_time": "20ms", "workers": 100}},
 "clients": {"c": {"target": "agg", "methods": ["/a.A/M"], "arrival": {"kind": "open", "rate": "50/s"}}}}
JSON
run_rc 0 run "$tmp/quorum3.json" --out "$tmp/q3out"
ok
awk '$1 == "mid" && $NF == $2 && $2 > 0 { m = 1 } $1 == "db" && $NF == "-" { d = 1 }
     END { exit !(m && d) }' "$tmp/out" ||
  { fail "services table: mid cancelled on every arrival, db not"; grep -A5 '^service' "$tmp/out"; }
ok
[ "$(grep -c '"cancelled"' "$tmp/q3out/summary.json")" -ge 1 ] &&
  awk '/"db": *\{/ { db = 1 } db && /"cancelled"/ { bad = 1 } db && /^ *\}/ { db = 0 }
       END { exit bad }' "$tmp/q3out/summary.json" ||
  fail "summary.json: a cancelled count where a cancel can arrive (mid), none on db"

# ------------------------------------------------------------------ issue 22: one option parser
# Every command reads its options with getopt_long (docs/cli.md, "Options"): --opt=value and
# --opt value read the same, a long option may be cut to any prefix that names one option, an
# ambiguous prefix is refused naming the options it could be, "--" ends the options.
run_rc 0 run "$tmp/good.json" --format json --seed 5 --duration 1s
cp "$tmp/out" "$tmp/spaced.json"
run_rc 0 run "$tmp/good.json" --format=json --seed=5 --duration=1s
checks=$((checks + 1))
cmp -s "$tmp/out" "$tmp/spaced.json" || fail "--opt=value and --opt value ran differently"
has "$tmp/out" '"seed": 5,'
run_rc 0 run "$tmp/good.json" --form json --see=5 --dur 1s
checks=$((checks + 1))
cmp -s "$tmp/out" "$tmp/spaced.json" || fail "--form json --see=5 --dur 1s ran otherwise than in full"
run_rc 0 validate "$tmp/variants.json" --var light --varia=heavy
has "$tmp/out" "ok (2 runs)"
run_rc 2 run "$tmp/good.json" --sh 2/2 --out "$tmp/never"
has "$tmp/err" "retrysim: option '--sh' is ambiguous: it could be --shard or --shards (see retrysim --help)"
checks=$((checks + 1))
[ "$(wc -l <"$tmp/err")" -eq 1 ] && [ ! -e "$tmp/never" ] || fail "an ambiguous option: not one line, or it ran"
run_rc 2 run "$tmp/good.json" --s=5
has "$tmp/err" "option '--s' is ambiguous: it could be --seed, --set, --shard, --shards, --sweep or --strict"
run_rc 2 run "$tmp/good.json" --out
has "$tmp/err" "retrysim: option '--out' needs a value (see retrysim --help)"
run_rc 2 run "$tmp/good.json" --dur
has "$tmp/err" "retrysim: option '--duration' needs a value (see retrysim --help)"
run_rc 2 run "$tmp/good.json" -j
has "$tmp/err" "retrysim: option '-j' needs a value (see retrysim --help)"
run_rc 2 merge "$tmp/o1" --ou
has "$tmp/err" "retrysim: option '--out' needs a value (see retrysim --help)"
run_rc 2 explain "$tmp/good.json" --c
has "$tmp/err" "retrysim: explain: option '--call' needs a value (see retrysim --help)"
run_rc 2 explain "$tmp/good.json" --after 0s --bogus
has "$tmp/err" "retrysim: explain: unknown option '--bogus' (see retrysim --help)"
run_rc 2 run "$tmp/good.json" -x
has "$tmp/err" "retrysim: unknown option '-x' (see retrysim --help)"
# Short flags cluster, and a short option's value may be attached: -qj2 is -q -j 2.
run_rc 0 run "$tmp/good.json" -qs5 --duration 1s
empty "$tmp/out"
# After "--" an argument is the scenario's name even when it starts with '-'.
run_rc 2 validate -- --strict
has "$tmp/err" "retrysim: --strict: "
# A prefix of --help helps, of --version tells the version.
run_rc 0 run "$tmp/good.json" --he
has "$tmp/out" "usage: retrysim run SCENARIO.json"
run_rc 0 --vers
has "$tmp/out" "retrysim ${version}"

# plan's shard commands leave out its --shards and --out however they were written.
run_rc 0 plan "$tmp/good.json" --reps 2 --shards=2 -qo "$tmp/pl"
has "$tmp/out" "retrysim run $tmp/good.json --reps 2 -q --shard 2/2 --out $tmp/pl/shard-2"
run_rc 0 plan "$tmp/good.json" --reps 2 --shards 2 --ou="$tmp/pl" -o"$tmp/pl2"
has "$tmp/out" "retrysim run $tmp/good.json --reps 2 --shard 1/2 --out $tmp/pl2/shard-1"
has "$tmp/out" "retrysim merge $tmp/pl2/shard-1 $tmp/pl2/shard-2 --out $tmp/pl2"

# The progress line: with stderr not a terminal (a file here), a whole line every
# $RETRYSIM_PROGRESS_S seconds (runs done of the total, elapsed, what is left); none with
# --quiet; and the files are the same either way. The runs take over a second in all, far
# longer than the interval, so that lines come however fast or loaded the machine is.
export RETRYSIM_PROGRESS_S=0.05
run_rc 0 run "$tmp/good.json" --reps 100 --duration 600s -j 2 -o "$tmp/prog1"
has_re "$tmp/err" '^retrysim: [0-9]+ of 100 runs, [0-9.]+ s elapsed, about [0-9.]+ s left$'
lacks "$tmp/err" "$(printf '\r')"
run_rc 0 run "$tmp/good.json" --reps 100 --duration 600s -j 2 -q -o "$tmp/prog2"
lacks "$tmp/err" "runs, "
unset RETRYSIM_PROGRESS_S
ok
cmp -s "$tmp/prog1/summary.json" "$tmp/prog2/summary.json" || fail "the progress line changed summary.json"
# ------------------------------------------------------------------ issue 23 item 7: the traps
cat >"$tmp/fleet.json" <<'EOF'
{"duration": "1s",
 "services": {"api": {"workers": 4, "service_time": "5ms",
                      "calls": [{"service": "fraud", "method": "/f.F/C"}]},
              "fraud": {"workers": 2, "service_time": "5ms"}},
 "clients": {"web": {"target": "api", "arrival": {"kind": "open", "rate": "10/s"},
                     "methods": ["/a.A/M"]}},
 "variants": [{"name": "a", "set": {}}, {"name": "b", "set": {"services.api.workers": 4}},
              {"name": "c", "set": {"services.api.workers": 5}}]}
EOF
# A --set under a misspelt existing key is refused, naming the key meant; a new object set
# whole is not.
run_rc 2 validate "$tmp/fleet.json" --set services.fruad.workers=8
lines "$tmp/err" 1
has "$tmp/err" 'no "fruad" to set into; did you mean "services.fraud"?'
run_rc 0 validate "$tmp/fleet.json" --set 'services.fruad={"workers": 2, "service_time": "5ms"}'
# Identical variants are named (b sets what a already has); c differs.
has "$tmp/err" 'variants "a" and "b" are identical'
lacks "$tmp/err" '"c" are identical'
# The capacity estimate: the table on validate's stdout; a warning above 0.9 on stderr, naming
# the busiest service (fraud: 1000/s against 2 x 1 / 5 ms = 400/s), for run as for validate.
has "$tmp/out" 'fraud            from        0s          10/s of        400/s  utilization 0.03'
lacks "$tmp/err" 'of its capacity'
run_rc 0 validate "$tmp/fleet.json" --set clients.web.arrival.rate=1000/s --variant c
has "$tmp/err" 'service "fraud" is offered 1000 requests/s from 0s on, 2.50 of its capacity of 400/s'
has "$tmp/out" 'utilization 2.50  over 0.9'
lacks "$tmp/err" 'autoscaler'
# With an autoscaler the warning stands (it must scale first) and says what its maximum gives.
run_rc 0 validate "$tmp/fleet.json" --set clients.web.arrival.rate=1000/s --variant c \
  --set 'services.fraud.autoscaler={"max": 8}'
has "$tmp/err" "2.50 of its capacity of 400/s (replicas x workers / mean service time), before any retry or fault; its autoscaler's 8 replicas would give 3200/s (0.31), once it has scaled"
# A branch taken by a quarter of the requests brings a quarter of the load.
run_rc 0 validate "$tmp/fleet.json" --set clients.web.arrival.rate=1000/s --variant c \
  --set 'services.api.calls[0].probability=0.25'
has "$tmp/out" 'fraud            from        0s         250/s of        400/s  utilization 0.62'
lacks "$tmp/err" 'service "fraud" is offered'
# A fallback is made only after a failure, which the estimate does not count: a handler's
# fallback to fraud adds nothing to fraud's 250/s.
run_rc 0 validate "$tmp/fleet.json" --set clients.web.arrival.rate=1000/s --variant c \
  --set 'services.api.calls[0].probability=0.25' \
  --set 'services.api.calls[0].on_failure={"fallback": {"service": "fraud", "method": "/f.F/Lite"}}'
has "$tmp/out" 'fraud            from        0s         250/s of        400/s  utilization 0.62'
lacks "$tmp/err" 'service "fraud" is offered'

# A fault that cannot change anything is refused, naming the key.
run_rc 2 validate "$tmp/fleet.json" \
  --set 'services.fraud.faults=[{"kind": "slowdown", "factor": 1, "start": "0s"}]'
has "$tmp/err" '$.services.fraud.faults[0].factor: the fault would change nothing'
run_rc 2 validate "$tmp/fleet.json" \
  --set 'services.fraud.faults=[{"kind": "capacity", "workers": 2, "start": "0s"}]'
has "$tmp/err" '$.services.fraud.faults[0].workers: the fault would change nothing'
run_rc 0 validate "$tmp/fleet.json" \
  --set 'services.fraud.faults=[{"kind": "capacity", "workers": 1, "start": "0s"}]'
lacks "$tmp/err" 'recovery cannot be judged'
# A trigger that ends too near the end of the run for one span of the recovery hold: warned
# about by the loader, and the run's verdict says "unjudged" rather than "never".
run_rc 0 run "$tmp/fleet.json" --variant c --out "$tmp/unjudged" --set duration=10s \
  --set 'services.fraud.faults=[{"kind": "capacity", "workers": 1, "start": "1s", "end": "9s"}]'
has "$tmp/err" 'the trigger ends at 9s and the run at 10s, too soon for one span of the recovery hold (10s'
has "$tmp/out" ' unjudged'
has "$tmp/unjudged/summary.json" '"unjudged": true'

# A herd's outage shows in the headline (calls made while their client was down are never
# started), and a population's init edge to its own target is named as its columns are (#2).
cat >"$tmp/herd.json" <<'EOF'
{"duration": "20s", "seed": 3,
 "services": {"a": {"workers": 8, "service_time": "1ms",
   "faults": [{"kind": "fail", "status": "UNAVAILABLE", "start": "5s", "end": "8s"}]}},
 "clients": {"shop": {"count": 4, "target": "a", "arrival": {"kind": "open", "rate": "100/s"},
   "methods": ["/a.A/Get"]}},
 "events": [{"at": "5s", "action": "restart", "population": "shop",
   "init": {"service": "a", "method": "/a.A/Login"}}]}
EOF
run_rc 0 run "$tmp/herd.json" --out "$tmp/herd"
has_re "$tmp/out" '^              and [0-9]+ more found their client down \(restarting or paused\): never sent'
has_re "$tmp/out" '^  shop->a#2 +8 +8 '
head -n 1 "$tmp/herd/timeseries.csv" | grep -q 'shop->a#2_' || fail "no shop->a#2 columns"

t_done
