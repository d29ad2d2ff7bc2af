#!/bin/sh
# Checks sweeps and searches of `retrysim run` as docs/scenario-format.md ("Sweeps and
# searches") and docs/cli.md describe them, one rule per function: --sweep runs the grid with
# the first axis slowest, the scenario's "sweep" block too, --sweep replaces it, bad axes and
# points are refused with exit 2 and one line and no output files, -j 1 and -j 2 give the
# same bytes; a scenario with a "search" writes its bracket, search.csv and summary.json,
# the same bytes twice, and refuses what does not apply to it.
# Usage: BUILD=build sh tools/test/test-sweep.sh
set -u
. "$(dirname "$0")/lib.sh"
need_bin
need_cmd python3 "needs python3 to read the JSON"
t_tmp

one_line() {
  ok
  [ "$(wc -l <"$1")" -eq 1 ] || { fail "$2: $1 is not one line"; sed 's/^/    /' "$1"; }
}

# A service of 10 workers of 100 ms (100 calls/s) that loses all but one for 1 s.
cat >"$tmp/tip.json" <<'EOF'
{"name": "tip", "duration": "60s", "drain": "0s",
 "services": {"api": {"workers": 10, "queue": {"capacity": 100000}, "service_time": "100ms",
   "faults": [{"kind": "capacity", "workers": 1, "start": "20s", "end": "21s"}]}},
 "clients": {"web": {"target": "api", "arrival": {"kind": "open", "rate": "50/s"},
   "methods": ["/a.A/M"]}},
 "variants": [{"name": "a"}, {"name": "b", "set": {"services.api.service_time": "90ms"}}]}
EOF
python3 - "$tmp" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1] + "/tip.json"))
d["sweep"] = [{"path": "clients.web.arrival.rate", "from": "40/s", "to": "80/s", "steps": 3}]
json.dump(d, open(sys.argv[1] + "/block.json", "w"))
d.pop("sweep")
d.pop("variants")
d["search"] = {"path": "clients.web.arrival.rate", "from": "45/s", "to": "145/s", "p": 0.5,
               "reps": 10, "max_reps": 30, "probes": 6}
json.dump(d, open(sys.argv[1] + "/search.json", "w"))
# Its expectations: the boundary of 100 calls/s lies in what the search reports; one of a run.
d["expect"] = {"search.outcome": "bracketed", "search.boundary.pass": [85, 100],
               "search.boundary.fail": [100, 115], "recovery.recovered": True}
json.dump(d, open(sys.argv[1] + "/search-expect.json", "w"))
d["expect"]["search.boundary.fail"] = [45, 60]
json.dump(d, open(sys.argv[1] + "/search-wrong.json", "w"))
own = json.load(open(sys.argv[1] + "/tip.json"))
own["variants"][1]["set"]["seed"] = 7
json.dump(own, open(sys.argv[1] + "/own-seed.json", "w"))
d.pop("search")
d["clients"]["web"]["arrival"]["rate"] = "95/s"  # 1 of 10 replications never recovers
d["expect"] = {"recovery.recovery_s": {"max": 100}}
json.dump(d, open(sys.argv[1] + "/censored.json", "w"))
d["clients"]["web"]["arrival"]["rate"] = "50/s"
d["recovery"] = {"threshold": 0.9}
d["expect"] = {"goodput_per_s": {"max": 1}}
json.dump(d, open(sys.argv[1] + "/decimal.json", "w"))
EOF

sweep_option_runs_the_grid_first_axis_slowest() {
  run_rc 0 run "$tmp/tip.json" --sweep 'clients.web.arrival.rate=40/s,60/s' \
    --sweep 'services.api.faults[0].end=21s:23s:3' --reps 2 -j 2 --out "$tmp/grid" --quiet
  jv "$tmp/grid/summary.json" 'd["study"]["n_points"]' 6 grid
  jv "$tmp/grid/summary.json" 'd["study"]["axes"]' \
    '[{"path": "clients.web.arrival.rate", "values": ["40/s", "60/s"]}, {"path": "services.api.faults[0].end", "values": ["21s", "22s", "23s"]}]' grid
  jv "$tmp/grid/summary.json" '[p["values"]["services.api.faults[0].end"] for p in d["points"]]' \
    '["21s", "22s", "23s", "21s", "22s", "23s"]' grid
  jv "$tmp/grid/summary.json" 'len(d["runs"])' 24 grid
  # Each point ran with its values: the trigger's end is the swept one.
  jv "$tmp/grid/summary.json" '[r["result"]["recovery"]["trigger_end_s"] for r in d["runs"] if r["variant"] == "a" and r["replication"] == 0]' \
    '[21.0, 22.0, 23.0, 21.0, 22.0, 23.0]' grid
}

