#!/bin/sh
# Proves that tools/test/test-golden.sh compares both ways, on a copy of one golden case: it passes
# as the case is; fails, naming the file, when a golden file is no longer written or a written
# file has no golden twin or differs by one byte; leaves a case's inputs (a policy file beside
# the scenario) alone, also when rewriting; and GOLDEN_UPDATE=1 removes a stale golden file.
set -eu
. "$(dirname "$0")/lib.sh"
here=$(pwd)
t_tmp
golden() { GOLDEN="$tmp/g" BUILD="${BUILD:-build}" sh "$here/tools/test/test-golden.sh" >"$tmp/out" 2>&1; }
fresh() { rm -rf "$tmp/g"; mkdir -p "$tmp/g"; cp -R "$here/tests/golden/layers" "$tmp/g/layers"; }

fresh
golden || fail "the case as it is: $(cat "$tmp/out")"

fresh
rm "$tmp/g/layers/variants.csv"
if golden; then fail "a written file without its golden twin passed"
elif ! grep -q 'layers/variants.csv is written but has no golden file' "$tmp/out"; then
  fail "a file without its golden twin is not named: $(cat "$tmp/out")"; fi

fresh
echo 'x' > "$tmp/g/layers/timeseries-gone.csv"
if golden; then fail "a golden file the run no longer writes passed"
elif ! grep -q 'layers/timeseries-gone.csv is a golden file the run no longer writes' "$tmp/out"; then
  fail "a golden file no longer written is not named: $(cat "$tmp/out")"; fi

fresh
printf '1' | dd of="$tmp/g/layers/summary.json" bs=1 seek=10 conv=notrunc 2>/dev/null
if golden; then fail "a one-byte difference passed"
elif ! grep -q 'layers/summary.json differs' "$tmp/out"; then
  fail "a difference is not named: $(cat "$tmp/out")"; fi

fresh
echo '{"methodConfig": []}' > "$tmp/g/layers/policy-input.json"
echo 'x' > "$tmp/g/layers/stale.csv"
golden && fail "a stale golden file passed"
GOLDEN_UPDATE=1 golden || fail "the update failed: $(cat "$tmp/out")"
[ -f "$tmp/g/layers/stale.csv" ] && fail "the update kept a golden file no longer written"
[ -f "$tmp/g/layers/policy-input.json" ] || fail "the update removed an input of the case"
golden || fail "after the update: $(cat "$tmp/out")"

[ "$fails" -eq 0 ] || { echo "test-golden-both-ways: $fails failed"; exit 1; }
echo "test-golden-both-ways: missing, extra and changed files are caught; inputs are kept"
