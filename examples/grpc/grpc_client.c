/*
 * grpc_client.c: a real gRPC client whose retries are libretry's.
 *
 * C against the gRPC C core API (Debian libgrpc-dev), no generated code: unary calls with raw
 * byte payloads (the payload is the logical call's id, so a server can count the attempts of
 * each call). It reads a gRPC service config through libretry's loader and runs every call
 * through the engine with the real-time driver (retry_realtime_call): gRPC's own retries are
 * off (GRPC_ARG_ENABLE_RETRIES 0) and no service config is given to the channel, so each
 * attempt is one plain gRPC call whose status and trailing metadata (grpc-retry-pushback-ms)
 * go to the engine, which says when the next attempt starts or why the call stops.
 *
 * With --mode grpc the same program hands the same service config to gRPC instead
 * (GRPC_ARG_SERVICE_CONFIG, retries on): the comparison tools/ops/sim-to-real.py makes.
 *
 * Usage:
 *   grpc_client --target 127.0.0.1:PORT --config SERVICE_CONFIG.json --method /svc/Method
 *               [--mode libretry|grpc] [--calls N] [--threads T] [--duration-ms D]
 *               [--think-ms T] [--deadline-ms D] [--seed S] [--id PREFIX]
 *               [--throttle-scope process|channel]
 * Each of T threads has its own channel (and its own retry_target: per-channel state, as a
 * gRPC channel holds it) and makes up to N calls one after the other, thinking T ms between
 * them, until D ms have passed (D 0: no time limit; N is always the bound). The retry throttle
 * is the exception: as C-core keeps one per server name for the whole process
 * (retry_throttle.cc, ServerRetryThrottleMap), every thread's target draws on one bucket for
 * the --target server (--throttle-scope process, the default), under a lock, since libretry
 * has none of its own; --throttle-scope channel keeps one per thread's channel instead, as
 * grpc-go and grpc-java keep one per channel. A response's initial metadata commits the call
 * (A6), as it commits C-core's: the attempt reports headers_received. --deadline-ms sets
 * each call's deadline (as an application sets one; the methodConfig timeout, when earlier,
 * still applies). Deadlines go to gRPC on its monotonic clock. One line per call
 * on stdout:
 *   call ID STATUS LATENCY_MS ATTEMPTS REASON      (ATTEMPTS and REASON "-" with --mode grpc)
 * Exit status: 0, 2 for a bad command line or config, 1 when gRPC could not be used.
 */
#include "retry/retry.h"
#include "retry/retry_parts.h" /* retry_target_share_throttle: one bucket per server */
#include "retry/retry_realtime.h"

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpc/support/time.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_THREADS 64
#define MAX_CALLS 100000
#define MAX_PUSHBACK 4

typedef struct options {
  const char *target;
  const char *config_path;
  const char *method;
  bool grpc_retries; /* --mode grpc */
  long calls;
  int threads;
  int64_t duration_ns; /* 0: none */
  int64_t think_ns;
  int64_t deadline_ns; /* --deadline-ms, 0: none */
  uint64_t seed;
  const char *id_prefix;
  bool throttle_per_channel; /* --throttle-scope channel */
} options;

typedef struct shared {
  const options *opt;
  const retry_config *cfg;
  const retry_method_config *mc;
  char *config_json; /* --mode grpc: given to the channel verbatim */
  int64_t start_ns;
  pthread_mutex_t out_mu;
  /* The process's one retry-throttle bucket for the --target server (NULL: none, or one per
   * channel), held by a target with nothing else; every engine call of a target drawing on it
   * runs under engine_mu. */
  retry_target *bucket;
  pthread_mutex_t engine_mu;
} shared;

typedef struct worker {
  shared *sh;
  int index;
  grpc_channel *channel;
  grpc_completion_queue *cq;
  uint64_t rng_state;
  const char *call_id;
  /* the last attempt's pushback values, kept until the next attempt (retry_outcome borrows) */
  char pb_buf[MAX_PUSHBACK][32];
  const char *pb_ptr[MAX_PUSHBACK];
  int status_errors;
} worker;

