#!/bin/sh
# Issue 12: a million-client world (bench/reference.json's population and policy: a gRPC
# throttle per client) builds and runs 3 simulated seconds inside an address-space limit the
# test sets itself (ulimit -v 400 MiB), where it took 2.6 GiB before clients shared their
# configs and held their random streams in place. Skipped (and says so) for a sanitizer
# build, whose shadow memory needs terabytes of address space, and under valgrind (RUNNER).
# Usage: BUILD=build sh tools/test/test-fleet.sh
set -u
. "$(dirname "$0")/lib.sh"
need_bin
if grep -q __asan_init "$bin" 2>/dev/null || grep -q __ubsan_handle "$bin" 2>/dev/null; then
  echo "test-fleet: skipped: $bin is built with sanitizers"
  exit 0
fi
case "${RUNNER:-}" in *valgrind*) echo "test-fleet: skipped under valgrind"; exit 0 ;; esac
t_tmp
limit_kib=409600

# run_fleet N OUT: runs the reference scenario with N clients for 3 s under the limit.
run_fleet() {
  (
    # dash (Debian's sh) and bash have -v; a shell without it fails the test, saying so.
    # shellcheck disable=SC3045
    ulimit -v "$limit_kib" || exit 90
    exec "$bin" run bench/reference.json --set "clients.web.count=$1" --duration 3s --quiet \
      --out "$2"
  ) >"$2.log" 2>&1
}

run_fleet 1000000 "$tmp/fleet"
rc=$?
if [ "$rc" -eq 90 ]; then
  echo "test-fleet: FAIL: cannot set ulimit -v $limit_kib"
  exit 1
fi
if [ "$rc" -ne 0 ]; then
  echo "test-fleet: FAIL: a million clients did not run in $((limit_kib / 1024)) MiB (exit $rc):"
  cat "$tmp/fleet.log"
  exit 1
fi
# 8000 calls/s for 3 s: about 24,000 calls started.
started=$(sed -n 's/.*"started": *\([0-9]*\).*/\1/p' "$tmp/fleet/summary.json" | head -n 1)
if [ -z "$started" ] || [ "$started" -lt 20000 ] || [ "$started" -gt 28000 ]; then
  echo "test-fleet: FAIL: expected about 24000 calls started, summary.json says '${started:-}'"
  exit 1
fi
# The limit is real: the same world does not fit in half of it.
limit_kib=$((limit_kib / 2))
if run_fleet 1000000 "$tmp/half" || ! grep -q "out of memory" "$tmp/half.log"; then
  echo "test-fleet: FAIL: a million clients did not run out of memory inside" \
    "$((limit_kib / 1024)) MiB: is the limit applied?"
  cat "$tmp/half.log"
  exit 1
fi
limit_kib=$((limit_kib * 2))
echo "test-fleet: a million clients ran 3 simulated seconds ($started calls) inside" \
  "$((limit_kib / 1024)) MiB of address space, and not in half of it"
