#!/bin/sh
# Checks what `retrysim run` shows of the edges and of the report (docs/cli.md, "The text
# summary" and "Pictures and report.md"): the worst internal edge in the variants table,
# --edges, the three names of amplification, report.md speaking of internal edges with the
# worst edge's picture, report.html standing alone, the plots drawing an edge by name, OK
# latency, and issue 24's hit ratio, on_failure firings and work factor. The scenario is tests/data/report/edges.json: api fans out to cache (answers) and
# db (fails every request); "retries" retries db 3 times, "no-retries" does not.
# Usage: BUILD=build sh tools/test/test-report.sh
set -u
. "$(dirname "$0")/lib.sh"
need_bin
scn=tests/data/report/edges.json
t_tmp

test_table_shows_worst_internal_edge() {
  test_name=test_table_shows_worst_internal_edge
  run run "$scn"
  # The header names the group on its first line and the column on its second.
  has_re "$tmp/out" '^ +front-door +max .* worst +edge +edge$'
  has_re "$tmp/out" '^variant .* attempts/call +load x .* top stop +internal edge +attempts/call +ok %$'
  # retries: db's edge made 3 attempts per call, none ended OK; the cache edge made 1.
  has_re "$tmp/out" '^retries .* api->db +3\.000 +0\.00$'
  # no-retries: both internal edges make 1 attempt per call; the tie goes to the lower ok %
  # (db 0 %, cache 100 %), although the cache edge comes first in the document.
  has_re "$tmp/out" '^no-retries .* api->db +1\.000 +0\.00$'
  lacks "$tmp/out" "api->cache"
  # Without an internal edge in any run the three columns are left out; a run without one
  # among runs with one shows "-".
  cat >"$tmp/flat.json" <<'JSON'
{"name": "flat", "seed": 1, "duration": "2s",
 "services": {"api": {"replicas": 1, "workers": 4, "service_time": "1ms"},
              "db": {"replicas": 1, "workers": 4, "service_time": "1ms"}},
 "clients": {"web": {"target": "api", "arrival": {"kind": "script", "at": ["0s"]},
                     "methods": ["/a.v1.Api/Get"]}},
 "variants": [{"name": "one"}, {"name": "two"}]}
JSON
  run run "$tmp/flat.json"
  lacks "$tmp/out" "internal edge"
  lacks "$tmp/out" "worst"
  sed 's|{"name": "two"}|{"name": "two", "set": {"services.api.calls": [{"service": "db", "method": "/d.v1.Db/Get"}]}}|' \
    "$tmp/flat.json" >"$tmp/half.json"
  run run "$tmp/half.json"
  has_re "$tmp/out" '^one .* -  +-  +-$'
  has_re "$tmp/out" '^two .* api->db +1\.000 +100\.00$'
}

test_edges_flag_lists_every_edge() {
  test_name=test_edges_flag_lists_every_edge
  run run "$scn"
  lacks "$tmp/out" "edges (attempts/call"
  run run "$scn" --edges
  has "$tmp/out" "edges (attempts/call: attempts made on the edge per call made on it)"
  has_re "$tmp/out" '^variant +edge +calls +attempts +attempts/call +worst case +max_attempts +ok % +p99 ms +top stop$'
  # Every edge of every variant: calls, attempts, attempts/call, worst case, max_attempts,
  # ok %, p99 and the top stop reason.
  has_re "$tmp/out" '^retries +web->api +5 +5 +1\.000 +1x +1 +0\.00 +[0-9.]+ +no_retry_policy 5$'
  has_re "$tmp/out" '^retries +api->cache +5 +5 +1\.000 +1x +1 +100\.00 +[0-9.]+ +-$'
  has_re "$tmp/out" '^retries +api->db +5 +15 +3\.000 +3x +3 +0\.00 +[0-9.]+ +max_attempts 5$'
  has_re "$tmp/out" '^no-retries +api->db +5 +5 +1\.000 +1x +1 +0\.00 +[0-9.]+ +no_retry_policy 5$'
  ok
  n=$(grep -cE '^(retries|no-retries) +[a-z]+->[a-z]+ ' "$tmp/out")
  [ "$n" -eq 6 ] || fail "--edges lists $n edge rows, want 6 (3 edges x 2 variants)"
  # One run: the block lists every edge without the flag.
  run run "$scn" --set variants=null
  has_re "$tmp/out" '^  api->db +5 +15 +3\.000 +3x +3 +0\.00 +[0-9.]+ +max_attempts 5$'
  has_re "$tmp/out" '^  api->cache +5 +5 +1\.000 +1x +1 +100\.00 '
  # --edges is a flag of run, refused by validate, and takes no value.
  ok
  "$bin" validate "$scn" --edges >/dev/null 2>&1 && fail "validate accepted --edges"
  ok
  "$bin" run "$scn" --edges=1 >/dev/null 2>&1 && fail "--edges=1 was accepted"
}