/* splitmix64: the engine owns no randomness; each thread brings its own, seeded. */
static uint64_t rng_next(void *ctx) {
  uint64_t *s = ctx;
  uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

/* gRPC's monotonic clock has its own origin: deadlines go through "time left". */
static gpr_timespec deadline_from_ns(int64_t at_ns) {
  if (at_ns == RETRY_NEVER) return gpr_inf_future(GPR_CLOCK_MONOTONIC);
  int64_t left = at_ns - retry_realtime_now_ns();
  if (left < 0) left = 0;
  return gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_nanos(left, GPR_TIMESPAN));
}

typedef struct rpc_result {
  grpc_status_code status;
  bool got_message;
  bool got_headers; /* initial metadata arrived before the status (not trailers-only) */
  int n_pushback;
} rpc_result;

/* One gRPC call, start to end: send the id, receive the answer, the status and the trailers.
 * Bounded: the call has a deadline, and the wait for the completion queue is bounded too (a
 * call that never completes is cancelled). */
static rpc_result one_rpc(worker *w, int32_t attempt, gpr_timespec deadline) {
  rpc_result r = {GRPC_STATUS_UNKNOWN, false, false, 0};
  grpc_slice method = grpc_slice_from_static_string(w->sh->opt->method);
  grpc_call *call = grpc_channel_create_call(w->channel, NULL, GRPC_PROPAGATE_DEFAULTS, w->cq,
                                             method, NULL, deadline, NULL);
  if (call == NULL) return r;
  grpc_slice payload = grpc_slice_from_copied_string(w->call_id);
  grpc_byte_buffer *req = grpc_raw_byte_buffer_create(&payload, 1);
  grpc_byte_buffer *resp = NULL;
  grpc_metadata_array initial, trailing;
  grpc_metadata_array_init(&initial);
  grpc_metadata_array_init(&trailing);
  grpc_slice details = grpc_empty_slice();
  /* A retry says which attempt it is, as gRPC's own retries do (A6). */
  char prev[16];
  snprintf(prev, sizeof prev, "%d", (int)(attempt - 1));
  grpc_metadata md;
  memset(&md, 0, sizeof md);
  md.key = grpc_slice_from_static_string("grpc-previous-rpc-attempts");
  md.value = grpc_slice_from_copied_string(prev);

  grpc_op ops[6];
  memset(ops, 0, sizeof ops);
  ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
  ops[0].data.send_initial_metadata.count = attempt > 1 ? 1 : 0;
  ops[0].data.send_initial_metadata.metadata = attempt > 1 ? &md : NULL;
  ops[1].op = GRPC_OP_SEND_MESSAGE;
  ops[1].data.send_message.send_message = req;
  ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
  ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
  ops[3].data.recv_initial_metadata.recv_initial_metadata = &initial;
  ops[4].op = GRPC_OP_RECV_MESSAGE;
  ops[4].data.recv_message.recv_message = &resp;
  ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
  ops[5].data.recv_status_on_client.trailing_metadata = &trailing;
  ops[5].data.recv_status_on_client.status = &r.status;
  ops[5].data.recv_status_on_client.status_details = &details;
  void *tag = (void *)call;
  if (grpc_call_start_batch(call, ops, 6, tag, NULL) == GRPC_CALL_OK) {
    /* The deadline ends the call; wait at most 5 s past it (30 s without one). */
    gpr_timespec limit =
        gpr_time_cmp(deadline, gpr_inf_future(GPR_CLOCK_MONOTONIC)) == 0
            ? gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_seconds(30, GPR_TIMESPAN))
            : gpr_time_add(deadline, gpr_time_from_seconds(5, GPR_TIMESPAN));
    grpc_event ev = grpc_completion_queue_pluck(w->cq, tag, limit, NULL);
    if (ev.type != GRPC_OP_COMPLETE) {
      grpc_call_cancel(call, NULL);
      ev = grpc_completion_queue_pluck(w->cq, tag, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);
    }
    r.got_message = resp != NULL;
    /* Response headers commit the call (A6), and C-core's retry filter commits on them
     * (RecvInitialMetadataReady). The surface API does not say whether headers came on their
     * own or as a trailers-only response, but a trailers-only response publishes no initial
     * metadata, so any entry here (or a message, which only follows headers) means headers
     * came first. Headers carrying no application metadata stay invisible to this API: C-core
     * publishes only application keys (docs/sim-to-real.md, "Failures after headers"). */
    r.got_headers = r.got_message || initial.count > 0;
    for (size_t i = 0; i < trailing.count && r.n_pushback < MAX_PUSHBACK; i++) {
      if (grpc_slice_str_cmp(trailing.metadata[i].key, "grpc-retry-pushback-ms") != 0) continue;
      grpc_slice v = trailing.metadata[i].value;
      size_t n = GRPC_SLICE_LENGTH(v);
      if (n >= sizeof w->pb_buf[0]) n = sizeof w->pb_buf[0] - 1;
      memcpy(w->pb_buf[r.n_pushback], GRPC_SLICE_START_PTR(v), n);
      w->pb_buf[r.n_pushback][n] = '\0';
      w->pb_ptr[r.n_pushback] = w->pb_buf[r.n_pushback];
      r.n_pushback++;
    }
  } else {
    w->status_errors++;
  }
  grpc_slice_unref(details);
  grpc_slice_unref(md.value);
  grpc_metadata_array_destroy(&initial);
  grpc_metadata_array_destroy(&trailing);
  if (resp != NULL) grpc_byte_buffer_destroy(resp);
  grpc_byte_buffer_destroy(req);
  grpc_slice_unref(payload);
  grpc_call_unref(call);
  return r;
}

