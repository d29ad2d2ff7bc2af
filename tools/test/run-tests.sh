#!/bin/sh
# Runs cmocka suites and check scripts; prints each suite's result and one closing line
# "N passed, N failed". Usage: run-tests.sh BIN... [-- SCRIPT...]
# RUNNER (e.g. valgrind ...) prefixes each cmocka binary. Exit status 1 if anything failed.
set -u
passed=0
failed=0
failed_names=""
scripts=0
for t in "$@"; do
  if [ "$t" = "--" ]; then scripts=1; continue; fi
  name=$(basename "$t")
  log=$(mktemp)
  if [ "$scripts" = 1 ]; then
    if sh "$t" >"$log" 2>&1; then
      passed=$((passed + 1)); echo "ok      $name"
    else
      failed=$((failed + 1)); failed_names="$failed_names $name"; echo "FAILED  $name"; cat "$log"
    fi
    rm -f "$log"; continue
  fi
  # shellcheck disable=SC2086
  ${RUNNER:-} "$t" >"$log" 2>&1
  rc=$?
  p=$(sed -n 's/.*\[  PASSED  \] \([0-9]*\) test(s)\..*/\1/p' "$log" | tail -n 1)
  f=$(sed -n 's/.*\[  FAILED  \] \([0-9]*\) test(s), listed below:.*/\1/p' "$log" | tail -n 1)
  p=${p:-0}; f=${f:-0}
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi   # crashed, leaked or aborted
  passed=$((passed + p)); failed=$((failed + f))
  if [ "$rc" -ne 0 ]; then
    failed_names="$failed_names $name"; echo "FAILED  $name ($p passed, $f failed, exit $rc)"; cat "$log"
  else
    echo "ok      $name ($p tests)"
  fi
  rm -f "$log"
done
[ -n "$failed_names" ] && echo "failed:$failed_names"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
