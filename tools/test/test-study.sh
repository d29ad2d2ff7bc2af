#!/bin/sh
# Issue 11: studies (replications, paired comparisons, parallel runs, shards). Checks that
#  - -j 1 and -j 2 write byte-identical files (summary.json, runs.csv, points.csv, paired.csv);
#  - shards 1/3, 2/3, 3/3 merged (in any order) give exactly the files of the local run, and
#    so do the commands `retrysim plan` prints, run as printed;
#  - replication 0 of a study is the plain run: same run object, same seed;
#  - the aggregates are the means of the runs, and the intervals cover the mean;
#  - bad input (a bad --reps, --shard, --baseline; a merge of a missing, duplicated or foreign
#    shard, or of a file that is not a shard) exits 2 with one clear line and writes no file.
# Usage: BUILD=build sh tools/test/test-study.sh
set -u
. "$(dirname "$0")/lib.sh"
need_bin
t_tmp

# quickstart shortened to 16 s with its fault moved to 2 s .. 5 s (recovery holds 10 s): about
# 0.15 s a run.
scn=experiments/quickstart.json
short="--duration 16s --set services.api.faults[0].start=2s --set services.api.faults[0].end=5s"
files="summary.json runs.csv points.csv paired.csv"

same_files() { # DIR_A DIR_B WHAT
  for f in $files; do
    if cmp -s "$1/$f" "$2/$f"; then ok; else fail "$3: $f differs ($1 vs $2)"; fi
  done
}

# shellcheck disable=SC2086
"$bin" run "$scn" $short --reps 4 --baseline no-retries -j 1 --quiet --out "$tmp/j1" ||
  fail "the study with -j 1 failed"
# shellcheck disable=SC2086
"$bin" run "$scn" $short --reps 4 --baseline no-retries -j 2 --quiet --out "$tmp/j2" ||
  fail "the study with -j 2 failed"
same_files "$tmp/j1" "$tmp/j2" "-j 1 against -j 2"

for k in 1 2 3; do
  # shellcheck disable=SC2086
  "$bin" run "$scn" $short --reps 4 --baseline no-retries --shard "$k/3" -j 2 --quiet \
    --out "$tmp/shard-$k" || fail "shard $k/3 failed"
  [ -f "$tmp/shard-$k/shard.json" ] && ok || fail "shard $k/3 wrote no shard.json"
  [ -f "$tmp/shard-$k/summary.json" ] && fail "shard $k/3 wrote a summary.json"
done
"$bin" merge "$tmp/shard-3" "$tmp/shard-1" "$tmp/shard-2" --out "$tmp/merged" --quiet ||
  fail "the merge failed"
same_files "$tmp/j1" "$tmp/merged" "merged shards against the local run"

# The plan's commands, run as printed (with this build's retrysim), give the same files.
# shellcheck disable=SC2086
"$bin" plan "$scn" $short --reps 4 --baseline no-retries --quiet --shards 2 --out "$tmp/plan" \
  >"$tmp/plan.sh" || fail "plan failed"
lines=$(wc -l <"$tmp/plan.sh")
[ "$lines" -eq 3 ] && ok || fail "plan --shards 2 printed $lines lines, expected 3"
grep -q -- "--shard 2/2 --out $tmp/plan/shard-2\$" "$tmp/plan.sh" && ok ||
  fail "plan: no command for shard 2/2: $(cat "$tmp/plan.sh")"
(
  retrysim() { "$bin" "$@"; }
  # shellcheck disable=SC1090
  . "$tmp/plan.sh"
) >"$tmp/plan.out" || fail "the plan's commands failed"
same_files "$tmp/j1" "$tmp/plan" "the plan's shards merged against the local run"

