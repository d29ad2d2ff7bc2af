/*
 * realtime_demo.c: a real program using libretry. It starts a flaky TCP server on loopback
 * (a thread of this process), loads a gRPC service config, and runs calls through the engine
 * in real time with the real-time driver: seed 001's lab, for real, with traces.
 *
 * Wire protocol, one TCP connection per attempt, one line each way:
 *   request  "<call-id> <fail-first> <code> <pushback-ms or ->\n"
 *   response "<status> <pushback-ms or ->\n"
 * The server fails the first <fail-first> attempts of a call id with <code>.
 */
#include "retry/retry.h"
#include "retry/retry_realtime.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

/* {==================================================================
 * The flaky server
 * =================================================================== */

#define MAX_IDS 256

typedef struct server {
  int listen_fd;
  uint16_t port;
  pthread_mutex_t mu;
  char ids[MAX_IDS][48]; /* call ids seen */
  int counts[MAX_IDS];   /* attempts per call id */
  int n_ids;
  long total; /* requests that reached the server */
  bool stop;
} server;

/* Counts one attempt of call id; returns its 1-based number. */
static int server_count(server *s, const char *id) {
  pthread_mutex_lock(&s->mu);
  s->total++;
  int i = 0;
  while (i < s->n_ids && strcmp(s->ids[i], id) != 0)
    i++;
  if (i == s->n_ids && s->n_ids < MAX_IDS) {
    snprintf(s->ids[i], sizeof s->ids[i], "%s", id);
    s->counts[i] = 0;
    s->n_ids++;
  }
  int n = i < MAX_IDS ? ++s->counts[i] : 1;
  pthread_mutex_unlock(&s->mu);
  return n;
}

static long server_total(server *s) {
  pthread_mutex_lock(&s->mu);
  long t = s->total;
  pthread_mutex_unlock(&s->mu);
  return t;
}

static void *server_main(void *arg) {
  server *s = arg;
  for (;;) {
    int fd = accept(s->listen_fd, NULL, NULL);
    if (fd < 0) break;
    char buf[256];
    ssize_t n = recv(fd, buf, sizeof buf - 1, 0);
    if (n > 0) {
      buf[n] = '\0';
      char id[48], code[8], pb[16];
      int fail_first;
      if (strcmp(buf, "quit\n") == 0) {
        close(fd);
        break;
      }
      if (sscanf(buf, "%47s %d %7s %15s", id, &fail_first, code, pb) == 4) {
        int k = server_count(s, id);
        char reply[64];
        if (k <= fail_first)
          snprintf(reply, sizeof reply, "%s %s\n", code, pb);
        else
          snprintf(reply, sizeof reply, "0 -\n");
        if (send(fd, reply, strlen(reply), 0) < 0) perror("send");
      }
    }
    close(fd);
  }
  return NULL;
}

static int server_start(server *s, pthread_t *th) {
  memset(s, 0, sizeof *s);
  pthread_mutex_init(&s->mu, NULL);
  s->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  if (s->listen_fd < 0 || bind(s->listen_fd, (struct sockaddr *)&a, sizeof a) != 0 ||
      listen(s->listen_fd, 64) != 0 || getsockname(s->listen_fd, (struct sockaddr *)&a, &len) != 0)
    return -1;
  s->port = ntohs(a.sin_port);
  return pthread_create(th, NULL, server_main, s);
}

/* }================================================================== */

/* {==================================================================
 * The client
 * =================================================================== */

typedef struct attempt_ctx {
  uint16_t port;
  const char *id;
  int fail_first;
  int code;
  const char *pushback; /* "-" for none */
  char pb_value[16];    /* the pushback received, kept for the engine */
  const char *pb_ptr[1];
} attempt_ctx;

