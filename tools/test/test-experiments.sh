#!/bin/sh
# Runs every experiment of experiments/ with --check: each must hold every value its "expect"
# blocks state (the source tables, the storm and its recoveries) and must state some. Each is
# run a second time to check that the same scenario and seed give byte-identical files.
# A scenario with a "search" is checked twice: its plain run (--set search=null) against the
# run's expectations, then its search against the "search..." ones (each variant's boundary),
# the search too run a second time for byte-identical files.
# Usage: BUILD=build sh tools/test/test-experiments.sh [experiments/NAME.json ...]
# (a file named on the command line is run whatever its name).
set -u
. "$(dirname "$0")/lib.sh"
t_tmp
# Without arguments: every experiment but the gallery's tipping searches (experiments/*-tipping.json),
# which take minutes each and run in `make experiments` only (docs/experiments/README.md).
if [ $# -eq 0 ]; then
  for f in experiments/*.json; do
    case "$f" in *-tipping.json) ;; *) set -- "$@" "$f" ;; esac
  done
fi
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
  else
    "$bin" run "$file" --check --out "$tmp/$name.s1" >/dev/null 2>"$tmp/$name.log"
    rc=$?
    sline=$(sed -n 's/^retrysim: check: \([0-9]*\) passed, \([0-9]*\) failed (against each variant.s search.*$/\1 \2/p' "$tmp/$name.log")
    spassed=${sline%% *}
    if [ "$rc" -ne 0 ]; then
      echo "test-experiments: $name: the search's check: exit status $rc"; cat "$tmp/$name.log"
      fails=$((fails + 1))
    elif [ -z "$sline" ] || [ "$spassed" -eq 0 ]; then
      echo "test-experiments: $name: states no expectation of its search"; cat "$tmp/$name.log"
      fails=$((fails + 1))
    elif ! "$bin" run "$file" --quiet --out "$tmp/$name.s2" 2>"$tmp/$name.log" ||
         ! diff -r "$tmp/$name.s1" "$tmp/$name.s2" >"$tmp/$name.diff"; then
      echo "test-experiments: $name: a second search did not give the same files"
      head -n 20 "$tmp/$name.log" "$tmp/$name.diff"; fails=$((fails + 1))
    else
      echo "test-experiments: $name: $passed expectations hold, rerun byte-identical; the search's $spassed hold, rerun byte-identical"
    fi
  fi
done
[ "$fails" -eq 0 ] || exit 1