# Replication 0 is the plain run; the aggregates are means; the intervals hold the mean.
# shellcheck disable=SC2086
"$bin" run "$scn" $short --quiet --out "$tmp/plain" || fail "the plain run failed"
if python3 - "$tmp/plain/summary.json" "$tmp/j1/summary.json" >"$tmp/py.log" 2>&1 <<'EOF'
import json, sys
plain = json.load(open(sys.argv[1]))
study = json.load(open(sys.argv[2]))
assert study["study"]["replications"] == 4 and study["study"]["n_runs"] == 12
assert study["study"]["seeds"][0] == plain["seed"]
runs = study["runs"]
for v, pv in enumerate(plain["variants"]):
    r0 = runs[v * 4]
    assert r0["replication"] == 0 and r0["variant"] == pv["variant"], r0["variant"]
    assert r0["seed"] == plain["seed"]
    # "capacity" is the estimate before the run, which a study's records do not repeat.
    expected = {k: x for k, x in pv.items() if k not in ("variant", "capacity")}
    assert r0["result"] == expected, "replication 0 of %s differs from the plain run" % pv["variant"]
    # Other replications run on other seeds, so their figures differ.
    assert runs[v * 4 + 1]["result"]["calls"]["started"] != expected["calls"]["started"]
    agg = study["points"][0]["variants"][v]
    vals = [runs[v * 4 + r]["result"]["goodput_per_s"] for r in range(4)]
    mean = sum(vals) / 4
    assert abs(agg["goodput_per_s"] - mean) <= 1e-5 * abs(mean), (agg["goodput_per_s"], mean)
    iv = agg["intervals"]["goodput_per_s"]
    assert iv["n"] == 4 and iv["lo"] < mean < iv["hi"], iv
    rec = agg["proportions"]["recovery.recovered"]
    assert rec["n"] == 4 and 0 <= rec["lo"] <= rec["p"] <= rec["hi"] <= 1, rec
    assert "p_storm" in agg and "recovery_s" in agg
    if pv["variant"] != "no-retries":
        assert agg["paired"]["baseline"] == "no-retries"
        # Common random numbers: the same arrivals in both variants (difference exactly 0), and
        # a paired interval of goodput much narrower than the unpaired one on the same runs.
        m = agg["paired"]["metrics"]
        assert m["calls.started"]["mean_diff"] == 0 and m["calls.started"]["sd"] == 0, m["calls.started"]
        g = m["goodput_per_s"]
        assert 2 * (g["hi"] - g["lo"]) < g["unpaired_hi"] - g["unpaired_lo"], g
        assert g["test"] != "t" or g["distinguishable"] == (g["lo"] > 0 or g["hi"] < 0)
    else:
        assert "paired" not in agg
EOF
then ok; else fail "replication 0 or the aggregates: $(cat "$tmp/py.log")"; fi
head -n 1 "$tmp/j1/points.csv" | grep -qx "point,variant,metric,n,mean,sd,lo,hi,half_width" &&
  ok || fail "points.csv header: $(head -n 1 "$tmp/j1/points.csv")"
head -n 1 "$tmp/j1/runs.csv" | grep -qx "point,variant,replication,seed,metric,value" &&
  ok || fail "runs.csv header: $(head -n 1 "$tmp/j1/runs.csv")"

# The text table: means with half-widths, P(recovered), the marks.
# shellcheck disable=SC2086
"$bin" run "$scn" $short --reps 3 --baseline no-retries >"$tmp/table.txt" 2>&1 ||
  fail "the study's table failed"
grep -q "±" "$tmp/table.txt" && grep -q "P(recovered)" "$tmp/table.txt" &&
  grep -q "\* = differs from no-retries" "$tmp/table.txt" && ok ||
  fail "the table lacks half-widths, P(recovered) or the marks: $(cat "$tmp/table.txt")"
# P(storm) beside P(recovered), each with its Wilson interval (3 replications: [0, 0.561]).
grep -q "  P(recovered)      P(storm)  median recovery s" "$tmp/table.txt" &&
  grep -qE "^no-retries .* 1 \[0\.439, 1\]  0 \[0, 0\.561\] " "$tmp/table.txt" && ok ||
  fail "the table lacks P(storm) with its interval: $(cat "$tmp/table.txt")"

# --check against the means: quickstart's expectations hold over 2 replications (recovered:
# true means every replication recovered); a broken one fails, naming the variant.
"$bin" run "$scn" --reps 2 -j 2 --check --quiet 2>"$tmp/check.txt" && ok ||
  fail "--check of quickstart over 2 replications: $(cat "$tmp/check.txt")"
"$bin" run "$scn" --reps 2 -j 2 --check --quiet --set 'variants[0].expect.goodput_per_s=[0,1]' \
  2>"$tmp/check.txt"
rc=$?
[ "$rc" -eq 1 ] && grep -q "^FAIL no-retries: goodput_per_s: expected \[0, 1\]" "$tmp/check.txt" &&
  grep -q "1 failed (against the means over 2 replications)" "$tmp/check.txt" && ok ||
  fail "a failed expectation of a study: exit $rc: $(cat "$tmp/check.txt")"