/* The real-time driver's attempt function: one gRPC call, its outcome to the engine. */
static void attempt_fn(void *ctx, int32_t attempt, int64_t attempt_deadline_ns,
                       retry_outcome *out) {
  worker *w = ctx;
  rpc_result r = one_rpc(w, attempt, deadline_from_ns(attempt_deadline_ns));
  out->status = (int32_t)r.status;
  out->headers_received = r.got_headers;
  if (r.n_pushback > 0) {
    out->pushback = w->pb_ptr;
    out->n_pushback = (size_t)r.n_pushback;
  }
}

static void engine_lock(pthread_mutex_t *mu) {
  if (mu != NULL) pthread_mutex_lock(mu);
}
static void engine_unlock(pthread_mutex_t *mu) {
  if (mu != NULL) pthread_mutex_unlock(mu);
}

/* Runs one logical call to its end, as retry_realtime_call does (rpc, then the engine's
 * answer; sleep until the time it names), but with every engine call under mu when mu is not
 * NULL: the throttle bucket the call's target draws on is shared with the other threads, and
 * libretry takes no lock of its own (docs/engine.md, "Threads"). No RPC and no sleep happens
 * under the lock. Returns the final status; c holds the attempts and the stop reason. */
static int32_t run_call(retry_call *c, const retry_policy *p, retry_target *t,
                        retry_call_opts *o, int64_t timeout_ns, worker *w, pthread_mutex_t *mu) {
  retry_call_ext ext; /* the optional state, which any call may be given */
  o->ext = &ext;
  int64_t now = retry_realtime_now_ns();
  o->deadline_ns = timeout_ns >= RETRY_NEVER - now ? RETRY_NEVER : now + timeout_ns;
  retry_decision d;
  engine_lock(mu);
  retry_call_start(c, p, t, o, now, &d);
  engine_unlock(mu);
  while (d.action != RETRY_ACTION_DONE) {
    if (d.action == RETRY_ACTION_SEND) {
      retry_outcome out;
      retry_outcome_init(&out, 0);
      attempt_fn(w, d.attempt, d.attempt_deadline_ns, &out);
      engine_lock(mu);
      retry_call_on_outcome(c, d.attempt, &out, retry_realtime_now_ns(), &d);
      engine_unlock(mu);
      continue;
    }
    /* WAIT: one attempt at a time leaves nothing in flight, so there is a timer; without
     * one, waking the engine at once lets it decide rather than block for ever. */
    bool timer = d.wake_ns != RETRY_NEVER;
    retry_realtime_sleep_until(d.wake_ns);
    engine_lock(mu);
    retry_call_wake(c, retry_realtime_now_ns(), &d);
    engine_unlock(mu);
    if (!timer && d.action == RETRY_ACTION_WAIT && d.wake_ns == RETRY_NEVER) break;
  }
  if (d.action == RETRY_ACTION_DONE && d.done_ns != RETRY_NEVER)
    retry_realtime_sleep_until(d.done_ns);
  c->ext = NULL; /* ext is not valid past the return */
  return retry_call_status(c);
}

/* The thread's own target (per-channel state), drawing on the process's bucket when there is
 * one. Returns a new target; free with retry_target_destroy. NULL with err set on failure. */