test_amplification_has_three_names() {
  test_name=test_amplification_has_three_names
  run run "$scn" --set variants=null
  has "$tmp/out" "load x (arrivals at each service, retries included, per top-level call)"
  has_re "$tmp/out" '^  db +3x$'
  lacks "$tmp/out" "amplification"
  run run "$scn"
  lacks "$tmp/out" "amp"
  has "$tmp/out" "front-door"
  has "$tmp/out" "load x"
}

test_report_speaks_of_internal_edge() {
  test_name=test_report_speaks_of_internal_edge
  run run "$scn" --quiet --plot --out "$tmp/plot"
  r="$tmp/plot/report.md"
  has "$r" "- The api->db edge made 3.000 attempts per call under retries (0.00 % of its calls ok) and 1.000 under no-retries (0.00 %)."
  # The cache edge carried no retry: "In short" leaves it out.
  lacks "$r" "The api->cache edge made"
  has "$r" "| retries | 5 | 0.00 | 0 | 1.000 |"
  has "$r" "| api->db | 3.000 | 0.00 |"
  has "$r" "| retries | api->db | 5 | 15 | 3.000 | 3x | 0.00 |"
  has "$r" "- The api->db edge: 5 calls made 15 attempts (3 per call: 10 retries, 0 hedges); 0.00 % ended OK"
  has "$r" "| variant | api | cache | db |"
  has "$r" "| retries | 1x | 1x | 3x |"
  has "$r" "front-door attempts/call"
  has "$r" "*load x*"
  # The worst edge's picture, drawn by name and linked.
  has "$r" "## The worst internal edge: api->db"
  has "$r" "](edge-api-db.svg)"
  ok
  [ -s "$tmp/plot/edge-api-db.svg" ] || fail "no edge-api-db.svg"
  has "$tmp/plot/edge-api-db.svg" "attempts/s on the edge"
  has "$tmp/plot/edge-api-db.svg" "no-retries"
  # One run: its paragraph names the edge, and the edge's picture is the one-run layout.
  run run "$scn" --quiet --plot --out "$tmp/one" --set variants=null
  has "$tmp/one/report.md" "- The api->db edge: 5 calls made 15 attempts (3 per call: 10 retries, 0 hedges)"
  has "$tmp/one/report.md" "](edge-api-db.svg)"
  has "$tmp/one/edge-api-db.svg" "requests/s on the edge"
  # Without an internal edge: no worst-edge columns, no edge picture.
  run run "$tmp/flat.json" --quiet --plot --out "$tmp/flat"
  lacks "$tmp/flat/report.md" "worst internal edge"
  has "$tmp/flat/report.md" "| one | web->api | 1 | 1 | 1.000 | 1x | 100.00 |"
  ok
  ls "$tmp/flat" | grep -q '^edge-' && fail "an edge picture without an internal edge"
}

