#!/bin/sh
# Checks what a study's --plot writes (docs/cli.md, "Studies"): report.md and report.html with
# the table of means with half-widths, P(recovered) and P(storm) with their intervals and the
# censored recovery time; with a sweep, the pictures of plots/sweep.gp and plots/heatmap.gp
# from points.csv, byte-identical when drawn again; a search's report (each variant's boundary,
# every probe) and search.svg; and the scripts' messages on bad input.
# The scenario is experiments/tipping-point.json without its search: five variants, 30 s runs.
# Usage: BUILD=build sh tools/test/test-study-report.sh
set -u
. "$(dirname "$0")/lib.sh"
need_bin
need_cmd gnuplot "gnuplot not installed"
scn=experiments/tipping-point.json
t_tmp
# gp_fails STATUS TEXT SCRIPT ARGS...: gnuplot -c SCRIPT ARGS exits with STATUS and says TEXT.
gp_fails() {
  ok
  want=$1 text=$2
  shift 2
  gnuplot "$@" >"$tmp/gp.out" 2>"$tmp/gp.err"
  rc=$?
  if [ "$rc" -ne "$want" ]; then
    fail "gnuplot $* exited $rc, expected $want"; sed 's/^/    /' "$tmp/gp.err" | head -n 5
  elif ! grep -qF -- "$text" "$tmp/gp.err"; then
    fail "gnuplot $* did not say: $text"; sed 's/^/    /' "$tmp/gp.err" | head -n 5
  fi
}

# valid_svg FILE: FILE parses as XML and its root is an <svg> element.
valid_svg() {
  ok
  python3 -c 'import sys, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot(); sys.exit(0 if r.tag.endswith("svg") else 1)' "$1" 2>"$tmp/xml.err" ||
    fail "$1 is not a valid SVG: $(head -c 300 "$tmp/xml.err")"
}

test_replications_report() {
  test_name=test_replications_report
  run run "$scn" --set search=null --reps 3 -j 2 --plot --quiet --out "$tmp/reps"
  md="$tmp/reps/report.md"
  exists "$md"
  exists "$tmp/reps/report.html"
  has "$md" "15 runs: 1 point x 5 variants x 3 replications"
  has "$md" "| variant | n | goodput/s | front-door attempts/call | p99 ms | P(recovered) | P(storm) |"
  # a mean with its half-width, a proportion with its Wilson interval, a censored median
  has_re "$md" '^\| no-retries \| 3 \| [0-9.]+ ± [0-9.e-]+ \|'
  has_re "$md" '^\| retries \| 3 \|.*\| 0\.00 \[0\.00, 0\.56\] \| 1\.00 \[0\.44, 1\.00\] \| never \(3 of 3 did not recover\) \| - \(none recovered\) \|$'
  has_re "$md" '^\| grpc-throttling \| 3 \|.*\| 1\.00 \[0\.44, 1\.00\] \| 0\.00 \[0\.00, 0\.56\] \| [0-9.]+ \| [0-9.]+.*\(3 of 3\) \|$'
  has "$tmp/reps/report.html" "<td>retries</td>"
  # no sweep: each replication's values per variant and P(recovered) with its interval, drawn
  # by plots/study.gp from runs.csv and points.csv; no baseline, no paired picture
  has "$md" "## Pictures"
  has "$md" "(study-spread.svg)"
  has "$md" "(study-recovered.svg)"
  lacks "$md" "study-paired"
  valid_svg "$tmp/reps/study-spread.svg"
  valid_svg "$tmp/reps/study-recovered.svg"
  has "$tmp/reps/study-spread.svg" "front-door attempts/call"
  has "$tmp/reps/study-spread.svg" "circuit-breaker"
  has "$tmp/reps/study-recovered.svg" "P(recovered)"
  has "$tmp/reps/report.html" "<img src=\"data:image/svg+xml;base64,"
  gnuplot -e "kind='spread'" -c plots/study.gp "$tmp/reps/runs.csv" "$tmp/again.svg" tipping-point 2>"$tmp/gp.err"
  ok
  cmp -s "$tmp/again.svg" "$tmp/reps/study-spread.svg" || fail "study.gp drew a different study-spread.svg"
}

