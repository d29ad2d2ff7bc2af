#!/bin/sh
# Issue 10, defect 2: a signal while the files of --out are written leaves no NAME.tmp.PID file
# behind. SIGTERM and SIGINT end retrysim with the signal (a shell shows 143 and 130) after
# removing its temporary files; SIGXFSZ (a file over `ulimit -f`) makes the write fail with
# EFBIG, reported like any write error (exit 3), the temporary files removed too.
# Usage: BUILD=build sh tools/test/test-signals.sh
set -u
. "$(dirname "$0")/lib.sh"
need_bin
t_tmp

# A long time series: 1000 s in buckets of 1 ms is 10^6 rows (the most a scenario may ask),
# 30 MB of CSV: about 2 s of writing, long enough for a signal to land during it.
cat >"$tmp/long.json" <<'JSON'
{"name": "long-write", "duration": "1000s", "drain": "0s", "bucket": "1ms",
 "services": {"api": {"replicas": 1, "workers": 1, "service_time": "1ms"}},
 "clients": {"web": {"target": "api", "arrival": {"kind": "open", "rate": "1/s"},
                     "methods": ["/a.B/C"]}}}
JSON

# signal_during_write SIG WANT [LAUNCHER...]: starts a run, waits until a temporary file
# exists in its --out directory, sends SIG, and checks the exit status and that no temporary
# file is left.
signal_during_write() {
  sig=$1; want=$2; shift 2
  out="$tmp/out-$sig"
  ok
  "$@" "$bin" run "$tmp/long.json" --quiet --out "$out" >"$tmp/stdout" 2>"$tmp/stderr" &
  pid=$!
  n=0
  # Up to 120 s (a sanitizer build is slow), polling every 20 ms.
  while [ "$n" -lt 6000 ] && ! ls "$out" 2>/dev/null | grep -q '\.tmp\.'; do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.02
    n=$((n + 1))
  done
  if ! ls "$out" 2>/dev/null | grep -q '\.tmp\.'; then
    wait "$pid"
    fail "SIG$sig: no temporary file was ever seen in $out (the run ended first)"
    return
  fi
  kill -"$sig" "$pid"
  wait "$pid"
  rc=$?
  [ "$rc" -eq "$want" ] || fail "SIG$sig: exit status $rc, want $want"
  no_temp_files "$out" "SIG$sig"
}

signal_during_write TERM 143
# A background job of a non-interactive shell starts with SIGINT ignored, and retrysim keeps an
# ignored SIGINT ignored (as it should, for ^C on a script); perl restores the default first,
# as an interactive shell's job would have it.
if command -v perl >/dev/null 2>&1; then
  signal_during_write INT 130 perl -e '$SIG{INT} = "DEFAULT"; exec @ARGV or die "exec: $!"'
else
  echo "test-signals: perl not found, the SIGINT case skipped"
fi

# SIGXFSZ: the size limit (in blocks of 512 or 1024 bytes, whichever the shell uses) stops
# timeseries.csv at its first megabyte or less.
ok
(ulimit -f 1000 && exec "$bin" run "$tmp/long.json" --quiet --out "$tmp/out-xfsz") \
  >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
[ "$rc" -eq 3 ] || { fail "SIGXFSZ: exit status $rc, want 3"; sed 's/^/    /' "$tmp/stderr"; }
ok
grep -q 'File too large' "$tmp/stderr" || { fail "SIGXFSZ: no 'File too large' message";
  sed 's/^/    /' "$tmp/stderr"; }
no_temp_files "$tmp/out-xfsz" SIGXFSZ

t_done