test_report_html_self_contained() {
  test_name=test_report_html_self_contained
  h="$tmp/plot/report.html"
  ok
  [ -s "$h" ] || { fail "no report.html beside report.md"; return; }
  ok
  [ "$(head -n 1 "$h")" = "<!DOCTYPE html>" ] || fail "report.html does not start with <!DOCTYPE html>"
  has "$h" '<html lang="en">'
  has "$h" '<meta charset="utf-8">'
  has "$h" "</html>"
  # No external asset: no script, no stylesheet link, every picture a data: URI.
  lacks "$h" "<script"
  lacks "$h" "<link"
  lacks "$h" "http://"
  lacks "$h" "https://"
  ok
  imgs=$(grep -o '<img src="[^"]*"' "$h" | wc -l)
  data=$(grep -o '<img src="data:image/svg+xml;base64,[A-Za-z0-9+/=]*"' "$h" | wc -l)
  md=$(grep -c '^!\[' "$tmp/plot/report.md")
  [ "$imgs" -gt 0 ] && [ "$imgs" -eq "$data" ] && [ "$imgs" -eq "$md" ] ||
    fail "report.html has $imgs pictures, $data of them data: URIs; report.md has $md"
  # The inlined picture is the SVG file, byte for byte.
  ok
  grep -o '<img src="data:image/svg+xml;base64,[^"]*" alt="Front-door' "$h" |
    sed -e 's/^<img src="data:image\/svg+xml;base64,//' -e 's/" alt=.*//' | base64 -d >"$tmp/variants.svg"
  cmp -s "$tmp/variants.svg" "$tmp/plot/variants.svg" || fail "the inlined variants picture is not variants.svg"
  # Text is escaped: the scenario's description holds markup and quotes.
  has "$h" "&lt;b&gt;escaped&lt;/b&gt; &amp; &quot;quoted&quot;"
  lacks "$h" "<b>escaped"
  has "$h" "<th>worst internal edge</th>"
  has "$h" "<td>api-&gt;db</td>"
  has "$h" "<li>The api-&gt;db edge made 3.000 attempts per call under retries"
  # Every element opened is closed (a cheap check of the structure).
  for tag in ul li table tr td th p h2 h3 figure code em strong; do
    ok
    o=$(grep -o "<$tag[ >]" "$h" | wc -l)
    c=$(grep -o "</$tag>" "$h" | wc -l)
    [ "$o" -eq "$c" ] || fail "report.html opens <$tag> $o times and closes it $c times"
  done
  # The same run gives the same page (the command line names its own directory).
  run run "$scn" --quiet --plot --out "$tmp/plot2"
  ok
  sed 's/plot2/plot/' "$tmp/plot2/report.html" | cmp -s - "$h" || fail "report.html differs on a rerun"
  # Without pictures (gnuplot missing), report.html is still written, with none.
  PATH=/nonexistent "$bin" run "$scn" --quiet --plot --out "$tmp/nopic" >/dev/null 2>&1
  ok
  [ -s "$tmp/nopic/report.html" ] && ! grep -q "<img" "$tmp/nopic/report.html" ||
    fail "without gnuplot, report.html should be written without pictures"
}

test_plots_draw_edge_by_name() {
  test_name=test_plots_draw_edge_by_name
  gnuplot -e "edge='api->db'" -c plots/edge.gp "$tmp/plot/timeseries.csv" "$tmp/e.svg" >"$tmp/gp" 2>&1 ||
    { fail "edge.gp failed on the long file"; cat "$tmp/gp"; }
  has "$tmp/e.svg" "retries/s on the edge"
  lacks "$tmp/e.svg" "no api->db_attempt_rps values"
  # One run's wide file: the rates in one panel.
  gnuplot -e "edge='api->db'" -c plots/edge.gp "$tmp/plot/timeseries-retries.csv" "$tmp/w.svg" >"$tmp/gp" 2>&1 ||
    { fail "edge.gp failed on the wide file"; cat "$tmp/gp"; }
  has "$tmp/w.svg" "requests/s on the edge"
  lacks "$tmp/w.svg" "no values for the edge"
  # An edge the file does not have is drawn empty and says so; no edge is a usage error.
  gnuplot -e "edge='api->nowhere'" -c plots/edge.gp "$tmp/plot/timeseries-retries.csv" "$tmp/n.svg" >/dev/null 2>&1
  has "$tmp/n.svg" "no values for the edge api->nowhere"
  ok
  gnuplot -c plots/edge.gp "$tmp/plot/timeseries.csv" "$tmp/x.svg" >"$tmp/gp" 2>&1
  [ $? -eq 2 ] || fail "edge.gp without an edge should exit 2"
  has "$tmp/gp" "which edge?"
  ok
  gnuplot -e "edge='api'" -c plots/edge.gp "$tmp/plot/timeseries.csv" "$tmp/x.svg" >/dev/null 2>&1
  [ $? -eq 2 ] || fail "edge.gp with an edge that is not FROM->TO should exit 2"
}

