#!/bin/sh
# Installs libretry into a temporary prefix and builds a small client against it with
# pkg-config, as a user of the library would.
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A plain build of its own: the client is linked without sanitizers.
make -s install PREFIX="$tmp/prefix" BUILD="$tmp/build" SANITIZE= >/dev/null
cat > "$tmp/client.c" <<'C'
#include <retry.h>
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
  printf("%d %s\n", c.n_attempts, retry_stop_name(c.reason));
  return 0;
}
C
PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" ${CC:-cc} -std=c11 -o "$tmp/client" "$tmp/client.c" \
  $(PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" pkg-config --cflags --libs retry)
out=$("$tmp/client")
[ "$out" = "3 max_attempts" ] || { echo "test-install: client printed '$out'"; exit 1; }
echo "test-install: a client built with pkg-config retry ran: $out"