# expect_error WHAT PATTERN COMMAND...: exit 2, one line matching PATTERN, no file in $tmp/bad.
expect_error() {
  what=$1 pattern=$2
  shift 2
  rm -rf "$tmp/bad"
  "$@" >"$tmp/err.out" 2>"$tmp/err.txt"
  rc=$?
  if [ "$rc" -ne 2 ]; then
    fail "$what: exit $rc, expected 2: $(cat "$tmp/err.txt")"
  elif ! grep -q -- "$pattern" "$tmp/err.txt"; then
    fail "$what: the message lacks '$pattern': $(cat "$tmp/err.txt")"
  elif [ "$(wc -l <"$tmp/err.txt")" -ne 1 ]; then
    fail "$what: more than one line: $(cat "$tmp/err.txt")"
  elif [ -e "$tmp/bad" ]; then
    fail "$what: wrote $tmp/bad"
  else
    ok
  fi
}
expect_error "--reps 0" "--reps needs an integer 1 .. 100000, got '0'" \
  "$bin" run "$scn" --reps 0 --out "$tmp/bad"
expect_error "--shard 4/3" "--shard needs K/N with 1 <= K <= N" \
  "$bin" run "$scn" --reps 2 --shard 4/3 --out "$tmp/bad"
expect_error "--shard without --out" "--shard needs --out DIR" "$bin" run "$scn" --shard 1/2
expect_error "--confidence 2" "--confidence needs a level 0.5 .. 0.9999" \
  "$bin" run "$scn" --reps 2 --confidence 2 --out "$tmp/bad"
expect_error "an unknown baseline" '"nope" is not a variant being run' \
  "$bin" run "$scn" --reps 2 --baseline nope --out "$tmp/bad"
expect_error "--baseline without a study" "apply to a study" \
  "$bin" run "$scn" --baseline retries --out "$tmp/bad"
expect_error "a missing shard" "shard 2 of 3 is missing" \
  "$bin" merge "$tmp/shard-1" "$tmp/shard-3" --out "$tmp/bad"
expect_error "a duplicated shard" "shard 1 of 3 given twice" \
  "$bin" merge "$tmp/shard-1" "$tmp/shard-1" "$tmp/shard-2" --out "$tmp/bad"
# shellcheck disable=SC2086
"$bin" run "$scn" $short --reps 3 --shard 2/3 --quiet --out "$tmp/other-2" ||
  fail "the other plan's shard failed"
expect_error "a shard of another plan" "a shard of a different plan .*study.replications" \
  "$bin" merge "$tmp/shard-1" "$tmp/other-2" "$tmp/shard-3" --out "$tmp/bad"
expect_error "not a shard file" "not a shard file" \
  "$bin" merge "$tmp/j1/summary.json" --out "$tmp/bad"
expect_error "no shard there" "cannot read the shard" "$bin" merge "$tmp/nowhere" --out "$tmp/bad"
expect_error "merge without --out" "merge needs --out DIR" "$bin" merge "$tmp/shard-1"
printf '{"retrysim_shard": 1, "shard": 1,' >"$tmp/broken.json"
expect_error "a truncated shard file" "broken.json:1:.*not a shard file" \
  "$bin" merge "$tmp/broken.json" --out "$tmp/bad"

# Issue 23 item 9: numbers parse strictly, and oversized work is refused before it starts.
for bad_shard in 4294967297/5 1/4294967298 "1/ 2" " 1/2" 0x1/2 1/2x; do
  expect_error "--shard '$bad_shard'" "--shard needs K/N" \
    "$bin" run "$scn" --reps 2 --shard "$bad_shard" --out "$tmp/bad"
done
expect_error "--max-memory in hexadecimal" "--max-memory needs a size" \
  "$bin" run "$scn" --max-memory 0x10000000 --out "$tmp/bad"
expect_error "--confidence in hexadecimal" "--confidence needs a level" \
  "$bin" run "$scn" --reps 2 --confidence 0x1p-1 --out "$tmp/bad"
values=$(seq -s, 1 10001)
expect_error "a listed axis of 10001 values" "an axis has at most 10000 values, got 10001" \
  "$bin" run "$scn" --sweep "clients.web.count=$values" --out "$tmp/bad"
expect_error "a range from 1e308 to -1e308" "wider than a double can hold" \
  "$bin" run "$scn" --sweep "clients.web.count=1e308:-1e308:3" --out "$tmp/bad"
