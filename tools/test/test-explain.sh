#!/bin/sh
# Checks `retrysim explain` as docs/cli.md and docs/explain.md describe it, one rule per
# function: it picks a call by id, by stop reason and by start time, shows the calls made
# below each attempt layer by layer, shows pushback as received and as parsed, shows the
# shared state before and after, prints JSON that parses, refuses bad selectors with exit 2
# and one line, prints the same bytes twice, and leaves the run it explains unchanged.
# Usage: BUILD=build sh tools/test/test-explain.sh
set -u
. "$(dirname "$0")/lib.sh"
need_bin
need_cmd python3 "needs python3 to read the JSON"
t_tmp
mkdir "$tmp/doc"
seed003=experiments/seed003-pushback.json
storm=experiments/metastable-storm.json
nested=experiments/nested-layers.json

# jget and jv (lib.sh) may count the calls of a tree: tree_size(d["tree"]).
JGET_DEFS='def tree_size(c):
    return 1 + sum(tree_size(x) for x in c["calls"])'
export JGET_DEFS

explain_picks_a_call_by_id() {
  run_rc 0 explain "$seed003" --call 1
  has "$tmp/out" "picked: call 1 (--call)" by_id
  has "$tmp/out" "call 1  agent -> jobs  /jobs.v1.Jobs/Run" by_id
  # An internal call may be picked by id too: it is the root, its parent untraced.
  run_rc 0 explain "$nested" --call 15 --format json
  jv "$tmp/out" 'd["call"]["id"]' 15 by_id
  jv "$tmp/out" 'd["call"]["from"] + "->" + d["call"]["to"]' 'frontend->middle' by_id
  jv "$tmp/out" 'd["call"]["layer"]' null by_id
}

explain_picks_the_first_call_that_stopped_for_a_reason() {
  run_rc 0 explain "$seed003" --variant negative-pushback --stopped pushback_stop
  has "$tmp/out" "stop reason pushback_stop" by_stop_reason
  # seed003's shared bucket: 200 calls at 0 s through one channel (maxTokens 10). Calls 1 to 4
  # fail first and take the bucket to 6, still retrying; the fifth failure takes it to 5 and
  # is the first refused: call 5, not call 1 (first started) nor call 200 (last).
  run_rc 0 explain "$seed003" --variant storm-throttled-shared --stopped throttled
  has "$tmp/out" "picked: call 5, the first call on a client's edge to stop with throttled" by_stop_reason
  has "$tmp/out" "attempt 1: UNAVAILABLE  tokens 6.000 -> 5.000" by_stop_reason
  has "$tmp/out" "stop reason throttled: retry throttling" by_stop_reason
  run_rc 0 explain "$storm" --variant grpc-throttling --stopped throttled --format json
  jv "$tmp/out" 'd["call"]["result"]["stop_reason"]' throttled by_stop_reason
  jv "$tmp/out" 'd["selector"]["by"]' stopped by_stop_reason
  # With --after: the first call started at or after the time that stopped with the reason.
  run_rc 0 explain "$storm" --variant retries --after 100s --stopped deadline --format json
  jv "$tmp/out" 'd["call"]["result"]["stop_reason"]' deadline by_stop_reason
  jv "$tmp/out" 'd["call"]["start_ns"] >= 100000000000' true by_stop_reason
  # The retry storm has no goodput left at 100 s: no call started then ends OK.
  run_rc 2 explain "$storm" --variant retries --after 100s --stopped ok
  has "$tmp/err" "no call on a client's edge started at or after 100s stopped with ok" by_stop_reason
}

explain_picks_the_first_call_started_after_a_time() {
  run_rc 0 explain "$storm" --variant retries --after 35s --format json
  cp "$tmp/out" "$tmp/after.json"
  start=$(jget "$tmp/after.json" 'd["call"]["start_ns"]')
  id=$(jget "$tmp/after.json" 'd["call"]["id"]')
  ok
  [ "$start" -ge 35000000000 ] || fail "by_time: call $id started at $start, before 35 s"
  # The call before it (the storm has one layer: every id is a client's call) started earlier.
  run_rc 0 explain "$storm" --variant retries --call $((id - 1)) --format json
  prev=$(jget "$tmp/out" 'd["call"]["start_ns"]')
  ok
  [ "$prev" -lt 35000000000 ] || fail "by_time: call $((id - 1)) started at $prev, not before 35 s"
  # --after exactly at its start picks it again.
  run_rc 0 explain "$storm" --variant retries --after "${start}ns" --format json
  jv "$tmp/out" 'd["call"]["id"]' "$id" by_time
}

