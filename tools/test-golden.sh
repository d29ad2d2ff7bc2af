#!/bin/sh
# Runs every deterministic scenario tests/golden/<case>/scenario.json and compares each output
# file with the file of the same name next to it, byte for byte. GOLDEN_UPDATE=1 (make
# golden-update) rewrites the expected files instead. Usage: BUILD=build sh tools/test-golden.sh
set -u
bin="${BUILD:-build}/retrysim"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
for dir in tests/golden/*/; do
  name=$(basename "$dir")
  out="$tmp/$name"
  if ! "$bin" run "$dir/scenario.json" --quiet --out "$out" >"$tmp/log" 2>&1; then
    echo "test-golden: $name: retrysim failed"; cat "$tmp/log"; fails=$((fails + 1)); continue
  fi
  for f in "$out"/*; do
    base=$(basename "$f")
    if [ "${GOLDEN_UPDATE:-}" = 1 ]; then
      cp "$f" "$dir/$base"
    elif ! cmp -s "$f" "$dir/$base"; then
      echo "test-golden: $name/$base differs from the golden file:"
      diff -u "$dir/$base" "$f" | head -n 20
      fails=$((fails + 1))
    fi
  done
done
[ "${GOLDEN_UPDATE:-}" = 1 ] && echo "test-golden: golden files rewritten"
[ "$fails" -eq 0 ] || exit 1
echo "test-golden: all outputs match"
