#!/bin/sh
# Proves that tools/test/check-floors.sh catches a bad include: on a copy of the source folders it
# must pass as they are, then fail, naming the file, the line and the include, for an arrow
# going up a floor (the kernel including the world, the world including the program, the
# engine including the kernel), for a quoted include of a folder that is no floor, and for a
# system header a floor may not use (jansson in the kernel, GSL in the engine), for the library
# of experiments including the command, for a wall clock in the world, and for two modules of
# the library that include each other (a circle, named by both modules).
set -eu
here=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { fails=$((fails + 1)); echo "test-check-floors: FAIL: $*"; }

fresh() {
  rm -rf "$tmp/tree"; mkdir -p "$tmp/tree"
  for d in retry sim models expt cli examples bench; do cp -R "$here/$d" "$tmp/tree/$d"; done
}

fresh
sh "$here/tools/test/check-floors.sh" "$tmp/tree" >"$tmp/out" 2>&1 || fail "the tree as it is was refused: $(cat "$tmp/out")"

# expect_bad FILE 'INCLUDE LINE' WHAT
expect_bad() {
  fresh
  # The bad include goes after the file's first line, so its line number is 2.
  sed -i "1a $2" "$tmp/tree/$1"
  if sh "$here/tools/test/check-floors.sh" "$tmp/tree" >"$tmp/out" 2>&1; then
    fail "$3: accepted"
  elif ! grep -F "$1:2:" "$tmp/out" | grep -qF "$2"; then
    fail "$3: the message does not name $1:2 and the include: $(cat "$tmp/out")"
  fi
}
expect_bad sim/sim_event.c '#include "models/model_world.h"' "the kernel including the world"
expect_bad models/model_call.c '#include "expt/expt_scenario.h"' "the world including the program"
expect_bad retry/retry_call.c '#include "sim/sim_rng.h"' "the engine including the kernel"
expect_bad expt/expt_run.c '#include "tests/support/script.h"' "the program including the tests"
expect_bad expt/expt_study.c '#include "cli/retrysim.h"' "the library including the command"
expect_bad expt/expt_scenario.h '#include "cli/cli_run.h"' "a library header including the command"
expect_bad examples/realtime_demo.c '#include "models/model_world.h"' "an example including the world"
expect_bad sim/sim_hist.h '#include <jansson.h>' "jansson in the kernel"
expect_bad retry/retry_backoff.c '#include <gsl/gsl_rng.h>' "GSL in the engine"
expect_bad retry/retry_call.c '#include <jansson.h>' "jansson in the engine outside its loader"

expect_bad retry/retry_err.c '#include "retry_json.h"' "jansson reaching the engine through the loader's header"
expect_bad sim/sim_hist.c '#include "sim/../models/model_world.h"' "a path climbing out of its floor"
expect_bad models/model_ledger.c 'static double wall(void) { return (double)time(NULL); }' \
  "a wall clock in the world"

# expect_circle FILE 'INCLUDE LINE' MODULE_A MODULE_B WHAT: a circle has no bad line of its own;
# the message must name both modules of it.
expect_circle() {
  fresh
  sed -i "1a $2" "$tmp/tree/$1"
  if sh "$here/tools/test/check-floors.sh" "$tmp/tree" >"$tmp/out" 2>&1; then
    fail "$5: accepted"
  elif ! grep -F "modules that include each other in a circle" "$tmp/out" | grep -F "$3" |
    grep -qF "$4"; then
    fail "$5: the message does not name $3 and $4: $(cat "$tmp/out")"
  fi
}
expect_circle expt/expt_study.h '#include "expt/expt_search.h"' expt_study expt_search \
  "a study including the search that uses studies"
expect_circle expt/expt_study.c '#include "expt/expt_shard.h"' expt_study expt_shard \
  "a study including the merge of shards"
expect_circle expt/expt_scenario_int.h '#include "expt/expt_scenario_path.h"' expt_scenario \
  expt_scenario_path "a module's private header closing a circle"

[ "$fails" -eq 0 ] || { echo "test-check-floors: $fails failed"; exit 1; }
echo "test-check-floors: the floors check catches each of 12 bad includes, a wall clock in the world and 3 include circles in the library"