explain_shows_nested_layers() {
  run_rc 0 explain "$nested" --after 1s
  has "$tmp/out" "call 15  frontend -> middle  /shop.v1.Middle/Get  (made while serving attempt 1 of call 14)" nested
  has "$tmp/out" "      layer 2, policy retry" nested
  run_rc 0 explain "$nested" --after 1s --format json
  jv "$tmp/out" 'd["call"]["calls"][0]["layer"]' 1 nested
  jv "$tmp/out" 'd["call"]["calls"][0]["parent_call"]' 14 nested
  jv "$tmp/out" 'd["call"]["calls"][0]["calls"][0]["layer"]' 2 nested
  jv "$tmp/out" 'tree_size(d["call"])' 13 nested
  jv "$tmp/out" 'd["calls_in_tree"]' 13 nested
  # --edge picks among the calls of an internal edge.
  run_rc 0 explain "$nested" --edge 'middle->backend' --stopped max_attempts --format json
  jv "$tmp/out" 'd["call"]["from"] + "->" + d["call"]["to"]' 'middle->backend' nested
}

explain_shows_pushback_raw_and_parsed() {
  run_rc 0 explain "$seed003" --variant timeline-900ms --call 1
  has "$tmp/out" 'attempt 1: UNAVAILABLE  pushback "300" = retry in 300 ms  delay 300 ms from pushback' pushback
  has "$tmp/out" 'pushback "500" = retry in 500 ms' pushback
  has "$tmp/out" "the next attempt, due at 1.050000 s, would start after the deadline (0.900000 s)" pushback
  run_rc 0 explain "$seed003" --variant timeline-900ms --call 1 --format json
  jv "$tmp/out" 'd["call"]["events"][1]["pushback"]["raw"][0]' 300 pushback
  jv "$tmp/out" 'd["call"]["events"][1]["pushback"]["parsed"]' delay pushback
  jv "$tmp/out" 'd["call"]["events"][1]["pushback"]["delay_ns"]' 300000000 pushback
  jv "$tmp/out" 'd["call"]["events"][1]["delay"]["source"]' pushback pushback
  run_rc 0 explain "$seed003" --variant unparseable-pushback --call 1
  has "$tmp/out" 'pushback "soon" = invalid: do not retry' pushback
}

explain_shows_shared_state_before_and_after() {
  run_rc 0 explain "$storm" --variant grpc-throttling --stopped throttled --format json
  jv "$tmp/out" 'd["call"]["events"][0]["before"]["throttle_milli_tokens"]' 10000 state
  jv "$tmp/out" 'd["call"]["events"][-1]["before"]["throttle_milli_tokens"] - d["call"]["events"][-1]["after"]["throttle_milli_tokens"]' 1000 state
  run_rc 0 explain "$storm" --variant retry-budget --stopped budget_exhausted
  has "$tmp/out" "budget " state
  has "$tmp/out" "the retry budget has no room" state
  run_rc 0 explain "$storm" --variant retries --stopped deadline
  has "$tmp/out" "backoff drawn" state
}

explain_json_parses() {
  for args in "$seed003 --call 1" "$nested --after 1s" "$storm --variant circuit-breaker --stopped breaker_open"; do
    # shellcheck disable=SC2086
    run_rc 0 explain $args --format json
    ok
    python3 -m json.tool "$tmp/out" >/dev/null 2>&1 || fail "json: explain $args is not JSON"
  done
}

explain_refuses_bad_selectors_with_exit_2() {
  for args in "$seed003" "$seed003 --call 1 --after 1s" "$seed003 --stopped bogus" \
    "$seed003 --stopped none" "$seed003 --after 5" "$seed003 --after -1s" "$seed003 --call 0" \
    "$seed003 --call x1" "$seed003 --call 1 --variant nope" "$seed003 --edge nonsense --after 0s" \
    "$seed003 --call 99" "$seed003 --stopped breaker_open" "$seed003 --edge a->b --after 0s" \
    "$seed003 --call 1 --bogus" "$seed003 --call" "--call 1" "$seed003 --after 1s --call 1" \
    "$seed003 --stopped ok --stopped ok" "$seed003 --after 0s --after 1s" "$seed003 --call 1 --format xml" \
    "$seed003 --call 1 --edge agent->jobs" "$seed003 $seed003 --call 1"; do
    # shellcheck disable=SC2086
    run_rc 2 explain $args
    ok
    [ "$(wc -l <"$tmp/err")" -eq 1 ] || { fail "bad selector: explain $args: not one line"; cat "$tmp/err"; }
    ok
    [ ! -s "$tmp/out" ] || fail "bad selector: explain $args wrote to stdout"
  done
  # The list of stop reasons comes from the engine: every reason is named, the newest too.
  run_rc 2 explain "$seed003" --stopped bogus
  for r in ok max_attempts deadline throttled no_retry_policy; do
    ok
    grep -q "[(, ]$r[,)]" "$tmp/err" || fail "--stopped bogus does not list $r: $(cat "$tmp/err")"
  done
}