static retry_target *worker_target(const shared *sh, retry_error *err) {
  retry_target *t = retry_target_create(retry_config_target(sh->cfg), retry_realtime_now_ns(),
                                        NULL, err);
  if (t != NULL && sh->bucket != NULL &&
      retry_target_share_throttle(t, retry_target_throttle(sh->bucket)) != 0) {
    retry_error_set(err, RETRY_EINVAL, NULL, NULL, -1, -1, "cannot share the throttle");
    retry_target_destroy(t);
    t = NULL;
  }
  return t;
}

static void *worker_main(void *arg) {
  worker *w = arg;
  const options *opt = w->sh->opt;
  const shared *sh = w->sh;
  grpc_arg args[2];
  memset(args, 0, sizeof args);
  args[0].type = GRPC_ARG_INTEGER;
  args[0].key = (char *)GRPC_ARG_ENABLE_RETRIES;
  args[0].value.integer = opt->grpc_retries ? 1 : 0;
  args[1].type = GRPC_ARG_STRING;
  args[1].key = (char *)GRPC_ARG_SERVICE_CONFIG;
  args[1].value.string = sh->config_json;
  grpc_channel_args chargs = {opt->grpc_retries ? 2u : 1u, args};
  grpc_channel_credentials *creds = grpc_insecure_credentials_create();
  w->channel = grpc_channel_create(opt->target, creds, &chargs);
  grpc_channel_credentials_release(creds);
  w->cq = grpc_completion_queue_create_for_pluck(NULL);
  /* Connect before the first call, so that it does not pay the connection (bounded: 5 s). */
  gpr_timespec ready_by =
      gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_seconds(5, GPR_TIMESPAN));
  for (int k = 0; k < 100; k++) {
    grpc_connectivity_state st = grpc_channel_check_connectivity_state(w->channel, 1);
    if (st == GRPC_CHANNEL_READY) break;
    grpc_channel_watch_connectivity_state(w->channel, st, ready_by, w->cq, &w->rng_state);
    grpc_event ev = grpc_completion_queue_pluck(w->cq, &w->rng_state, ready_by, NULL);
    if (ev.type != GRPC_OP_COMPLETE || !ev.success) break;
  }

  retry_error err;
  retry_error_clear(&err);
  retry_target *target = worker_target(sh, &err);
  pthread_mutex_t *mu = sh->bucket != NULL ? &w->sh->engine_mu : NULL;
  char id[96];
  for (long i = 0; i < opt->calls && target != NULL; i++) {
    int64_t now = retry_realtime_now_ns();
    if (opt->duration_ns > 0 && now - sh->start_ns >= opt->duration_ns) break;
    snprintf(id, sizeof id, "%s-%d-%ld", opt->id_prefix, w->index, i);
    w->call_id = id;
    int64_t t0 = retry_realtime_now_ns();
    int64_t deadline = opt->deadline_ns > 0 ? t0 + opt->deadline_ns : RETRY_NEVER;
    int32_t status;
    char attempts[16] = "-";
    const char *reason = "-";
    if (opt->grpc_retries) {
      /* gRPC's own retries: one call, with --deadline-ms as its deadline (the service config's
       * timeout, if any, applies too: gRPC takes the earlier). */
      rpc_result r = one_rpc(w, 1, deadline_from_ns(deadline));
      status = (int32_t)r.status;
    } else {
      retry_call_opts o;
      memset(&o, 0, sizeof o);
      o.call_id = (uint64_t)i;
      o.method = opt->method;
      o.rng.next = rng_next;
      o.rng.ctx = &w->rng_state;
      retry_call c;
      /* The call's deadline: --deadline-ms, else the methodConfig timeout (gRPC takes the
       * earlier of the two when both are set, and so do we). */
      int64_t timeout = sh->mc->timeout_ns;
      if (opt->deadline_ns > 0 && opt->deadline_ns < timeout) timeout = opt->deadline_ns;
      status = run_call(&c, &sh->mc->policy, target, &o, timeout, w, mu);
      snprintf(attempts, sizeof attempts, "%d", (int)c.n_attempts);
      reason = retry_stop_name(c.reason);
    }
    int64_t t1 = retry_realtime_now_ns();
    const char *name = retry_grpc_code_name(status);
    pthread_mutex_lock(&w->sh->out_mu);
    printf("call %s %s %.3f %s %s\n", id, name != NULL ? name : "?", (double)(t1 - t0) / 1e6,
           attempts, reason);
    pthread_mutex_unlock(&w->sh->out_mu);
    if (opt->think_ns > 0) retry_realtime_sleep_until(retry_realtime_now_ns() + opt->think_ns);
  }
  if (target == NULL) {
    char msg[600];
    retry_error_format(&err, msg, sizeof msg);
    fprintf(stderr, "grpc_client: %s\n", msg);
  }
  retry_target_destroy(target);
  grpc_channel_destroy(w->channel);
  grpc_completion_queue_shutdown(w->cq);
  while (grpc_completion_queue_pluck(w->cq, NULL, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
         GRPC_QUEUE_SHUTDOWN) {
  }
  grpc_completion_queue_destroy(w->cq);
  return NULL;
}