test_plots_show_ok_latency() {
  test_name=test_plots_show_ok_latency
  # The time series picture draws OK latency, and the failed calls' apart: db fails every
  # call in the scenario, so the OK lines come from a run without its fault.
  has "$tmp/plot/timeseries-retries.svg" "p99 failed (dashed)"
  run run "$scn" --quiet --plot --out "$tmp/ok" --set services.db.faults=null
  has "$tmp/ok/timeseries-retries.svg" "p99 OK"
  lacks "$tmp/ok/timeseries-retries.svg" ">p99<"
  # A file without the OK columns falls back to every finished call's latency.
  cut -d, -f1-10 "$tmp/plot/timeseries-retries.csv" >"$tmp/old.csv"
  gnuplot -c plots/timeseries.gp "$tmp/old.csv" "$tmp/old.svg" >/dev/null 2>&1 || fail "timeseries.gp failed on an old file"
  lacks "$tmp/old.svg" "p99 OK"
  has "$tmp/old.svg" ">p99<"
}

# Issue 24's columns are drawn, each where a reader looks for it: a cache's hit ratio on a 0..1
# panel, an on_failure's firings per second among the rates (dash-dotted), a growing work's
# factor as a multiplier on its own panel; the report's caption names them. A run without them
# keeps the picture it had: none of the three, and its 1200 x 800 size.
test_plots_draw_cache_fallback_work() {
  test_name=test_plots_draw_cache_fallback_work
  run run tests/data/scenarios/valid/cache-basic/scenario.json --quiet --plot --out "$tmp/cache"
  has "$tmp/cache/timeseries.svg" ">db cache hit ratio<"
  has "$tmp/cache/timeseries.svg" ">cache hit ratio<"
  has "$tmp/cache/timeseries.svg" ">0.75<"
  has "$tmp/cache/report.md" "shared retry state; cache hit ratio](timeseries.svg)"
  run run tests/data/scenarios/valid/client-fallback/scenario.json --quiet --plot --out "$tmp/fb"
  has "$tmp/fb/timeseries.svg" ">web on_failure firings (dash-dot)<"
  has "$tmp/fb/timeseries.svg" ">batch on_failure firings (dash-dot)<"
  has "$tmp/fb/report.md" "shared retry state; on_failure firings](timeseries.svg)"
  # api's requests grow from 1x to 3x their service time over 2 s, then stay there.
  cat >"$tmp/work.json" <<'JSON'
{"name": "work-grows", "seed": 1, "duration": "4s",
 "services": {"api": {"replicas": 1, "workers": 4, "service_time": "1ms",
                      "work": {"size": [["0s", 1], ["2s", 3]]}}},
 "clients": {"web": {"target": "api", "arrival": {"kind": "open", "rate": "50/s"},
                     "methods": ["/a.v1.Api/Get"]}}}
JSON
  run run "$tmp/work.json" --quiet --plot --out "$tmp/work"
  has "$tmp/work/timeseries.svg" ">api work factor<"
  has "$tmp/work/timeseries.svg" ">service time (x normal)<"
  has "$tmp/work/timeseries.svg" ">3x<"
  has "$tmp/work/report.md" "shared retry state; work factor](timeseries.svg)"
  for t in "hit ratio" "on_failure" "work factor" "x normal"; do
    lacks "$tmp/plot/timeseries-retries.svg" "$t"
    lacks "$tmp/plot/report.md" "$t"
  done
  has "$tmp/plot/timeseries-retries.svg" 'viewBox="0 0 1200 800"'
  has "$tmp/plot/report.md" "retries over time: load, queues, latency, shared retry state](timeseries-retries.svg)"
}