# The mean time series with its band across replications (--plot without a sweep): series.csv
# has one row per variant and bucket (5 variants x 31 one-second buckets of the 30 s run and its
# drain), each over the 3 replications; it and study-series.svg are the same bytes with -j 1 as
# with -j 2; a study without --plot keeps no series, and a sweep draws none.
test_series_picture() {
  test_name=test_series_picture
  [ -f "$tmp/reps/runs.csv" ] || { ok; fail "test_replications_report left no study"; return; }
  d="$tmp/reps"
  exists "$d/series.csv"
  has "$d/series.csv" "variant,t_s,n,goodput_mean,goodput_p10,goodput_p90,offered_mean"
  ok
  rows=$(tail -n +2 "$d/series.csv" | wc -l | tr -d ' ')
  [ "$rows" = 155 ] || fail "series.csv has $rows rows, expected 5 variants x 31 buckets = 155"
  for v in no-retries retries grpc-throttling retry-budget circuit-breaker; do
    ok
    n=$(grep -c "^$v," "$d/series.csv")
    [ "$n" = 31 ] || fail "series.csv has $n rows of $v, expected 31"
  done
  ok
  awk -F, 'NR > 1 && ($3 != 3 || $5 > $6 || $4 < 0) { bad++ } END { exit bad > 0 }' "$d/series.csv" ||
    fail "series.csv has a row not over 3 replications or with p10 above p90"
  has "$d/report.md" "(study-series.svg)"
  has "$d/report.md" "the band from their 10th to their 90th percentile"
  valid_svg "$d/study-series.svg"
  has "$d/study-series.svg" "circuit-breaker"
  has "$d/study-series.svg" "goodput per bucket"
  run run "$scn" --set search=null --reps 3 -j 1 --plot --quiet --out "$tmp/reps1"
  ok
  cmp -s "$d/series.csv" "$tmp/reps1/series.csv" || fail "series.csv differs between -j 2 and -j 1"
  ok
  cmp -s "$d/study-series.svg" "$tmp/reps1/study-series.svg" ||
    fail "study-series.svg differs between -j 2 and -j 1"
  gnuplot -e "kind='series'" -c plots/study.gp "$d/series.csv" "$tmp/again.svg" tipping-point 2>"$tmp/gp.err"
  ok
  cmp -s "$tmp/again.svg" "$d/study-series.svg" || fail "study.gp drew a different study-series.svg"
  # without --plot the runs keep no series; the files are those of before
  run run "$scn" --set search=null --reps 3 -j 2 --quiet --out "$tmp/noplot"
  ok
  [ ! -e "$tmp/noplot/series.csv" ] || fail "a study without --plot wrote series.csv"
  ok
  cmp -s "$tmp/noplot/runs.csv" "$d/runs.csv" || fail "--plot changed runs.csv"
  ok
  cmp -s "$tmp/noplot/summary.json" "$d/summary.json" || fail "--plot changed summary.json"
}

test_baseline_marks_differences() {
  test_name=test_baseline_marks_differences
  run run "$scn" --set search=null --reps 3 --baseline no-retries --plot --quiet --out "$tmp/paired"
  md="$tmp/paired/report.md"
  has "$md" "## Against the baseline \`no-retries\`"
  # retries - no-retries: far fewer recover, far more attempts: both distinguishable
  has_re "$md" '^\| retries \| -[0-9.e+]+ \[-[0-9.e+]+, -[0-9.e+]+\] \\\* \| \+[0-9.]+ \[[0-9.]+, [0-9.]+\] \\\* \|'
  lacks "$md" "| no-retries | +0"
  # the paired differences drawn as intervals, one panel per metric, the baseline not a row
  has "$md" "(study-paired.svg)"
  valid_svg "$tmp/paired/study-paired.svg"
  has "$tmp/paired/study-paired.svg" "each variant minus no-retries over the same seeds"
  has "$tmp/paired/study-paired.svg" "P(recovered)"
  has "$tmp/paired/study-paired.svg" "retry-budget"
}