sweep_block_and_its_replacement() {
  run_rc 0 run "$tmp/block.json" --out "$tmp/block" --quiet
  jv "$tmp/block/summary.json" '[p["values"]["clients.web.arrival.rate"] for p in d["points"]]' \
    '["40/s", "60/s", "80/s"]' block
  run_rc 0 run "$tmp/block.json" --sweep 'services.api.workers=8,9' --out "$tmp/repl" --quiet
  jv "$tmp/repl/summary.json" '[a["path"] for a in d["study"]["axes"]]' '["services.api.workers"]' replaced
}

sweep_refuses_bad_axes_and_points() {
  run_rc 2 run "$tmp/tip.json" --sweep 'services.api.workers' --out "$tmp/bad1"
  one_line "$tmp/err" no_equals
  has "$tmp/err" 'retrysim: --sweep "services.api.workers": expected PATH=v1,v2,... or PATH=FROM:TO:N[:log]' no_equals
  run_rc 2 run "$tmp/tip.json" --sweep 'services.api.workers=1s:5:3' --out "$tmp/bad1"
  has "$tmp/err" 'must be both numbers or both have the same unit' units
  run_rc 2 run "$tmp/tip.json" --sweep 'services.api.queue.discipline=fifo,lifo' --out "$tmp/bad1"
  one_line "$tmp/err" reaches_nothing
  has "$tmp/err" '"services.api.queue.discipline": reaches no value in variant "a" ("services.api.queue.discipline" is not there)' reaches_nothing
  run_rc 2 run "$tmp/tip.json" --sweep 'services.api.workers=4,0' --out "$tmp/bad1"
  one_line "$tmp/err" bad_point
  has "$tmp/err" '$.services.api.workers' bad_point
  has "$tmp/err" "(at the sweep's point 1: services.api.workers=0)" bad_point
  ok
  [ ! -e "$tmp/bad1" ] || fail "a refused sweep wrote $tmp/bad1"
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["sweep"]=[{"path": "services.api.queue.capacity", "values": [5, -1]}]; json.dump(d, open(sys.argv[2], "w"))' \
    "$tmp/tip.json" "$tmp/badblock.json"
  run_rc 2 run "$tmp/badblock.json"
  one_line "$tmp/err" block_point
  has "$tmp/err" 'badblock.json: $.services.api.queue.capacity' block_point
}

validate_and_plan_check_the_points() {
  run_rc 0 validate "$tmp/block.json"
  has "$tmp/out" 'block.json: ok (2 runs at each of 3 sweep points)' validate
  run_rc 2 validate "$tmp/badblock.json"
  one_line "$tmp/err" validate_bad
  has "$tmp/err" "(at the sweep's point 1: services.api.queue.capacity=-1)" validate_bad
  run_rc 2 plan "$tmp/tip.json" --sweep 'services.api.workers=4,0' --shards 2 --out "$tmp/pl"
  has "$tmp/err" "(at the sweep's point 1: services.api.workers=0)" plan_bad
  run_rc 2 plan "$tmp/search.json" --shards 2 --out "$tmp/pl"
  has "$tmp/err" 'a scenario with a "search" cannot be split into shards' plan_search
  # A sweep's shards, merged, are the local run's files.
  run_rc 0 plan "$tmp/block.json" --reps 2 --shards 3 --out "$tmp/pl"
  cp "$tmp/out" "$tmp/plan.txt"
  while read -r line; do
    set -- $line
    shift
    run_rc 0 "$@" --quiet
  done <"$tmp/plan.txt"
  run_rc 0 run "$tmp/block.json" --reps 2 --out "$tmp/local" --quiet
  for f in summary.json runs.csv points.csv; do
    ok
    cmp -s "$tmp/local/$f" "$tmp/pl/$f" || fail "a sweep's merged shards differ from the local run in $f"
  done
}