/* The process's one bucket for the server: a target holding cfg's retry throttle alone, so
 * that the threads' targets share it and nothing else (their budgets, breakers and limiters
 * stay per channel, as the simulator keeps them per edge). Every thread calls one server
 * (--target), so one bucket is the whole of C-core's map from server names to buckets. Returns
 * a new target; free with retry_target_destroy. NULL when cfg has no throttle (err untouched)
 * or on failure (err set). */
static retry_target *bucket_create(const retry_config *cfg, retry_error *err) {
  const retry_target_config *src = retry_config_target(cfg);
  if (!src->has_throttle) return NULL;
  retry_target_config tc;
  retry_target_config_init(&tc);
  tc.has_throttle = true;
  tc.throttle = src->throttle;
  return retry_target_create(&tc, retry_realtime_now_ns(), NULL, err);
}

static int usage(const char *msg) {
  fprintf(stderr, "grpc_client: %s\n", msg);
  fprintf(stderr,
          "usage: grpc_client --target HOST:PORT --config FILE --method /svc/Method "
          "[--mode libretry|grpc] [--calls N] [--threads T] [--duration-ms D] "
          "[--think-ms T] [--deadline-ms D] [--seed S] [--id PREFIX] "
          "[--throttle-scope process|channel]\n");
  return 2;
}

/* Parses a decimal integer in [lo, hi]; returns false otherwise. */
static bool parse_long(const char *s, long lo, long hi, long *out) {
  char *end;
  long v = strtol(s, &end, 10);
  if (*s == '\0' || *end != '\0' || v < lo || v > hi) return false;
  *out = v;
  return true;
}

static char *read_all(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  size_t k;
  while (buf != NULL && (k = fread(buf + n, 1, cap - n - 1, f)) > 0) {
    n += k;
    if (cap - n - 1 == 0) {
      char *nb = cap < (1u << 24) ? realloc(buf, cap * 2) : NULL;
      if (nb == NULL) {
        free(buf);
        buf = NULL;
      } else {
        buf = nb;
        cap *= 2;
      }
    }
  }
  fclose(f);
  if (buf != NULL) buf[n] = '\0';
  return buf;
}

