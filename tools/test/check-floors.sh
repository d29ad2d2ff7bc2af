#!/bin/sh
# Checks that every folder includes only the floors below it (docs/architecture.md):
#   retry/  -> retry/                      (libc; <jansson.h> only in the JSON loader's files)
#   sim/    -> sim/ retry/                 (+ GSL; no jansson, no cmocka)
#   models/ -> models/ sim/ retry/         (no jansson, no cmocka)
#   expt/   -> expt/ models/ sim/ retry/   (no cmocka)
#   cli/    -> cli/ expt/ models/ sim/ retry/  (no cmocka)
#   examples/ -> retry/                    (a real client of the engine)
#   bench/  -> anything but tests/
# Usage: tools/test/check-floors.sh [ROOT]   Prints each bad include as FILE:LINE: #include ...
# and exits 1 when there is one.
set -eu
root=${1:-.}
cd "$root"
bad=0
report() { echo "check-floors: $1:$2: $3 ($4)"; bad=1; }

# check FOLDER "ALLOWED FLOORS" "FORBIDDEN SYSTEM HEADERS (regex)"
# One awk pass over the folder's files (a process per include line made the whole check take a
# minute on a busy machine, and its test runs it a score of times).
check() {
  dir=$1 allowed=$2 forbid=$3
  [ -d "$dir" ] || return 0
  set -- "$dir"/*.c "$dir"/*.h
  files=""
  for f in "$@"; do [ -f "$f" ] && files="$files $f"; done
  [ -n "$files" ] || return 0
  # shellcheck disable=SC2086
  awk -v dir="$dir" -v allowed="$allowed" -v forbid="$forbid" '
    BEGIN { n = split(allowed, a, " "); for (i = 1; i <= n; i++) ok_floor[a[i]] = 1 }
    # The engine JSON loader files: the only ones that may include jansson or its headers.
    function loader(f) {
      return f == "retry/retry_config.c" || f == "retry/retry_config_ext.c" ||
             f == "retry/retry_config_int.h" || f == "retry/retry_json.c" || f == "retry/retry_json.h"
    }
    /^[[:space:]]*#[[:space:]]*include/ {
      f = FILENAME; inc = $0
      if (index(inc, "\"") > 0) {
        target = inc; sub(/^[^"]*"/, "", target); sub(/".*/, "", target)
        floor = target; sub(/\/.*/, "", floor)
        # A bare name is a header of the same folder (retry/ includes its own that way, since
        # retry.h and retry_realtime.h are installed without a folder).
        if (floor == target) floor = dir
        ok = (floor in ok_floor)
        if (index(target, "..") > 0) ok = 0 # "sim/../models/x.h" is not in sim/
        if (!ok) printf "check-floors: %s:%d: %s (%s/ may include only: %s)\n", f, FNR, inc, dir, allowed
        # Inside the engine, jansson comes with the JSON loader headers: only its files may
        # include them, or jansson would reach the engine through a quoted include.
        base = target; sub(/.*\//, "", base)
        if (f ~ /^retry\// && !loader(f) && (base == "retry_json.h" || base == "retry_config_int.h"))
          printf "check-floors: %s:%d: %s (only the engine\047s JSON loader includes jansson\047s headers)\n", f, FNR, inc
      } else if (index(inc, "<") > 0) {
        target = inc; sub(/^[^<]*</, "", target); sub(/>.*/, "", target)
        if (forbid != "" && target ~ forbid && !(loader(f) && target == "jansson.h"))
          printf "check-floors: %s:%d: %s (%s/ may not use <%s>)\n", f, FNR, inc, dir, target
      }
    }' $files
}

out=$(
  check retry "retry" '^(gsl/|cmocka\.h$|jansson\.h$)'
  check sim "sim retry" '^(cmocka\.h$|jansson\.h$)'
  check models "models sim retry" '^(cmocka\.h$|jansson\.h$)'
  check expt "expt models sim retry" '^cmocka\.h$'
  check cli "cli expt models sim retry" '^cmocka\.h$'
  check examples "retry" '^(gsl/|cmocka\.h$)'
  check bench "bench expt models sim retry" '^cmocka\.h$'
)
# Simulated time only: the kernel and the world never read a clock, sleep or use libc's rand
# (the program's progress line is the one wall clock, in cli/; the engine's real-time driver
# is checked on the library's symbols by tools/test/check-deps.sh).
clocks=$(grep -nE '\b(clock_gettime|gettimeofday|nanosleep|usleep|clock|time|rand|srand|random)[[:space:]]*\(' \
  sim/*.c sim/*.h models/*.c models/*.h 2>/dev/null | grep -vE ':[0-9]+:[[:space:]]*(/?\*|//)' || true)
if [ -n "$clocks" ]; then
  out="$out
$(printf '%s\n' "$clocks" | sed 's/^/check-floors: a clock or libc randomness in the kernel or the world: /')"
fi
# No include circle inside the library of experiments: a module (a file's name without its
# extension or a trailing _int, so a module's private header and the files sharing it count as
# one) includes another only one way round; studies know nothing of searches or shards. tsort
# names the modules of a circle.
if [ -d expt ]; then
  edges=$(awk '
    FNR == 1 { from = FILENAME; sub(/.*\//, "", from); sub(/\.[ch]$/, "", from); sub(/_int$/, "", from) }
    /^[[:space:]]*#[[:space:]]*include[[:space:]]*"expt\/[a-z0-9_]*\.h"/ {
      to = $0; sub(/^[^"]*"expt\//, "", to); sub(/\.h".*/, "", to); sub(/_int$/, "", to)
      if (to != from) print from, to
    }' expt/*.c expt/*.h)
  # tsort prints each circle as a line "tsort: -: input contains a loop:" and then one line
  # "tsort: MODULE" per module of it.
  loops=$(printf '%s\n' "$edges" | sed '/^$/d' | tsort 2>&1 >/dev/null | awk '
    /input contains a loop/ { if (c != "") print c; c = ""; next }
    /^tsort: / { sub(/^tsort: /, ""); c = (c == "" ? $0 : c ", " $0) }
    END { if (c != "") print c }' || true)
  if [ -n "$loops" ]; then
    out="$out
$(printf '%s\n' "$loops" | sed 's/^/check-floors: expt\/ modules that include each other in a circle: /')"
  fi
fi
if [ -n "$out" ]; then
  printf '%s\n' "$out" | sed '/^$/d'
  exit 1
fi
echo "check-floors: every include goes down a floor (retry < sim < models < expt < cli)"