sweep_same_bytes_for_any_j() {
  run_rc 0 run "$tmp/block.json" --reps 3 -j 1 --out "$tmp/j1" --quiet
  run_rc 0 run "$tmp/block.json" --reps 3 -j 2 --out "$tmp/j2" --quiet
  for f in summary.json runs.csv points.csv; do
    ok
    cmp -s "$tmp/j1/$f" "$tmp/j2/$f" || fail "-j 1 and -j 2 differ in $f"
  done
}

search_writes_its_bracket() {
  run_rc 0 run "$tmp/search.json" -j 2 --out "$tmp/s1"
  has "$tmp/out" 'search of clients.web.arrival.rate for P(recovery.recovered) >= 0.5' table
  has "$tmp/out" "the bisection's bracket: highest value passing" table
  jv "$tmp/s1/summary.json" 'd["search"][0]["outcome"]' bracketed search
  jv "$tmp/s1/summary.json" 'd["study"]["kind"]' search search
  jv "$tmp/s1/summary.json" 'len(d["runs"]) == sum(p["n"] for p in d["search"][0]["probes"])' true search
  has "$tmp/s1/search.csv" 'variant,value,x,n,k,p,lo,hi,verdict,undecided' csv
  has "$tmp/s1/search.csv" 'tip,45/s,45,10,10,1,' csv
  run_rc 0 run "$tmp/search.json" -j 1 --out "$tmp/s2" --quiet
  for f in summary.json search.csv; do
    ok
    cmp -s "$tmp/s1/$f" "$tmp/s2/$f" || fail "a search's $f differs between -j 2 and -j 1"
  done
  run_rc 0 run "$tmp/search.json" --format json
  python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/out" || fail "--format json does not parse"
}

# --check of a search: each variant's "search..." expectations against its search result, the
# boundary's ends as numbers; the run's expectations are left to a plain run, and back.
search_check_holds_its_expectations() {
  run_rc 0 run "$tmp/search-expect.json" --check --junit "$tmp/search.xml" --out "$tmp/sc"
  has "$tmp/err" "retrysim: check: 3 passed, 0 failed (against each variant's search; 1 expectation of a run not checked)" count
  has "$tmp/search.xml" '<testcase name="search.boundary.pass" classname="tip.tip" time="0"/>' junit
  run_rc 1 run "$tmp/search-wrong.json" --check --out "$tmp/sw"
  has "$tmp/err" 'FAIL tip: search.boundary.fail: expected' wrong
  has "$tmp/err" 'retrysim: check: 2 passed, 1 failed' wrong
  ok
  [ -f "$tmp/sw/summary.json" ] || fail "a failed check of a search did not write its files"
  run_rc 0 run "$tmp/search-expect.json" --set search=null --check
  has "$tmp/err" 'retrysim: check: 1 passed, 0 failed (3 expectations of a search not checked)' plain
  # The wrong boundary is not a plain run's to check.
  run_rc 0 run "$tmp/search-wrong.json" --set search=null --check
}

# A number of a sweep is printed as written (0.3, not the 17 digits of its double) in the
# table, the FAIL lines and the error of a point the world refuses; a log step as it ran.
sweep_values_print_as_written() {
  run_rc 1 run "$tmp/decimal.json" --sweep 'recovery.threshold=0.3,0.7' --check
  has "$tmp/out" 'recovery.threshold=0.3' table
  has "$tmp/err" 'FAIL tip (recovery.threshold=0.7): goodput_per_s: expected <= 1' fail
  ok
  if grep -q '0000000\|9999999' "$tmp/out" "$tmp/err"; then
    fail "a sweep value printed with 17 digits"; grep '0000000\|9999999' "$tmp/out" "$tmp/err"
  fi
  run_rc 1 run "$tmp/decimal.json" --sweep 'recovery.threshold=0.01:1:5:log' --check
  has "$tmp/err" 'FAIL tip (recovery.threshold=0.0316227766017): ' log
  run_rc 2 run "$tmp/decimal.json" --sweep 'recovery.threshold=0.3,1.7'
  has "$tmp/err" '(at the sweep'"'"'s point 1: recovery.threshold=1.7)' error
}

