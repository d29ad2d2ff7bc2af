#!/bin/sh
# Runs the real-time example (real calls over loopback TCP through libretry) and checks the
# numbers of seed 001's lab: 3, 4, 1, 1 requests; pushback honoured; 80 vs 21 requests.
set -eu
out=$("${BUILD:-build}/examples/realtime_demo")
check() {
  printf '%s\n' "$out" | grep -q -- "$1" || { printf '%s\n' "$out"; echo "test-realtime-demo: missing: $1"; exit 1; }
}
check "2 failures then success          -> OK .*reason ok .*requests 3"
check "fails more than 4 times          -> UNAVAILABLE .*reason max_attempts .*requests 4"
check "INVALID_ARGUMENT not retryable   -> INVALID_ARGUMENT .*requests 1"
check "no retry policy, 2 failures                    -> UNAVAILABLE .*requests 1"
check '"pushback":"delay","pushback_ns":120000000,"backoff_ns":120000000'
check "pushback -1 .*reason pushback_stop .*requests 1"
check "without throttling: 80 requests"
check "tokenRatio 0.1}: 21 requests"
check "could send 64 attempts"
echo "test-realtime-demo: all lines as expected"
