#!/bin/sh
# Runs every deterministic scenario GOLDEN/<case>/scenario.json (GOLDEN defaults to
# tests/golden) and compares its output folder with the case's folder both ways, byte for
# byte: every file the run writes must have a golden file of the same name with the same
# bytes, and every golden file must still be written. Golden files are the names a run writes
# (summary.json, *.csv, *.svg, report.md, report.html); anything else in a case's folder
# (scenario.json, a policy file it reads) is an input and left alone. GOLDEN_UPDATE=1
# (make golden-update) rewrites the expected files instead, removing those the run no longer
# writes. Usage: BUILD=build sh tools/test/test-golden.sh
set -u
. "$(dirname "$0")/lib.sh"
t_tmp
cases=0
golden=${GOLDEN:-tests/golden}
# Whether a file name is one a run writes (an output), as opposed to an input of the case.
is_output() {
  case "$1" in summary.json | *.csv | *.svg | report.md | report.html) return 0 ;; esac
  return 1
}
for dir in "$golden"/*/; do
  dir=${dir%/}
  if [ ! -f "$dir/scenario.json" ]; then
    echo "test-golden: $dir has no scenario.json"; fails=$((fails + 1)); continue
  fi
  name=$(basename "$dir")
  cases=$((cases + 1))
  out="$tmp/$name"
  if ! "$bin" run "$dir/scenario.json" --quiet --out "$out" >"$tmp/log" 2>&1; then
    echo "test-golden: $name: retrysim failed"; cat "$tmp/log"; fails=$((fails + 1)); continue
  fi
  # What the run wrote, against the golden files.
  for f in "$out"/*; do
    [ -e "$f" ] || continue # an empty folder leaves the pattern as it is
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
    is_output "$base" || continue
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
[ "$cases" -gt 0 ] || { echo "test-golden: no case in $golden/"; exit 1; }
[ "$fails" -eq 0 ] || exit 1
echo "test-golden: $cases cases, all outputs match both ways"