# A search's two ends are checked as points before anything runs: by validate, and by run
# before its first probe (a bad "to" is not found after "from" ran).
search_ends_are_checked_first() {
  run_rc 0 validate "$tmp/search.json"
  has "$tmp/out" 'search.json: ok (a search: 1 variant x ' ok
  run_rc 2 validate "$tmp/search.json" --set 'search.path=services.api.workers' \
    --set search.from=2 --set search.to=2000000
  one_line "$tmp/err" validate
  has "$tmp/err" 'got 2000000 (at the search'"'"'s "to": services.api.workers=2000000)' validate
  run_rc 2 run "$tmp/search.json" --set 'search.path=services.api.workers' \
    --set search.from=0 --set search.to=20 --out "$tmp/se"
  has "$tmp/err" 'got 0 (at the search'"'"'s "from": services.api.workers=0)' run
  ok
  [ ! -e "$tmp/se" ] || fail "a search with a bad end wrote $tmp/se"
}

# A recovery time that never came is censored in a study's aggregate: null (so --check of a
# bound on it fails), its interval over the replications with a value, saying how many not.
study_censored_values_are_not_averaged() {
  run_rc 1 run "$tmp/censored.json" --reps 10 --check --out "$tmp/cens"
  has "$tmp/err" 'FAIL tip: recovery.recovery_s: expected <= 100, got null' check
  jv "$tmp/cens/summary.json" 'd["points"][0]["variants"][0]["recovery"]["recovery_s"]' null mean
  jv "$tmp/cens/summary.json" '[d["points"][0]["variants"][0]["intervals"]["recovery.recovery_s"][k] for k in ("n", "n_censored")]' '[9, 1]' interval
  jv "$tmp/cens/summary.json" 'd["points"][0]["variants"][0]["p_storm"]["k"]' 1 storm
}

# A search whose max_reps cannot decide a pass says so before it runs; one that can, nothing.
search_warns_when_no_pass_can_be_decided() {
  run_rc 0 run "$tmp/search.json" --quiet
  ok
  [ ! -s "$tmp/err" ] || { fail "a search that can decide warned"; cat "$tmp/err"; }
  run_rc 0 run "$tmp/search.json" --set search.p=0.99 --set search.probes=2 --quiet
  has "$tmp/err" '$.search.max_reps: 30 replications in batches of 10 cannot show P >= 0.99 with error 0.025 (one look would need 368 successes of 368' warn
}

# A sharded study is checked by its merge, from the plan's document, as a local run checks it.
merge_checks_like_a_local_run() {
  for k in 1 2; do
    run_rc 0 run "$tmp/censored.json" --reps 6 --shard "$k/2" --out "$tmp/ms$k" --quiet
  done
  run_rc 1 merge "$tmp/ms1" "$tmp/ms2" --out "$tmp/mall" --check --junit "$tmp/m.xml" --quiet
  has "$tmp/err" 'FAIL tip: recovery.recovery_s: expected <= 100, got null' merge
  has "$tmp/m.xml" '<testcase name="recovery.recovery_s" classname="tip.tip" time="0">' junit
  run_rc 1 run "$tmp/censored.json" --reps 6 --out "$tmp/mlocal" --check --quiet
  ok
  diff -r "$tmp/mlocal" "$tmp/mall" >/dev/null || fail "a checked merge differs from the local run"
  run_rc 2 merge "$tmp/ms1" "$tmp/ms2" --out "$tmp/mall2" --junit "$tmp/m2.xml"
  has "$tmp/err" '--junit needs --check' junit
  run_rc 2 run "$tmp/censored.json" --reps 6 --shard 1/2 --out "$tmp/ms1" --check
  has "$tmp/err" 'give --plot and --check to the merge' shard
}