int main(int argc, char **argv) {
  options opt = {NULL, NULL, NULL, false, 1, 1, 0, 0, 0, 1, "c", false};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (i + 1 >= argc) return usage("every option takes a value");
    const char *v = argv[++i];
    long n;
    if (strcmp(a, "--target") == 0) {
      opt.target = v;
    } else if (strcmp(a, "--config") == 0) {
      opt.config_path = v;
    } else if (strcmp(a, "--method") == 0) {
      opt.method = v;
    } else if (strcmp(a, "--mode") == 0) {
      if (strcmp(v, "grpc") != 0 && strcmp(v, "libretry") != 0)
        return usage("--mode is libretry or grpc");
      opt.grpc_retries = strcmp(v, "grpc") == 0;
    } else if (strcmp(a, "--calls") == 0) {
      if (!parse_long(v, 1, MAX_CALLS, &n)) return usage("--calls is an integer 1..100000");
      opt.calls = n;
    } else if (strcmp(a, "--threads") == 0) {
      if (!parse_long(v, 1, MAX_THREADS, &n)) return usage("--threads is an integer 1..64");
      opt.threads = (int)n;
    } else if (strcmp(a, "--duration-ms") == 0) {
      if (!parse_long(v, 0, 3600000, &n)) return usage("--duration-ms is an integer 0..3600000");
      opt.duration_ns = (int64_t)n * RETRY_NS_PER_MS;
    } else if (strcmp(a, "--think-ms") == 0) {
      if (!parse_long(v, 0, 60000, &n)) return usage("--think-ms is an integer 0..60000");
      opt.think_ns = (int64_t)n * RETRY_NS_PER_MS;
    } else if (strcmp(a, "--deadline-ms") == 0) {
      if (!parse_long(v, 0, 3600000, &n)) return usage("--deadline-ms is an integer 0..3600000");
      opt.deadline_ns = (int64_t)n * RETRY_NS_PER_MS;
    } else if (strcmp(a, "--seed") == 0) {
      if (!parse_long(v, 0, INT32_MAX, &n)) return usage("--seed is an integer 0..2147483647");
      opt.seed = (uint64_t)n;
    } else if (strcmp(a, "--id") == 0) {
      opt.id_prefix = v;
    } else if (strcmp(a, "--throttle-scope") == 0) {
      if (strcmp(v, "process") != 0 && strcmp(v, "channel") != 0)
        return usage("--throttle-scope is process or channel");
      opt.throttle_per_channel = strcmp(v, "channel") == 0;
    } else {
      return usage("unknown option");
    }
  }
  if (opt.target == NULL || opt.config_path == NULL || opt.method == NULL)
    return usage("--target, --config and --method are required");

  retry_error err;
  retry_error_clear(&err);
  retry_config *cfg = retry_config_load_file(opt.config_path, NULL, &err);
  if (cfg == NULL) {
    char msg[600];
    retry_error_format(&err, msg, sizeof msg);
    fprintf(stderr, "grpc_client: %s\n", msg);
    return 2;
  }
  shared sh;
  memset(&sh, 0, sizeof sh);
  sh.opt = &opt;
  sh.cfg = cfg;
  sh.mc = retry_config_lookup(cfg, opt.method);
  if (sh.mc->policy.hedging_ignored)
    fprintf(stderr,
            "grpc_client: warning: %s: the profile's implementation ignores "
            "hedgingPolicy; one attempt per call\n",
            opt.config_path);
  sh.config_json = read_all(opt.config_path);
  pthread_mutex_init(&sh.out_mu, NULL);
  if (sh.config_json == NULL) {
    fprintf(stderr, "grpc_client: %s: cannot read the file again\n", opt.config_path);
    retry_config_destroy(cfg);
    return 2;
  }

  pthread_mutex_init(&sh.engine_mu, NULL);
  if (!opt.grpc_retries && !opt.throttle_per_channel) {
    sh.bucket = bucket_create(cfg, &err);
    if (sh.bucket == NULL && err.code != RETRY_OK) {
      char msg[600];
      retry_error_format(&err, msg, sizeof msg);
      fprintf(stderr, "grpc_client: %s\n", msg);
      pthread_mutex_destroy(&sh.engine_mu);
      pthread_mutex_destroy(&sh.out_mu);
      free(sh.config_json);
      retry_config_destroy(cfg);
      return 2;
    }
  }

  grpc_init();
  sh.start_ns = retry_realtime_now_ns();
  worker ws[MAX_THREADS];
  pthread_t th[MAX_THREADS];
  memset(ws, 0, sizeof ws);
  int started = 0;
  for (int i = 0; i < opt.threads; i++) {
    ws[i].sh = &sh;
    ws[i].index = i;
    ws[i].rng_state = opt.seed * 1000003u + (uint64_t)i;
    if (pthread_create(&th[i], NULL, worker_main, &ws[i]) != 0) break;
    started++;
  }
  int bad = 0;
  for (int i = 0; i < started; i++) {
    pthread_join(th[i], NULL);
    bad += ws[i].status_errors;
  }
  grpc_shutdown();
  fflush(stdout);
  pthread_mutex_destroy(&sh.out_mu);
  retry_target_destroy(sh.bucket); /* after every thread's target is gone */
  pthread_mutex_destroy(&sh.engine_mu);
  free(sh.config_json);
  retry_config_destroy(cfg);
  if (started < opt.threads || bad > 0) {
    fprintf(stderr, "grpc_client: %d threads of %d started, %d calls could not start\n", started,
            opt.threads, bad);
    return 1;
  }
  return 0;
}
