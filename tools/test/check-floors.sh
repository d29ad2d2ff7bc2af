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
check() {
  dir=$1 allowed=$2 forbid=$3
  [ -d "$dir" ] || return 0
  for f in "$dir"/*.c "$dir"/*.h; do
    [ -f "$f" ] || continue
    # Lines of the form: #include "x/y.h" or #include <x/y.h>, with their numbers.
    grep -n '^[[:space:]]*#[[:space:]]*include' "$f" | while IFS= read -r line; do
      n=${line%%:*}
      inc=${line#*:}
      case "$inc" in
        *'"'*)
          target=$(printf '%s' "$inc" | sed 's/^[^"]*"\([^"]*\)".*/\1/')
          floor=${target%%/*}
          # A bare name is a header of the same folder (retry/ includes its own that way, since
          # retry.h and retry_realtime.h are installed without a folder).
          [ "$floor" = "$target" ] && floor=$dir
          ok=0
          for a in $allowed; do [ "$floor" = "$a" ] && ok=1; done
          case "$target" in *..*) ok=0 ;; esac # "sim/../models/x.h" is not in sim/
          if [ "$ok" = 0 ]; then
            echo "check-floors: $f:$n: $inc ($dir/ may include only: $allowed)"
          fi
          # Inside the engine, jansson comes with the JSON loader's headers: only its files
          # may include them, or jansson would reach the engine through a quoted include.
          case "$f:${target##*/}" in
            retry/retry_config.c:* | retry/retry_config_ext.c:* | retry/retry_config_int.h:* | \
              retry/retry_json.c:* | retry/retry_json.h:*) ;;
            retry/*:retry_json.h | retry/*:retry_config_int.h)
              echo "check-floors: $f:$n: $inc (only the engine's JSON loader includes jansson's headers)" ;;
          esac ;;
        *'<'*)
          target=$(printf '%s' "$inc" | sed 's/^[^<]*<\([^>]*\)>.*/\1/')
          if [ -n "$forbid" ] && printf '%s\n' "$target" | grep -Eq "$forbid"; then
            case "$f" in
              retry/retry_config.c|retry/retry_config_ext.c|retry/retry_config_int.h|retry/retry_json.c|retry/retry_json.h)
                [ "$target" = jansson.h ] && continue ;;
            esac
            echo "check-floors: $f:$n: $inc ($dir/ may not use <$target>)"
          fi ;;
      esac
    done
  done
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
  edges=$(for f in expt/*.c expt/*.h; do
    [ -f "$f" ] || continue
    from=$(basename "$f"); from=${from%.*}; from=${from%_int}
    grep -o '^[[:space:]]*#[[:space:]]*include[[:space:]]*"expt/[a-z0-9_]*\.h"' "$f" |
      sed 's/.*"expt\/\([a-z0-9_]*\)\.h"/\1/; s/_int$//' | while read -r to; do
        [ "$to" = "$from" ] || echo "$from $to"
      done
  done)
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