# Review 11 items 8, 9, 12: validate counts replications; a range with a non-integral step
# says why its whole-looking ends are not integers; --sweep refuses the study's own keys.
sweep_messages_say_what_is_wrong() {
  run_rc 0 validate "$tmp/tip.json" --set replications=5
  has "$tmp/out" 'tip.json: ok (10 runs)' count
  run_rc 2 run "$tmp/tip.json" --sweep 'services.api.workers=2:5:3'
  one_line "$tmp/err" step
  has "$tmp/err" 'got 2.0 (at the sweep'"'"'s point 0: services.api.workers=2.0 (a real: the axis steps by 1.5, so its values are not integers))' step
  # A variant's own set of an axis overrides every point's value for it (review 11 item 7).
  run_rc 0 run "$tmp/tip.json" --sweep 'services.api.service_time=80ms,90ms' --quiet
  has "$tmp/err" 'warning: '"$tmp"'/tip.json: the sweep'"'"'s "services.api.service_time": variant "b" sets "services.api.service_time", which overrides every point'"'"'s value in its runs' variant_set
  run_rc 0 run "$tmp/tip.json" --sweep 'services.api.faults[0].end=21s,22s' --quiet
  ok
  [ ! -s "$tmp/err" ] || { fail "a sweep no variant sets warned"; cat "$tmp/err"; }
  # Review 11 item 11: what a study would silently not do is refused.
  run_rc 2 run "$tmp/tip.json" --reps 2 --edges
  has "$tmp/err" '--edges adds the edge table of a plain run' edges
  run_rc 2 run "$tmp/tip.json" --reps 2 --shard 1/2 --out "$tmp/shj" --format json
  has "$tmp/err" 'a shard does not have' shard_json
  run_rc 2 run "$tmp/tip.json" --sweep 'variants=1,2'
  has "$tmp/err" '--sweep "variants=1,2": "variants" cannot be varied' reserved
}

# A variant on its own seed is not paired with the baseline: said (review 11 item 14).
paired_warns_about_a_variant_seed() {
  run_rc 0 run "$tmp/own-seed.json" --reps 2 --baseline a --quiet
  has "$tmp/err" 'warning: '"$tmp"'/own-seed.json: variant "b" runs on its own seed (7, the baseline'"'"'s is 1)' warn
  run_rc 0 run "$tmp/own-seed.json" --reps 2 --baseline a --seed 3 --quiet
  ok
  [ ! -s "$tmp/err" ] || { fail "--seed still warned"; cat "$tmp/err"; }
}

search_refuses_what_does_not_apply() {
  run_rc 2 run "$tmp/search.json" --shard 1/2 --out "$tmp/sh"
  one_line "$tmp/err" shard
  has "$tmp/err" 'does not take --shard (a search is adaptive' shard
  run_rc 2 run "$tmp/search.json" --reps 5
  has "$tmp/err" 'does not take --reps' reps
  run_rc 2 run "$tmp/search.json" --sweep 'services.api.workers=5,6'
  has "$tmp/err" '--sweep cannot be combined with the scenario'"'"'s "search"' sweep
  run_rc 2 run "$tmp/search.json" --set 'search.path=services.api.queue.discipline'
  one_line "$tmp/err" path
  has "$tmp/err" '$.search.path: "services.api.queue.discipline" reaches no value' path
  # A value the service refuses stops the search at its first probe, at its JSON path.
  run_rc 2 run "$tmp/search.json" --set 'search.path=services.api.queue.capacity' --out "$tmp/s3"
  one_line "$tmp/err" value
  has "$tmp/err" '$.services.api.queue.capacity: "capacity" must be an integer' value
  ok
  [ ! -e "$tmp/s3" ] || fail "a failed search wrote $tmp/s3"
}