# docs/cli.md shows the text summary of tests/data/report/edges.json: its examples are this
# program's output, byte for byte.
test_expt_md_examples_are_real_output() {
  test_name=test_expt_md_examples_are_real_output
  run run "$scn" --set variants=null
  awk '/^```$/ { if (on) exit; next } /^scenario      report-edges / { on = 1 } on' docs/cli.md >"$tmp/doc1"
  ok
  cmp -s "$tmp/doc1" "$tmp/out" || { fail "docs/cli.md's single-run example differs from the output:"; diff "$tmp/doc1" "$tmp/out" | head -n 10; }
  run run "$scn" --edges
  awk '/^```$/ { if (on) exit; next } /^ +front-door +max/ { on = 1 } on' docs/cli.md >"$tmp/doc2"
  sed -n '3,6p' "$tmp/out" >"$tmp/out2"
  ok
  cmp -s "$tmp/doc2" "$tmp/out2" || { fail "docs/cli.md's variants example differs from the output:"; diff "$tmp/doc2" "$tmp/out2" | head -n 10; }
  # (the block that starts with the title, not the single-run one that holds it too)
  awk 'on && /^```$/ { exit } prev == "```" && /^edges \(attempts\/call/ { on = 1 }
       on && !/^\.\.\.$/ { print } { prev = $0 }' docs/cli.md >"$tmp/doc3"
  sed -n '/^edges (attempts/,$p' "$tmp/out" | head -n "$(wc -l <"$tmp/doc3")" >"$tmp/out3"
  ok
  cmp -s "$tmp/doc3" "$tmp/out3" || { fail "docs/cli.md's --edges example differs from the output:"; diff "$tmp/doc3" "$tmp/out3" | head -n 10; }
}

# The issue's scenario (tests/data/scenarios/valid/internal-edge): checkout (3 x 8 workers)
# calls payments, which slows down 5x for 20 s, under four policies on that edge. The table and
# the report must show the edge's figures, which differ by policy although the front door's
# attempts/call is 1 in every variant.
test_internal_edge_scenario_shows_the_edge() {
  test_name=test_internal_edge_scenario_shows_the_edge
  ie=tests/data/scenarios/valid/internal-edge/scenario.json
  [ -f "$ie" ] || { fail "$ie is missing"; return; }
  run run "$ie"
  # Every variant's row ends with the edge, its attempts/call, its ok % and the recovery.
  awk '/ checkout->payments / { for (i = 1; i <= NF; i++) if ($i == "checkout->payments") print $1, $(i + 1), $(i + 2) }' \
    "$tmp/out" >"$tmp/ie"
  ok
  [ "$(wc -l <"$tmp/ie")" -eq 4 ] || { fail "want 4 variants with checkout->payments, got:"; cat "$tmp/ie"; }
  # retries makes more attempts per call on the edge than retryThrottling, and more than 1.
  ok
  awk '$1 == "retries" { r = $2 } $1 == "throttled" { t = $2 } END { exit !(r > 1.01 && r > t) }' "$tmp/ie" ||
    { fail "the edge's attempts/call does not tell the policies apart:"; cat "$tmp/ie"; }
  # The front door is 1.000 for all four: the retries are all on the internal edge.
  ok
  [ "$(grep -cE '^(none|retries|throttled|finagle) .* 1\.000 +[0-9.]+ [a-z]+ ' "$tmp/out")" -eq 4 ] ||
    fail "the front-door attempts/call should be 1.000 in every variant"
  if command -v gnuplot >/dev/null 2>&1; then
    run run "$ie" --quiet --plot --out "$tmp/ie-plot"
    has_re "$tmp/ie-plot/report.md" '^- The checkout->payments edge made 1\.[0-9]{3} attempts per call under none \(100\.00 % of its calls ok\), 1\.0[1-9][0-9] under retries'
    has "$tmp/ie-plot/report.md" "## The worst internal edge: checkout->payments"
    has "$tmp/ie-plot/edge-checkout-payments.svg" "throttled"
  fi
}

