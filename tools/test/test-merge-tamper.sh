#!/bin/sh
# Issue 23 item 9: `retrysim merge` trusts nothing inside a shard file. Two shards of one small
# study are written once; each case below changes one field of shard 1 (with python3), and the
# merge must exit 2, name the shard file and the field on one line, and leave no file (no
# runs.csv.tmp.PID either) in its --out directory. The untouched shards still merge.
# Usage: BUILD=build sh tools/test/test-merge-tamper.sh
set -u
. "$(dirname "$0")/lib.sh"
need_bin
need_cmd python3 "python3 is needed to change the shard files"
t_tmp

scn=experiments/quickstart.json
short="--duration 6s --set services.api.faults[0].start=2s --set services.api.faults[0].end=3s"
for k in 1 2; do
  # shellcheck disable=SC2086
  "$bin" run "$scn" $short --reps 3 --baseline no-retries --shard "$k/2" --quiet \
    --out "$tmp/s$k" || fail "shard $k/2 failed"
done
"$bin" merge "$tmp/s1" "$tmp/s2" --out "$tmp/good" --quiet && ok || fail "the untouched shards do not merge"

# tamper WHAT FIELD PYTHON: shard 1 changed by PYTHON (on d, the document), merged with shard 2:
# exit 2, one line naming tampered/shard.json and FIELD, no file under $tmp/out.
tamper() {
  what=$1 field=$2
  rm -rf "$tmp/t" "$tmp/out"
  mkdir -p "$tmp/t"
  python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"))' "$tmp/s1/shard.json" "$tmp/t/shard.json" "$3" ||
    { fail "$what: python failed"; return; }
  "$bin" merge "$tmp/t" "$tmp/s2" --out "$tmp/out" >"$tmp/merge.out" 2>"$tmp/merge.err"
  rc=$?
  if [ "$rc" -ne 2 ]; then
    fail "$what: exit $rc, expected 2: $(cat "$tmp/merge.err")"
  elif ! grep -qF -- "$tmp/t/shard.json: $field" "$tmp/merge.err"; then
    fail "$what: the message does not name the shard and '$field': $(cat "$tmp/merge.err")"
  elif [ "$(wc -l <"$tmp/merge.err")" -ne 1 ]; then
    fail "$what: more than one line: $(cat "$tmp/merge.err")"
  elif [ -e "$tmp/out" ]; then
    fail "$what: left $(ls -A "$tmp/out") in --out"
  else
    ok
  fi
}

tamper "confidence 7" '$.plan.study.confidence' 'd["plan"]["study"]["confidence"] = 7'
tamper "confidence \"x\"" '$.plan.study.confidence' 'd["plan"]["study"]["confidence"] = "x"'
tamper "replications 0" '$.plan.study.replications' 'd["plan"]["study"]["replications"] = 0'
tamper "replications 1e9" '$.plan.study.replications' 'd["plan"]["study"]["replications"] = 10**9'
tamper "variants []" '$.plan.study.variants' 'd["plan"]["study"]["variants"] = []'
tamper "a variant renamed in the plan" '$.plan.study.baseline' \
  'd["plan"]["study"]["variants"][0] = "renamed"'
tamper "an emptied run result" '$.runs[0].result.sim_time_s' 'd["runs"][0]["result"] = {}'
tamper "a metric turned into a string" '$.runs[1].result.goodput_per_s' \
  'd["runs"][1]["result"]["goodput_per_s"] = "fast"'
tamper "a count removed" '$.runs[1].result.calls.retries' 'del d["runs"][1]["result"]["calls"]["retries"]'
tamper "a changed run seed" '$.runs[0].seed' 'd["runs"][0]["seed"] += 1'
tamper "a renamed variant in a record" '$.runs[0].variant' 'd["runs"][0]["variant"] = "renamed"'
tamper "a point index out of range" '$.runs[0].point' 'd["runs"][0]["point"] = 7'
tamper "a replication changed" '$.runs[0].replication' 'd["runs"][0]["replication"] = 2'
tamper "a run of another shard" '$.runs[0].run' 'd["runs"][0]["run"] = 1'
tamper "a run out of range" '$.runs[0].run' 'd["runs"][0]["run"] = 10**6'
tamper "a result that is not an object" '$.runs[0].result' 'd["runs"][0]["result"] = 3'
tamper "changed axes" '$.plan.points[0]' 'd["plan"]["study"]["axes"] = [{"path": "x", "values": [1]}]'
tamper "changed baseline" '$.plan.study.baseline' 'd["plan"]["study"]["baseline"] = "nobody"'
tamper "changed document" '$.plan.document' 'd["plan"]["document"]["duration"] = "7s"'
tamper "changed points" '$.plan.points[0]' 'd["plan"]["points"][0]["point"] = 3'
tamper "changed seeds" '$.plan.study.seeds[1]' 'd["plan"]["study"]["seeds"][1] = 5'
tamper "changed plan seed" '$.plan.study.seeds[0]' 'd["plan"]["seed"] = 2'
tamper "changed version" '$.plan.version' 'd["plan"]["version"] = "0.0.1"'
tamper "changed n_runs" '$.plan.study.n_runs' 'd["plan"]["study"]["n_runs"] = 7'
tamper "changed warmup" '$.plan.study.warmup_s' 'd["plan"]["study"]["warmup_s"] = -1'
tamper "a changed scenario name" '$.plan.scenario' 'd["plan"]["scenario"] = "other"'
tamper "a variant seed changed" '$.variant_seeds[0]' 'd["variant_seeds"][0] = 99'
tamper "no digest" '$.plan_sha256' 'del d["plan_sha256"]'
tamper "a digest changed" '$.plan' 'd["plan_sha256"] = "0" * 64'
tamper "shard 0" '$.shard' 'd["shard"] = 0'
tamper "shard of 4294967297" '$.of' 'd["of"] = 4294967297'

# Not a regular file: a FIFO named shard.json would block a reader forever.
rm -rf "$tmp/out"
mkdir -p "$tmp/fifo"
if mkfifo "$tmp/fifo/shard.json" 2>/dev/null; then
  "$bin" merge "$tmp/fifo" "$tmp/s2" --out "$tmp/out" >/dev/null 2>"$tmp/merge.err"
  rc=$?
  [ "$rc" -eq 2 ] && grep -qF "$tmp/fifo/shard.json: not a regular file" "$tmp/merge.err" &&
    [ ! -e "$tmp/out" ] && ok || fail "a FIFO named shard.json: exit $rc: $(cat "$tmp/merge.err")"
fi

t_done
