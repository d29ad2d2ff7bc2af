#!/bin/sh
# Checks that libretry.a needs libc (and libm) only: no GSL anywhere, jansson only in the two
# halves of the config loader (retry_config.o, retry_config_ext.o) and the JSON helpers they
# share with the scenario loader (retry_json.o), clocks and sleeps only in the real-time driver.
set -eu
lib=${1:-${BUILD:-build}/libretry.a}
[ -f "$lib" ] || { echo "check-deps: $lib not built" >&2; exit 1; }
bad=0
und=$(mktemp)
trap 'rm -f "$und"' EXIT
nm -A "$lib" 2>/dev/null | awk '$2 == "U" || $(NF-1) == "U" {print}' > "$und" || true
if grep -q 'gsl_' "$und"; then echo "check-deps: libretry references GSL:"; grep 'gsl_' "$und"; bad=1; fi
# nm -A prints "lib.a:member.o: U sym"; the member name must match exactly, colons included.
json_ok=':(retry_config|retry_config_ext|retry_json)\.o:'
if grep 'json_' "$und" | grep -Ev "$json_ok" | grep -q .; then
  echo "check-deps: jansson referenced outside retry_config.o, retry_config_ext.o and retry_json.o:"
  grep 'json_' "$und" | grep -Ev "$json_ok"; bad=1
fi
if grep -E 'clock_gettime|nanosleep|[^a-z_]rand$|[^a-z_]random$|[^a-z_]time$' "$und" | grep -v 'retry_realtime.o' | grep -q .; then
  echo "check-deps: a clock, sleep or rand outside retry_realtime.o:"
  grep -E 'clock_gettime|nanosleep|[^a-z_]rand$|[^a-z_]random$|[^a-z_]time$' "$und" | grep -v retry_realtime.o; bad=1
fi
n=$(grep -c . "$und" || true)
[ "$bad" -eq 0 ] && echo "check-deps: libretry.a is libc-only outside its JSON loader ($n undefined references checked)"
exit "$bad"
