#!/bin/sh
# Runs every experiment of experiments/ with --check: each must hold every value its "expect"
# blocks state (the source tables, the storm and its recoveries) and must state some. Each is
# run a second time to check that the same scenario and seed give byte-identical files.
# A scenario with a "search" (which takes no --check) is checked without it (--set
# search=null: its plain run), then its search is run twice (byte-identical files) and must
# agree with the plain run's expectations: a variant expected to recover at the file's own
# value of the searched path fails only above it, one expected not to recover passes only
# below it.
# Usage: BUILD=build sh tools/test-experiments.sh [experiments/NAME.json ...]
set -u
bin="${BUILD:-build}/retrysim"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
[ $# -gt 0 ] || set -- experiments/*.json
for file in "$@"; do
  name=$(basename "$file" .json)
  plain=""
  jq -e 'has("search")' "$file" >/dev/null 2>&1 && plain="--set search=null"
  # The summary goes nowhere; the check's count line and any failure come on stderr.
  # shellcheck disable=SC2086
  "$bin" run "$file" $plain --check --out "$tmp/$name" >/dev/null 2>"$tmp/$name.log"
  rc=$?
  line=$(sed -n 's/^retrysim: check: \([0-9]*\) passed, \([0-9]*\) failed\( (.*)\)\{0,1\}$/\1 \2/p' "$tmp/$name.log")
  passed=${line%% *}
  if [ "$rc" -ne 0 ]; then
    echo "test-experiments: $name: exit status $rc"; cat "$tmp/$name.log"; fails=$((fails + 1))
  elif [ -z "$line" ] || [ "$passed" -eq 0 ]; then
    echo "test-experiments: $name: states no expectation"; cat "$tmp/$name.log"
    fails=$((fails + 1))
  # shellcheck disable=SC2086
  elif ! "$bin" run "$file" $plain --quiet --out "$tmp/$name.again" 2>"$tmp/$name.log" ||
       ! diff -r "$tmp/$name" "$tmp/$name.again" >"$tmp/$name.diff"; then
    echo "test-experiments: $name: a second run did not give the same files"
    head -n 20 "$tmp/$name.log" "$tmp/$name.diff"; fails=$((fails + 1))
  elif [ -z "$plain" ]; then
    echo "test-experiments: $name: $passed expectations hold, rerun byte-identical"
  elif ! "$bin" run "$file" --quiet --out "$tmp/$name.s1" 2>"$tmp/$name.log" ||
       ! "$bin" run "$file" --quiet --out "$tmp/$name.s2" 2>>"$tmp/$name.log" ||
       ! diff -r "$tmp/$name.s1" "$tmp/$name.s2" >"$tmp/$name.diff"; then
    echo "test-experiments: $name: the search failed or a second search did not give the same files"
    head -n 20 "$tmp/$name.log" "$tmp/$name.diff"; fails=$((fails + 1))
  else
    # Each variant's boundary against its plain run's "recovery.recovered" (true: the lowest
    # failing value, if any, lies above the file's value; false: the highest passing one below).
    bad=$(jq -r --slurpfile doc "$file" '
      ($doc[0]) as $d
      | ($d.search.path | gsub("\\[(?<i>[0-9]+)\\]"; ".\(.i)") | split(".")
         | map(if test("^[0-9]+$") then tonumber else . end)) as $p
      | ($d | getpath($p) | tostring | capture("^(?<n>[-+0-9.eE]+)").n | tonumber) as $at
      | .search[] | . as $s
      | ([$d.variants[] | select(.name == $s.variant) | .expect["recovery.recovered"]][0]) as $want
      | (.probes | map({key: .value, value: .x}) | from_entries) as $x
      | select(($want == true and $s.boundary.fail != null and $x[$s.boundary.fail] <= $at) or
               ($want == false and $s.boundary.pass != null and $x[$s.boundary.pass] >= $at))
      | "\($s.variant): expected to \(if $want then "recover" else "stay down" end) at \($at), but its boundary lies in [\($s.boundary.pass), \($s.boundary.fail)]"
      ' "$tmp/$name.s1/summary.json" 2>&1)
    if [ -n "$bad" ]; then
      echo "test-experiments: $name: the search disagrees with the plain run:"; echo "$bad"
      fails=$((fails + 1))
    else
      echo "test-experiments: $name: $passed expectations hold, rerun byte-identical, search byte-identical and consistent"
    fi
  fi
done
[ "$fails" -eq 0 ] || exit 1
