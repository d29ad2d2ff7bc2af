#!/bin/sh
# Runs every experiment of experiments/ with --check: each must hold every value its "expect"
# blocks state (the source tables, the storm and its recoveries) and must state some. Each is
# run a second time to check that the same scenario and seed give byte-identical files.
# Usage: BUILD=build sh tools/test-experiments.sh [experiments/NAME.json ...]
set -u
bin="${BUILD:-build}/retrysim"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
[ $# -gt 0 ] || set -- experiments/*.json
for file in "$@"; do
  name=$(basename "$file" .json)
  # The summary goes nowhere; the check's count line and any failure come on stderr.
  "$bin" run "$file" --check --out "$tmp/$name" >/dev/null 2>"$tmp/$name.log"
  rc=$?
  line=$(sed -n 's/^retrysim: check: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$tmp/$name.log")
  passed=${line%% *}
  if [ "$rc" -ne 0 ]; then
    echo "test-experiments: $name: exit status $rc"; cat "$tmp/$name.log"; fails=$((fails + 1))
  elif [ -z "$line" ] || [ "$passed" -eq 0 ]; then
    echo "test-experiments: $name: states no expectation"; cat "$tmp/$name.log"
    fails=$((fails + 1))
  elif ! "$bin" run "$file" --quiet --out "$tmp/$name.again" 2>"$tmp/$name.log" ||
       ! diff -r "$tmp/$name" "$tmp/$name.again" >"$tmp/$name.diff"; then
    echo "test-experiments: $name: a second run did not give the same files"
    head -n 20 "$tmp/$name.log" "$tmp/$name.diff"; fails=$((fails + 1))
  else
    echo "test-experiments: $name: $passed expectations hold, rerun byte-identical"
  fi
done
[ "$fails" -eq 0 ] || exit 1
