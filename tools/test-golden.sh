#!/bin/sh
# Runs every deterministic scenario tests/golden/<case>/scenario.json and compares its output
# folder with the case's folder both ways, byte for byte: every file the run writes must have a
# golden file of the same name with the same bytes, and every golden file (all but
# scenario.json) must still be written. GOLDEN_UPDATE=1 (make golden-update) rewrites the
# expected files instead, removing those the run no longer writes.
# Usage: BUILD=build sh tools/test-golden.sh
set -u
bin="${BUILD:-build}/retrysim"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
cases=0
for dir in tests/golden/*/; do
  dir=${dir%/}
  name=$(basename "$dir")
  cases=$((cases + 1))
  out="$tmp/$name"
  if ! "$bin" run "$dir/scenario.json" --quiet --out "$out" >"$tmp/log" 2>&1; then
    echo "test-golden: $name: retrysim failed"; cat "$tmp/log"; fails=$((fails + 1)); continue
  fi
  # What the run wrote, against the golden files.
  for f in "$out"/*; do
    base=$(basename "$f")
    if [ "${GOLDEN_UPDATE:-}" = 1 ]; then
      cp "$f" "$dir/$base"
    elif [ ! -f "$dir/$base" ]; then
      echo "test-golden: $name/$base is written but has no golden file"
      fails=$((fails + 1))
    elif ! cmp -s "$f" "$dir/$base"; then
      echo "test-golden: $name/$base differs from the golden file:"
      diff -u "$dir/$base" "$f" | head -n 20
      fails=$((fails + 1))
    fi
  done
  # The golden files, against what the run wrote: a file the program stops writing fails.
  for g in "$dir"/*; do
    base=$(basename "$g")
    [ "$base" = scenario.json ] && continue
    [ -f "$out/$base" ] && continue
    if [ "${GOLDEN_UPDATE:-}" = 1 ]; then
      rm -f "$g"; echo "test-golden: $name/$base is no longer written: removed"
    else
      echo "test-golden: $name/$base is a golden file the run no longer writes"
      fails=$((fails + 1))
    fi
  done
done
[ "${GOLDEN_UPDATE:-}" = 1 ] && echo "test-golden: golden files rewritten"
[ "$cases" -gt 0 ] || { echo "test-golden: no case in tests/golden/"; exit 1; }
[ "$fails" -eq 0 ] || exit 1
echo "test-golden: $cases cases, all outputs match both ways"