expect_error "10^4 points x 10^5 replications" \
  "10000 points x 100000 replications x 3 variants holds 3000000000 run records.*over the limit of 8.0 GiB" \
  "$bin" run "$scn" --reps 100000 --sweep clients.web.count=1:10000:10000 --max-runs none \
  --out "$tmp/bad"
expect_error "a study over --max-memory" "over the limit of 1.0 GiB.*raise --max-memory" \
  "$bin" run "$scn" --reps 100000 --max-memory 1G --out "$tmp/bad"
expect_error "a search of 10^5 replications a probe" "a search of up to probes x max_reps.*over the limit" \
  "$bin" run experiments/tipping-point.json --set search.reps=100000 --set search.max_reps=100000 \
  --max-runs none --out "$tmp/bad"

# Issue 23 item 9: the runs are counted and estimated before anything runs, and refused beyond
# --max-runs (default 10^6) by run, validate and plan alike, naming the count and the limit.
expect_error "10^4 points x 10^5 replications over --max-runs" \
  "a study of 10000 points x 100000 replications x 3 variants makes 3000000000 runs, over the limit of 1000000.*raise --max-runs" \
  "$bin" run "$scn" --reps 100000 --sweep clients.web.count=1:10000:10000 --out "$tmp/bad"
expect_error "a study over --max-runs 11" "makes 12 runs, over the limit of 11" \
  "$bin" run "$scn" $short --reps 4 --max-runs 11 --out "$tmp/bad"
expect_error "a search over --max-runs" "a search of up to variants x probes x max_reps runs makes .* runs, over the limit of 1000000" \
  "$bin" run experiments/tipping-point.json --set search.reps=100000 --set search.max_reps=100000 \
  --out "$tmp/bad"
expect_error "validate over --max-runs" "makes 12 runs, over the limit of 11" \
  "$bin" validate "$scn" --set replications=4 --max-runs 11
expect_error "plan over --max-runs" "makes 12 runs, over the limit of 11" \
  "$bin" plan "$scn" --reps 4 --shards 2 --out "$tmp/p" --max-runs 11
expect_error "--max-runs 0" "--max-runs needs a count of runs >= 1 or none, got '0'" \
  "$bin" run "$scn" --reps 4 --max-runs 0 --out "$tmp/bad"
# shellcheck disable=SC2086
if "$bin" run "$scn" $short --reps 4 --max-runs 12 --quiet --out "$tmp/max12" 2>"$tmp/err.txt" &&
  [ -f "$tmp/max12/summary.json" ]; then ok; else fail "--max-runs 12 refused 12 runs: $(cat "$tmp/err.txt")"; fi
"$bin" validate "$scn" --set replications=4 >"$tmp/v.txt" 2>&1
if grep -q "^  estimate: 12 runs, about [0-9.e+]* simulated requests (first attempts, without retries), at least about .* of CPU" "$tmp/v.txt"; then
  ok
else
  fail "validate does not print the runs estimate: $(cat "$tmp/v.txt")"
fi
"$bin" plan "$scn" --reps 4 --shards 2 --out "$tmp/p" >"$tmp/p.txt" 2>"$tmp/p.err"
if grep -q "^  estimate: 12 runs" "$tmp/p.err" && ! grep -q estimate "$tmp/p.txt"; then
  ok
else
  fail "plan does not print the runs estimate on stderr: $(cat "$tmp/p.err")"
fi

# A CSV of samples: hexadecimal, a value past the limit and a NUL byte, each named.
mkdir -p "$tmp/csv"
printf '{"duration": "2s", "services": {"api": {"service_time": {"dist": "empirical", "file": "s.csv"}}}, "clients": {"web": {"target": "api", "arrival": {"kind": "open", "rate": "10/s"}, "methods": ["/a.A/M"]}}}' >"$tmp/csv/scn.json"
printf 'latency_ms\n0x10\n' >"$tmp/csv/s.csv"
expect_error "a CSV sample in hexadecimal" "s.csv:2: every value is a finite number" \
  "$bin" validate "$tmp/csv/scn.json"
printf 'latency_ms\n1e300\n' >"$tmp/csv/s.csv"
expect_error "a CSV sample of 1e300 ms" "s.csv:2: 1e300 is 1e+297 s, more than the limit of a day (86400 s)" \
  "$bin" validate "$tmp/csv/scn.json"
printf 'latency_ms\n12\000\n5\n' >"$tmp/csv/s.csv"
expect_error "a NUL byte in a CSV" "s.csv:2: a NUL byte at column 3" "$bin" validate "$tmp/csv/scn.json"

t_done