linked_axis_moves_every_path() {
  test_name=linked_axis_moves_every_path
  # One axis, two services: {"paths": [...], "label": ...} sets both at each point (their
  # utilization falls with the workers both had), and points.csv names the axis by its label.
  cat >"$tmp/linked.json" <<'EOF'
{
  "name": "linked", "seed": 3, "duration": "5s",
  "services": {
    "a": {"replicas": 1, "workers": 2, "service_time": {"dist": "exponential", "mean": "5ms"}},
    "b": {"replicas": 1, "workers": 2, "service_time": {"dist": "exponential", "mean": "5ms"}}
  },
  "clients": {
    "web": {"target": "a", "arrival": {"kind": "open", "rate": "100/s"}, "methods": [{"name": "/p.A/G"}]},
    "app": {"target": "b", "arrival": {"kind": "open", "rate": "100/s"}, "methods": [{"name": "/p.A/G"}]}
  },
  "sweep": [{"paths": ["services.a.workers", "services.b.workers"], "label": "workers_each",
             "values": [1, 4]}]
}
EOF
  run run "$tmp/linked.json" --reps 2 -q --out "$tmp/lk"
  ok
  head -n 1 "$tmp/lk/points.csv" | grep -qx 'point,workers_each,variant,metric,n,mean,sd,lo,hi,half_width' ||
    fail "points.csv does not name the linked axis by its label: $(head -n 1 "$tmp/lk/points.csv")"
  ok
  python3 - "$tmp/lk/summary.json" >"$tmp/py.log" 2>&1 <<'PY' || fail "the linked axis: $(cat "$tmp/py.log")"
import json, sys
d = json.load(open(sys.argv[1]))
ax = d["study"]["axes"]
assert ax == [{"path": "workers_each", "label": "workers_each", "values": [1, 4],
               "paths": ["services.a.workers", "services.b.workers"]}], ax
assert [p["values"] for p in d["points"]] == [{"workers_each": 1}, {"workers_each": 4}]
# each run's services report their utilization over their workers: both fall about 4x
def util(point, svc):
    rs = [r["result"]["services"][svc]["utilization"] for r in d["runs"] if r["point"] == point]
    return sum(rs) / len(rs)
for svc in ("a", "b"):
    ratio = util(0, svc) / util(1, svc)
    assert 3.0 < ratio < 5.0, (svc, ratio)
PY
  # on the command line: PATH1+PATH2=VALUES, the axis named by its paths
  run run "$tmp/linked.json" --reps 1 -q --sweep 'services.a.workers+services.b.workers=1,4' --out "$tmp/lk2"
  ok
  head -n 1 "$tmp/lk2/points.csv" | grep -q '^point,services.a.workers+services.b.workers,variant,' ||
    fail "--sweep A+B: $(head -n 1 "$tmp/lk2/points.csv")"
  # validated: each path reaches a value, no path twice, paths or path, a plain label
  sed 's/"services.b.workers"\]/"services.c.workers"]/' "$tmp/linked.json" >"$tmp/lk-bad.json"
  run_rc 2 validate "$tmp/lk-bad.json"
  has "$tmp/err" '$.sweep[0].paths[1]: "services.c.workers" reaches no value'
  sed 's/"services.b.workers"\]/"services.a.workers"]/' "$tmp/linked.json" >"$tmp/lk-bad.json"
  run_rc 2 validate "$tmp/lk-bad.json"
  has "$tmp/err" '$.sweep[0].paths[1]: the path is listed twice'
  sed 's/"label": "workers_each"/"label": "a b"/' "$tmp/linked.json" >"$tmp/lk-bad.json"
  run_rc 2 validate "$tmp/lk-bad.json"
  has "$tmp/err" '$.sweep[0].label: "label" must be'
  sed 's/"label": "workers_each",/"label": "w", "path": "services.a.workers",/' "$tmp/linked.json" >"$tmp/lk-bad.json"
  run_rc 2 validate "$tmp/lk-bad.json"
  has "$tmp/err" 'an axis has "path" (one value) or "paths"'
  run_rc 2 run "$tmp/linked.json" --sweep 'services.a.workers+services.a.workers=1,2' -q
  has "$tmp/err" 'the path is swept twice'
  test_name=""
}

sweep_option_runs_the_grid_first_axis_slowest
sweep_block_and_its_replacement
sweep_refuses_bad_axes_and_points
validate_and_plan_check_the_points
sweep_same_bytes_for_any_j
search_writes_its_bracket
search_check_holds_its_expectations
sweep_values_print_as_written
search_ends_are_checked_first
study_censored_values_are_not_averaged
search_warns_when_no_pass_can_be_decided
merge_checks_like_a_local_run
sweep_messages_say_what_is_wrong
paired_warns_about_a_variant_seed
search_refuses_what_does_not_apply
linked_axis_moves_every_path

t_done