test_sweep_pictures() {
  test_name=test_sweep_pictures
  run run "$scn" --set search=null --reps 2 -j 2 --sweep 'clients.web.arrival.rate=150/s,300/s,380/s' \
    --sweep 'services.api.faults[0].end=6s,15s' --variant no-retries --variant retries \
    --plot --quiet --out "$tmp/sweep"
  d="$tmp/sweep"
  for f in sweep-goodput sweep-attempts sweep-p99 sweep-recovered heatmap-recovered; do
    exists "$d/$f.svg"
    has "$d/report.md" "($f.svg)"
  done
  has "$d/sweep-recovered.svg" "P(recovered)"
  # axes named by their paths made readable, not the raw paths
  has "$d/sweep-recovered.svg" "web: arrival rate (per s)"
  lacks "$d/sweep-recovered.svg" "clients.web.arrival.rate (per s)"
  has "$d/heatmap-recovered.svg" "api: faults[0] end (s)"
  has "$d/report.md" "| clients.web.arrival.rate | services.api.faults[0].end | variant | n |"
  has_re "$d/report.md" '^\| 380/s \| 15s \| retries \| 2 \|'
  has "$d/report.html" "<img src=\"data:image/svg+xml;base64,"
  # a sweep keeps no time series (the study page's series picture is of one point)
  ok
  [ ! -e "$d/series.csv" ] || fail "a sweep wrote series.csv"
  # the pictures depend on points.csv only
  gnuplot -e "metric='recovery.recovered'; axislabel='web: arrival rate'" -c plots/sweep.gp "$d/points.csv" "$tmp/again.svg" tipping-point 2>"$tmp/gp.err"
  ok
  cmp -s "$tmp/again.svg" "$d/sweep-recovered.svg" || fail "sweep.gp drew a different sweep-recovered.svg"
}

test_plot_scripts_refuse_bad_input() {
  test_name=test_plot_scripts_refuse_bad_input
  d="$tmp/sweep"
  [ -f "$d/points.csv" ] || return 0
  gp_fails 2 "must end in .svg or .png" -c plots/sweep.gp "$d/points.csv" "$tmp/x.pdf"
  gp_fails 1 "cannot read data file" -c plots/sweep.gp "$tmp/none.csv" "$tmp/x.svg"
  gp_fails 1 "is not a points.csv (it has no column n)" -c plots/heatmap.gp "$d/runs.csv" "$tmp/x.svg"
  gp_fails 1 "its header must start with point" -c plots/sweep.gp "$scn" "$tmp/x.svg"
  gp_fails 1 "has no metric 'nope'" -e "metric='nope'" -c plots/sweep.gp "$d/points.csv" "$tmp/x.svg"
  gp_fails 1 "has no axis 'clients.web.count'" -e "axis='clients.web.count'" -c plots/sweep.gp "$d/points.csv" "$tmp/x.svg"
  gp_fails 1 "none of the variants 'x y'" -e "only='x y'" -c plots/sweep.gp "$d/points.csv" "$tmp/x.svg"
  # a study without a sweep has no axis column
  gp_fails 1 "has no axis column" -c plots/sweep.gp "$tmp/reps/points.csv" "$tmp/x.svg"
  gp_fails 1 "has 0 axes" -c plots/heatmap.gp "$tmp/reps/points.csv" "$tmp/x.svg"
  gp_fails 1 "it has no column replication: not a runs.csv" -e "kind='spread'" -c plots/study.gp "$d/points.csv" "$tmp/x.svg"
  gp_fails 1 "it has no column baseline: not a paired.csv" -e "kind='paired'" -c plots/study.gp "$d/points.csv" "$tmp/x.svg"
  gp_fails 2 "kind must be spread, share, paired or series" -e "kind='pie'" -c plots/study.gp "$d/points.csv" "$tmp/x.svg"
  gp_fails 1 "it has no column t_s: not a series.csv" -e "kind='series'" -c plots/study.gp "$d/points.csv" "$tmp/x.svg"
  gp_fails 1 "has none of the metrics 'nope'" -e "kind='share'; metrics='nope'" -c plots/study.gp "$tmp/reps/points.csv" "$tmp/x.svg"
  head -n 1 "$d/points.csv" >"$tmp/empty.csv"
  gp_fails 1 "it has no data rows" -c plots/sweep.gp "$tmp/empty.csv" "$tmp/x.svg"
}