/* Sends one attempt over a fresh loopback connection. */
static void send_attempt(void *ctx, int32_t attempt, int64_t attempt_deadline_ns,
                         retry_outcome *out) {
  attempt_ctx *a = ctx;
  (void)attempt;
  out->status = RETRY_GRPC_UNAVAILABLE; /* a transport failure reads as UNAVAILABLE */
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return;
  if (attempt_deadline_ns != RETRY_NEVER) {
    int64_t left = attempt_deadline_ns - retry_realtime_now_ns();
    if (left < 1000) left = 1000;
    struct timeval tv = {(time_t)(left / RETRY_NS_PER_S),
                         (suseconds_t)(left % RETRY_NS_PER_S / 1000)};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  struct sockaddr_in sa;
  memset(&sa, 0, sizeof sa);
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  sa.sin_port = htons(a->port);
  char req[128];
  snprintf(req, sizeof req, "%s %d %d %s\n", a->id, a->fail_first, a->code, a->pushback);
  char buf[64];
  ssize_t n = -1;
  if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0 && send(fd, req, strlen(req), 0) > 0)
    n = recv(fd, buf, sizeof buf - 1, 0);
  close(fd);
  if (n <= 0) {
    if (attempt_deadline_ns != RETRY_NEVER && retry_realtime_now_ns() >= attempt_deadline_ns)
      out->status = RETRY_GRPC_DEADLINE_EXCEEDED;
    return;
  }
  buf[n] = '\0';
  int status;
  if (sscanf(buf, "%d %15s", &status, a->pb_value) != 2) return;
  out->status = status;
  if (strcmp(a->pb_value, "-") != 0) {
    a->pb_ptr[0] = a->pb_value;
    out->pushback = a->pb_ptr;
    out->n_pushback = 1;
  }
}

/* The example's own randomness (the engine has none): splitmix64 with a fixed seed, so the
 * demo's traces are the same on every run. */