# Every concurrency limit gets its line in limits.svg, labelled by where it applies: two
# client edges with a limiter (no internal edge at all, so the worst-edge picture, the only
# place a limit was drawn before, has nothing) and a service's adaptive concurrency filter;
# with variants, a panel per limit. A run without any limit has neither picture nor section.
test_report_draws_every_limit() {
  test_name=test_report_draws_every_limit
  cat >"$tmp/limits.json" <<'JSON'
{"name": "limits", "seed": 1, "duration": "5s",
 "services": {"api": {"replicas": 2, "workers": 8, "service_time": "5ms",
                      "adaptive_concurrency": {"update_interval": "100ms", "min_rtt_interval": "2s"}}},
 "clients": {"web": {"target": "api", "arrival": {"kind": "open", "rate": "200/s"}, "methods": ["/a.v1.Api/Get"],
                     "policy": {"retrysim": {"concurrencyLimit": {"type": "aimd", "initialLimit": 4}}}},
             "app": {"target": "api", "arrival": {"kind": "open", "rate": "100/s"}, "methods": ["/a.v1.Api/Get"],
                     "policy": {"retrysim": {"concurrencyLimit": {"type": "vegas"}}}}}}
JSON
  run run "$tmp/limits.json" --quiet --plot --out "$tmp/lim"
  has "$tmp/lim/limits.svg" "web->api limit"
  has "$tmp/lim/limits.svg" "app->api limit"
  has "$tmp/lim/limits.svg" "web->api permits held"
  has "$tmp/lim/limits.svg" "api adaptive limit (replicas summed)"
  has "$tmp/lim/report.md" "## Concurrency limits"
  has "$tmp/lim/report.md" "(api, web->api, app->api)"
  has "$tmp/lim/report.md" "](limits.svg)"
  has "$tmp/lim/report.html" "<h2>Concurrency limits</h2>"
  # The same run draws the same picture.
  run run "$tmp/limits.json" --quiet --plot --out "$tmp/lim2"
  ok
  cmp -s "$tmp/lim/limits.svg" "$tmp/lim2/limits.svg" || fail "limits.svg differs on a rerun"
  # Variants: web's limiter in one variant only: a panel per limit, lines for the variants
  # that have it.
  run run "$tmp/limits.json" --quiet --plot --out "$tmp/limv" \
    --set 'variants=[{"name":"with"},{"name":"without","set":{"clients.web.policy":null}}]'
  has "$tmp/limv/limits.svg" "web->api"
  has "$tmp/limv/limits.svg" "limit, calls"
  has "$tmp/limv/report.md" "a panel each, one line per variant that has it"
  # No limit anywhere: no picture, no section (the edges scenario drawn above).
  ok
  [ ! -e "$tmp/plot/limits.svg" ] || fail "a run without a concurrency limit should draw no limits.svg"
  lacks "$tmp/plot/report.md" "Concurrency limits"
  # The script on a file without a limit column says so and fails.
  ok
  gnuplot -c plots/limits.gp "$tmp/plot/timeseries.csv" "$tmp/x.svg" >"$tmp/gp" 2>&1
  [ $? -eq 1 ] || fail "limits.gp without a limit column should exit 1"
  has "$tmp/gp" "no concurrency limit column"
}