test_search_report() {
  test_name=test_search_report
  run run "$scn" --set search.probes=3 --set search.reps=10 --set search.max_reps=20 \
    --variant retries --variant no-retries --plot -j 2 --quiet --out "$tmp/search"
  d="$tmp/search"
  exists "$d/search.svg"
  has "$d/search.svg" "probed value (per s)"
  has "$d/report.md" "| variant | highest pass | lowest fail | outcome | probes | replications |"
  # 150/s leans pass for both; 400/s fails both; 275/s leans pass for no-retries only (seeds as
  # the search ran). With 20 replications no probe can pass at 0.95 (issue 23: the exact bound
  # of 20 of 20 is 0.83), so the probes that lean pass are undecided, and the headline says so.
  has "$d/report.md" "| no-retries | 275/s | 400/s | bracketed; 2 probe(s) undecided | 3 |"
  has "$d/report.md" "| retries | 150/s | 275/s | bracketed; 1 probe(s) undecided | 3 |"
  has "$d/report.md" "![Every probe"
  # 0 of 10: the exact upper bound at 0.025 / 2 looks, 1 - 0.0125^(1/10)
  has_re "$d/report.md" '^\| 400/s \| 10 \| 0 \| 0\.000 \| \[0\.000, 0\.355\] \| fail \|$'
  has "$d/report.html" "<img src=\"data:image/svg+xml;base64,"
  gp_fails 1 "is not a search.csv" -c plots/search.gp "$tmp/sweep/points.csv" "$tmp/x.svg"
  gnuplot -e "p=0.95" -c plots/search.gp "$d/search.csv" "$tmp/again.svg" tipping-point 2>"$tmp/gp.err"
  ok
  cmp -s "$tmp/again.svg" "$d/search.svg" || fail "search.gp drew a different search.svg"
}

test_plot_metric() {
  test_name=test_plot_metric
  # --plot-metric: any metric of points.csv against the first axis (implies --plot); an axis
  # of integers gets integer ticks (no 5.5 or 6.5), named by its readable path; the workers stay
  # above the capacity fault's 4, which a point at 4 would make a fault that changes nothing
  run run "$scn" --set search=null --reps 2 -j 2 --sweep 'services.api.workers=5,6,7,8' \
    --variant no-retries --variant retries --plot-metric amplification.api \
    --plot-metric 'services.api.utilization' --quiet --out "$tmp/pm"
  d="$tmp/pm"
  for f in sweep-metric-amplification.api sweep-metric-services.api.utilization sweep-goodput; do
    exists "$d/$f.svg"
    valid_svg "$d/$f.svg"
    has "$d/report.md" "($f.svg)"
  done
  has "$d/sweep-metric-amplification.api.svg" "amplification.api against api: workers"
  has "$d/sweep-metric-amplification.api.svg" ">api: workers</text>"
  for tick in 5 6 7 8; do has "$d/sweep-metric-amplification.api.svg" ">$tick</text>"; done
  lacks "$d/sweep-metric-amplification.api.svg" ">5.5</text>"
  lacks "$d/sweep-metric-amplification.api.svg" ">6.5</text>"
  # a metric that points.csv lacks, or a study without a sweep: bad input, named
  run_rc 2 run "$scn" --set search=null --reps 2 --sweep 'services.api.workers=5,6' \
    --variant no-retries --plot-metric amplification.nope --quiet --out "$tmp/pm2"
  has "$tmp/err" "--plot-metric amplification.nope: points.csv has no such metric"
  run_rc 2 run "$scn" --set search=null --reps 2 --variant no-retries \
    --plot-metric amplification.api --quiet --out "$tmp/pm3"
  has "$tmp/err" "this study has no sweep"
  run_rc 2 run "$scn" --set search=null --reps 2 --plot-metric amplification.api
  has "$tmp/err" "--plot-metric needs --out DIR"
}

test_real_axis_values() {
  test_name=test_real_axis_values
  # a number on an axis is written as given (0.8), not as the 17 digits of its double
  run run "$scn" --set search=null --reps 2 --sweep 'recovery.threshold=0.8,0.9' \
    --variant no-retries --plot --quiet --out "$tmp/real"
  has "$tmp/real/report.md" "- axis \`recovery.threshold\`: 0.8, 0.9"
  has_re "$tmp/real/report.md" '^\| 0\.9 \| no-retries \| 2 \|'
  lacks "$tmp/real/report.md" "0.90000000"
}

test_replications_report
test_series_picture
test_baseline_marks_differences
test_sweep_pictures
test_plot_scripts_refuse_bad_input
test_search_report
test_real_axis_values
test_plot_metric

t_done
