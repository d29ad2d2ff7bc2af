#!/bin/sh
# The world's fast paths skip work, never change what happens: every experiment and every test
# scenario is run twice, with the fast paths on and with every one forced off
# (RETRYSIM_NO_FAST_PATHS=1: models/model_feature.c), and the two output folders must be
# byte-identical, file for file. A feature missing from the table of features (a fast path
# that silently skips it) shows here as a difference. Runs are cut to FASTPATH_DURATION
# (default 2s) where the scenario allows it (one whose times need its own duration keeps it);
# a scenario's search is left out (--set search=null): it only repeats the world's runs.
# Usage: BUILD=build sh tools/test/test-fastpath.sh [SCENARIO.json ...]
set -u
bin="${BUILD:-build}/retrysim"
cap=${FASTPATH_DURATION:-2s}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
cases=0
[ $# -gt 0 ] || set -- experiments/*.json tests/data/scenarios/valid/*/scenario.json \
  tests/golden/*/scenario.json bench/*.json
# run OUT FAST ARGS...: one run into OUT, fast paths on (FAST=0) or forced off (FAST=1).
run() {
  out=$1 fast=$2
  shift 2
  rm -rf "$out"
  RETRYSIM_NO_FAST_PATHS=$fast "$bin" run "$file" "$@" --quiet --out "$out" >"$out.log" 2>&1
}
for file in "$@"; do
  name=$(printf '%s' "$file" | tr '/' '_')
  cases=$((cases + 1))
  nosearch=""
  python3 -c 'import json,sys; sys.exit(0 if "search" in json.load(open(sys.argv[1])) else 1)' "$file" >/dev/null 2>&1 && nosearch="--set search=null"
  # The cut duration first; the scenario's own when its times need it.
  # shellcheck disable=SC2086
  if run "$tmp/$name.on" 0 $nosearch --duration "$cap"; then
    dur="--duration $cap"
  elif run "$tmp/$name.on" 0 $nosearch; then
    dur=""
  else
    echo "test-fastpath: $file: retrysim failed"; cat "$tmp/$name.on.log"; fails=$((fails + 1))
    continue
  fi
  # shellcheck disable=SC2086
  if ! run "$tmp/$name.off" 1 $nosearch $dur; then
    echo "test-fastpath: $file: retrysim failed with the fast paths off"
    cat "$tmp/$name.off.log"; fails=$((fails + 1))
  elif ! diff -r "$tmp/$name.on" "$tmp/$name.off" >"$tmp/$name.diff" 2>&1; then
    echo "test-fastpath: $file: the outputs differ with the fast paths forced off"
    head -n 20 "$tmp/$name.diff"; fails=$((fails + 1))
  elif [ -z "$(ls "$tmp/$name.on")" ]; then
    echo "test-fastpath: $file: the run wrote nothing to compare"; fails=$((fails + 1))
  fi
done
if [ "$fails" -ne 0 ]; then
  echo "test-fastpath: $fails of $cases scenarios differ or failed"
  exit 1
fi
echo "test-fastpath: $cases scenarios, every output byte-identical with the fast paths forced off"