explain_output_is_identical_across_runs() {
  for fmt in text json; do
    "$bin" explain "$storm" --variant retries --stopped deadline --format $fmt >"$tmp/a" 2>&1
    "$bin" explain "$storm" --variant retries --stopped deadline --format $fmt >"$tmp/b" 2>&1
    ok
    cmp -s "$tmp/a" "$tmp/b" || fail "deterministic: two runs of explain ($fmt) differ"
  done
}

explain_leaves_the_run_unchanged() {
  # What explain reports of the run equals what `retrysim run` counts without tracing.
  run_rc 0 run "$storm" --set variants=null --format json --quiet
  started=$(jget "$tmp/out" 'd["calls"]["started"]')
  attempts=$(jget "$tmp/out" 'd["calls"]["attempts"]')
  run_rc 0 explain "$storm" --set variants=null --stopped deadline --format json
  jv "$tmp/out" 'd["totals"]["calls_started"]' "$started" unchanged
  jv "$tmp/out" 'd["totals"]["attempts"]' "$attempts" unchanged
}

explain_docs_show_the_real_output() {
  # Every "$ retrysim explain ..." block of docs/explain.md is run again (from the top folder,
  # pipes included) and must print exactly the lines pasted below it.
  awk -v dir="$tmp/doc" 'BEGIN { n = 0 }
    /^```/ { if (inblk) { inblk = 0; close(out) } else { inblk = 1; cmd = "" } ; next }
    inblk && cmd == "" && /^\$ retrysim explain / {
      n++; cmd = substr($0, 3); out = dir "/" n ".want"; print cmd > (dir "/" n ".cmd"); close(dir "/" n ".cmd"); next }
    inblk && cmd != "" { print > out }' docs/explain.md
  n=0
  for c in "$tmp"/doc/*.cmd; do
    [ -f "$c" ] || continue
    n=$((n + 1))
    cmd=$(cat "$c")
    # A block that pipes into jq is checked where jq is installed.
    case "$cmd" in *"| jq "*) command -v jq >/dev/null 2>&1 || continue ;; esac
    want=${c%.cmd}.want
    ok
    # shellcheck disable=SC2016
    (PATH="$(dirname "$bin"):$PATH" sh -c "$cmd") >"$tmp/doc/got" 2>&1
    cmp -s "$want" "$tmp/doc/got" || { fail "docs: '$cmd' prints other lines than docs/explain.md shows"; diff "$want" "$tmp/doc/got" | head -n 6; }
  done
  ok
  [ "$n" -ge 6 ] || fail "docs: only $n explain blocks found in docs/explain.md"
}

explain_takes_set_seed_and_variant_as_run_does() {
  # --set changes the document before the variant applies: a 1100 ms deadline lets the third
  # attempt fit (the timeline-1100ms variant's story).
  run_rc 0 explain "$seed003" --variant timeline-900ms --call 1 --set clients.agent.deadline=1100ms
  has "$tmp/out" "ended 1.060000 s after 1.06 s: OK, stop reason ok, 3 attempts" options
  run_rc 0 explain "$seed003" --variant timeline-900ms --call 1 --duration 400ms
  has "$tmp/out" "run timeline-900ms (1 of 14), seed 3" options
  # --seed replaces the scenario's, and the run (its totals) follows it.
  run_rc 0 run "$storm" --set variants=null --seed 2 --format json --quiet
  started=$(jget "$tmp/out" 'd["calls"]["started"]')
  run_rc 0 explain "$storm" --set variants=null --seed 2 --after 35s --format json
  jv "$tmp/out" 'd["seed"]' 2 options
  jv "$tmp/out" 'd["totals"]["calls_started"]' "$started" options
}

explain_picks_a_call_by_id
explain_takes_set_seed_and_variant_as_run_does
explain_picks_the_first_call_that_stopped_for_a_reason
explain_picks_the_first_call_started_after_a_time
explain_shows_nested_layers
explain_shows_pushback_raw_and_parsed
explain_shows_shared_state_before_and_after
explain_json_parses
explain_refuses_bad_selectors_with_exit_2
explain_output_is_identical_across_runs
explain_leaves_the_run_unchanged
explain_docs_show_the_real_output

t_done