# The fault band of the variants' pictures shades the faults every variant shares (the trigger),
# not a fault one variant adds; a variant identical to an earlier one says so in the legend.
test_fault_band_is_the_shared_trigger() {
  test_name=test_fault_band_is_the_shared_trigger
  cat >"$tmp/band.json" <<'EOF'
{
  "name": "band", "seed": 3, "duration": "20s",
  "services": {
    "api": {"replicas": 1, "workers": 4, "service_time": {"dist": "exponential", "mean": "20ms"},
            "faults": [{"kind": "down", "start": "5s", "end": "8s"}]}
  },
  "clients": {
    "web": {"target": "api", "arrival": {"kind": "open", "rate": "100/s"}, "methods": [{"name": "/p.A/G"}]}
  },
  "variants": [
    {"name": "plain"},
    {"name": "twin"},
    {"name": "extra", "set": {"services.api.faults[1]": {"kind": "down", "start": "12s", "end": "14s"}}}
  ]
}
EOF
  run run "$tmp/band.json" --plot -q --out "$tmp/band"
  ok
  got=$(awk -v mode=shared -f plots/faults.awk "$tmp/band/timeseries.csv")
  [ "$got" = " 5 8" ] || fail "the shared fault windows are '$got', want ' 5 8' (not extra's 12-14)"
  ok
  got=$(awk -v mode=same -f plots/faults.awk "$tmp/band/timeseries.csv" | tr '\n' ' ')
  [ "$got" = "- plain - " ] || fail "identical variants: '$got', want '- plain - '"
  has "$tmp/band/compare.svg" "twin (= plain)"
  has "$tmp/band/compare.svg" "fault in every variant"
  lacks "$tmp/band/compare.svg" "extra (="
  test_name=""
}

# With a trigger the recovery rule names (10-13 s), that window is shaded instead of the faults
# the variants share (5-8 s): the band starts further right, and the legend says whose it is. A
# trigger given to the scripts that is not "START END" is refused.
test_fault_band_is_the_named_trigger() {
  test_name=test_fault_band_is_the_named_trigger
  sed 's|"duration": "20s",|"duration": "20s", "recovery": {"trigger": {"start": "10s", "end": "13s"}},|' \
    "$tmp/band.json" >"$tmp/named.json"
  run run "$tmp/named.json" --plot -q --out "$tmp/named"
  has "$tmp/named/compare.svg" "trigger (recovery rule)"
  lacks "$tmp/named/compare.svg" "fault in every variant"
  ok
  x_fault=$(grep -m 1 "fill = 'rgb(255, 214, 214)' points" "$tmp/band/compare.svg" | sed "s/.*points = '\([0-9.]*\),.*/\1/")
  x_named=$(grep -m 1 "fill = 'rgb(255, 214, 214)' points" "$tmp/named/compare.svg" | sed "s/.*points = '\([0-9.]*\),.*/\1/")
  awk -v a="$x_fault" -v b="$x_named" 'BEGIN { exit !(a != "" && b != "" && b > a + 100) }' ||
    fail "the named trigger's band starts at x=$x_named, the faults' at x=$x_fault: not 10 s against 5 s"
  for gp in compare edge limits; do
    ok
    gnuplot -e "edge='a->b'; trigger='13 10'" -c plots/$gp.gp "$tmp/named/timeseries.csv" "$tmp/x.svg" >"$tmp/gp" 2>&1
    [ $? -eq 2 ] || fail "$gp.gp with trigger '13 10' should exit 2"
    has "$tmp/gp" "trigger must be 'START END' in seconds"
  done
  test_name=""
}

test_table_shows_worst_internal_edge
test_edges_flag_lists_every_edge
test_expt_md_examples_are_real_output
test_internal_edge_scenario_shows_the_edge
test_amplification_has_three_names
if command -v gnuplot >/dev/null 2>&1; then
  test_report_speaks_of_internal_edge
  test_report_html_self_contained
  test_plots_draw_edge_by_name
  test_plots_show_ok_latency
  test_plots_draw_cache_fallback_work
  test_report_draws_every_limit
  test_fault_band_is_the_shared_trigger
  test_fault_band_is_the_named_trigger
else
  echo "test-report: gnuplot missing: the report and plot tests need it (make deps-plot)"
  fails=$((fails + 1))
fi
t_done
echo "test-report: all $checks checks passed"
