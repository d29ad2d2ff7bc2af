#!/bin/sh
# Installs libretry into a temporary prefix and builds a small client against it with
# pkg-config, as a user of the library would: the client's face (retry.h) and one part driven
# by hand (retry_parts.h).
set -eu
. "$(dirname "$0")/lib.sh"
t_tmp
# A plain build of its own: the client is linked without sanitizers.
make -s install PREFIX="$tmp/prefix" BUILD="$tmp/build" SANITIZE= >/dev/null
cat > "$tmp/client.c" <<'C'
#include <retry.h>
#include <retry_parts.h>
#include <stdio.h>
static uint64_t zero(void *ctx) { (void)ctx; return 0; }
int main(void) {
  retry_policy p;
  retry_policy_init(&p, RETRY_SPACE_GRPC);
  p.kind = RETRY_POLICY_RETRY;
  retry_policy_set_max_attempts(&p, 3, RETRY_GRPC_MAX_ATTEMPTS_LIMIT);
  retry_status_set_add(&p.retryable, RETRY_SPACE_GRPC, RETRY_GRPC_UNAVAILABLE);
  retry_call_opts o = {0};
  o.deadline_ns = RETRY_NEVER;
  o.rng.next = zero;
  retry_call c;
  retry_decision d;
  retry_call_start(&c, &p, NULL, &o, 0, &d);
  int64_t now = 0;
  while (d.action != RETRY_ACTION_DONE) {
    if (d.action == RETRY_ACTION_WAIT) { now = d.wake_ns; retry_call_wake(&c, now, &d); continue; }
    retry_outcome out;
    retry_outcome_init(&out, RETRY_GRPC_UNAVAILABLE);
    retry_call_on_outcome(&c, d.attempt, &out, ++now, &d);
  }
  /* retry_parts.h: a part driven by hand. */
  retry_throttle_config tc = {10000, 100};
  retry_throttle th;
  retry_throttle_init(&th, &tc);
  retry_throttle_record_failure(&th);
  printf("%d %s %lld\n", c.n_attempts, retry_stop_name(c.reason), (long long)th.milli_tokens);
  return 0;
}
C
PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" ${CC:-cc} -std=c11 -o "$tmp/client" "$tmp/client.c" \
  $(PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" pkg-config --cflags --libs retry)
out=$("$tmp/client")
[ "$out" = "3 max_attempts 9000" ] || { echo "test-install: client printed '$out'"; exit 1; }
echo "test-install: a client built with pkg-config retry ran: $out"

# Every installed header from C++ too: each must declare its functions with C linkage, or a C++
# client compiles and then fails to link. Skipped (and said) when no C++ compiler is installed.
if command -v c++ >/dev/null 2>&1; then
  cat > "$tmp/client.cc" <<'CC'
#include <retry.h>
#include <retry_parts.h>
#include <retry_json.h>
#include <retry_realtime.h>
int main() {
  retry_target_config cfg;
  retry_target_config_init(&cfg);
  cfg.has_throttle = true;
  cfg.throttle.max_milli_tokens = 10000;
  cfg.throttle.token_ratio_milli = 100;
  retry_target *t = retry_target_create(&cfg, 0, nullptr, nullptr);
  bool ok = t != nullptr && retry_throttle_is_allowed(retry_target_throttle(t)) &&
            retry_target_breaker(t) == nullptr;
  retry_json_ctx c;
  retry_json_ctx_init(&c, "client.cc");
  retry_json_fail(&c, RETRY_ECONFIG, "%s", "checked");
  retry_error e;
  retry_error_clear(&e);
  retry_error_set(&e, RETRY_EINVAL, "client.cc", "$", -1, -1, "%d", 1);
  ok = ok && retry_json_failed(&c) && e.code == RETRY_EINVAL;
  retry_target_destroy(t);
  (void)retry_realtime_now_ns();
  return ok ? 0 : 1;
}
CC
  PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" c++ -std=c++11 -o "$tmp/client-cc" "$tmp/client.cc" \
    $(PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" pkg-config --cflags --libs retry) ||
    { echo "test-install: the headers do not build and link from C++"; exit 1; }
  "$tmp/client-cc" || { echo "test-install: the C++ client failed"; exit 1; }
  echo "test-install: the four installed headers build and link from C++"
else
  echo "test-install: no C++ compiler, the C++ check is skipped"
fi