static uint64_t demo_rng_next(void *ctx) {
  uint64_t *s = ctx;
  uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

static void print_trace(void *ctx, const retry_trace_rec *rec) {
  int64_t t0 = *(int64_t *)ctx;
  char line[512];
  /* Times relative to the call's start, easier to read than the monotonic clock. */
  retry_trace_rec r = *rec;
  retry_decision d = *rec->decision;
  r.now_ns -= t0;
  if (d.wake_ns != RETRY_NEVER) d.wake_ns -= t0;
  if (d.attempt_deadline_ns != RETRY_NEVER) d.attempt_deadline_ns -= t0;
  if (d.done_ns != RETRY_NEVER) d.done_ns -= t0;
  r.decision = &d;
  retry_trace_format(&r, line, sizeof line);
  printf("    trace %s\n", line);
}

static const char *const config_json =
    "{\n"
    "  \"methodConfig\": [{\n"
    "    \"name\": [{\"service\": \"flaky.v1.Flaky\"}],\n"
    "    \"timeout\": \"5s\",\n"
    "    \"retryPolicy\": {\n"
    "      \"maxAttempts\": 4,\n"
    "      \"initialBackoff\": \"0.01s\",\n"
    "      \"maxBackoff\": \"0.05s\",\n"
    "      \"backoffMultiplier\": 2,\n"
    "      \"retryableStatusCodes\": [\"UNAVAILABLE\"]\n"
    "    }\n"
    "  }],\n"
    "  \"retryThrottling\": {\"maxTokens\": 4, \"tokenRatio\": 0.1}\n"
    "}\n";

typedef struct demo {
  server *srv;
  const retry_config *cfg;
  uint64_t seed;
  uint64_t n_calls;
} demo;

/* Runs one call; returns the requests that reached the server. */
static long run_call(demo *dm, retry_target *t, const char *label, const char *id, int fail_first,
                     int code, const char *pushback, bool use_policy, bool show_trace) {
  const retry_method_config *mc = retry_config_lookup(dm->cfg, "/flaky.v1.Flaky/Do");
  retry_policy none;
  retry_policy_init(&none, RETRY_SPACE_GRPC);
  const retry_policy *p = use_policy ? &mc->policy : &none;
  attempt_ctx a = {dm->srv->port, id, fail_first, code, pushback, {0}, {NULL}};
  int64_t t0 = retry_realtime_now_ns();
  retry_call_opts o;
  memset(&o, 0, sizeof o);
  o.call_id = ++dm->n_calls;
  o.method = "/flaky.v1.Flaky/Do";
  o.rng.next = demo_rng_next;
  o.rng.ctx = &dm->seed;
  if (show_trace) {
    o.trace = print_trace;
    o.trace_ctx = &t0;
  }
  long before = server_total(dm->srv);
  retry_call c;
  int32_t st = retry_realtime_call(&c, p, t, &o, mc->timeout_ns, send_attempt, &a);
  long made = server_total(dm->srv) - before;
  if (label != NULL)
    printf("  %-46s -> %-18s reason %-22s requests %ld\n", label, retry_grpc_code_name(st),
           retry_stop_name(c.reason), made);
  return made;
}

int main(void) {
  server srv;
  pthread_t th;
  if (server_start(&srv, &th) != 0) {
    perror("realtime_demo: cannot start the loopback server");
    return 1;
  }
  retry_error err;
  retry_error_clear(&err);
  retry_config *cfg = retry_config_load_string(config_json, "<demo config>", NULL, &err);
  if (cfg == NULL) {
    char msg[600];
    retry_error_format(&err, msg, sizeof msg);
    fprintf(stderr, "realtime_demo: %s\n", msg);
    return 2;
  }
  printf("libretry %s: real calls through the engine against a flaky server on 127.0.0.1:%u\n",
         RETRY_VERSION, (unsigned)srv.port);
  printf("service config (seed 001's lab):\n%s\n", config_json);
  demo dm = {&srv, cfg, 2026, 0};
  retry_target *none =
      retry_target_create(&(retry_target_config){0}, retry_realtime_now_ns(), NULL, NULL);
  printf("four calls (as in grpc-go's lab):\n");
  run_call(&dm, none, "retry policy, 2 failures then success", "c1", 2, 14, "-", true, false);
  run_call(&dm, none, "retry policy, fails more than 4 times", "c2", 9, 14, "-", true, false);
  run_call(&dm, none, "retry policy, INVALID_ARGUMENT not retryable", "c3", 9, 3, "-", true, false);
  run_call(&dm, none, "no retry policy, 2 failures", "c4", 2, 14, "-", false, false);

  printf("\nserver pushback: the first answer says grpc-retry-pushback-ms: 120\n");
  run_call(&dm, none, "pushback 120 ms, then success", "c5", 1, 14, "120", true, true);
  printf("\na negative pushback stops retries with attempts left:\n");
  run_call(&dm, none, "pushback -1", "c6", 9, 14, "-1", true, true);

  printf("\n20 calls that always fail:\n");
  long plain = 0, throttled = 0;
  char id[32];
  for (int i = 0; i < 20; i++) {
    snprintf(id, sizeof id, "plain-%d", i);
    plain += run_call(&dm, none, NULL, id, 99, 14, "-", true, false);
  }
  retry_target *tt =
      retry_target_create(retry_config_target(cfg), retry_realtime_now_ns(), NULL, &err);
  for (int i = 0; i < 20 && tt != NULL; i++) {
    snprintf(id, sizeof id, "throttled-%d", i);
    throttled += run_call(&dm, tt, NULL, id, 99, 14, "-", true, false);
  }
  printf("  without throttling: %ld requests reached the server (4 per call)\n", plain);
  printf("  with retryThrottling {maxTokens 4, tokenRatio 0.1}: %ld requests\n", throttled);

  const retry_policy *chain[3] = {&retry_config_lookup(cfg, "/flaky.v1.Flaky/Do")->policy,
                                  &retry_config_lookup(cfg, "/flaky.v1.Flaky/Do")->policy,
                                  &retry_config_lookup(cfg, "/flaky.v1.Flaky/Do")->policy};
  printf("\nthree layers with this policy each could send %" PRIu64
         " attempts to the bottom for one call.\n",
         retry_policy_layers_worst_case(chain, 3));

  /* Stop the server. */
  attempt_ctx q = {srv.port, "quit", 0, 0, "-", {0}, {NULL}};
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in sa = {0};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  sa.sin_port = htons(q.port);
  if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0)
    if (send(fd, "quit\n", 5, 0) < 0) perror("send");
  if (fd >= 0) close(fd);
  pthread_join(th, NULL);
  close(srv.listen_fd);
  pthread_mutex_destroy(&srv.mu);
  retry_target_destroy(tt);
  retry_target_destroy(none);
  retry_config_destroy(cfg);
  return (plain == 80 && throttled == 21) ? 0 : 1;
}
