/*
 * test_model_world.c: the simulated world as a whole, driven through scenario text: queueing
 * theory (M/M/1 and M/M/c against Erlang C, with t-based confidence intervals over
 * replications), determinism and common random numbers, every allocation failing cleanly,
 * memory following the calls in flight, invariants over random scenarios, warm-up, and bare
 * calls deciding as the engine would. Scenarios are written with single quotes
 * (tests/support/world.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/oom.h"
#include "tests/support/world.h"

/* {==================================================================
 * Queueing theory
 * =================================================================== */

/* Erlang C: mean time in system of an M/M/c queue with arrival rate lambda, service rate mu. */
static double erlang_c_sojourn(int c, double lambda, double mu) {
  double a = lambda / mu, rho = a / c;
  double term = 1, sum = 1; /* k = 0 */
  for (int k = 1; k < c; k++) {
    term *= a / k;
    sum += term;
  }
  double last = term * a / c / (1 - rho); /* a^c / c! / (1 - rho) */
  double pw = last / (sum + last);
  return pw / (c * mu - lambda) + 1 / mu;
}

/* Runs n replications (seeds 1..n) and checks that the analytic mean sojourn time lies in the
 * t-based 99 % confidence interval of the replication means. */
static void check_queue(const char *text, double expected_ms, int n) {
  double means[32];
  expt_scenario *s = test_load(text);
  for (int i = 0; i < n; i++) {
    test_run x = {.s = s};
    test_run_loaded(&x, 0, (uint64_t)(i + 1));
    assert_int_equal(x.r->calls_failed, 0);
    means[i] = sim_hist_mean(&x.r->latency) / 1e6;
    test_run_close(&x);
  }
  expt_scenario_destroy(s);
  double m = gsl_stats_mean(means, 1, (size_t)n);
  double sd = gsl_stats_sd_m(means, 1, (size_t)n, m);
  double half = gsl_cdf_tdist_Pinv(0.995, n - 1) * sd / sqrt(n);
  print_message("mean sojourn %.3f ms +- %.3f (99 %% CI, %d reps), theory %.3f ms\n", m, half, n,
                expected_ms);
  assert_true(fabs(m - expected_ms) <= half);
  /* The interval must be narrow enough to mean something: within 4 % of the value. */
  assert_true(half < 0.04 * expected_ms);
}

static void test_model_world_mm1_matches_theory(void **state) {
  (void)state;
  /* rho = 0.8: lambda 80/s, mean service 10 ms: W = 1 / (mu - lambda) = 50 ms. */
  check_queue(
      "{'duration': '800s', 'drain': '10s',"
      " 'services': {'q': {'service_time': {'dist': 'exponential', 'mean': '10ms'},"
      "                    'queue': {'capacity': 1000000}}},"
      " 'clients': {'src': {'target': 'q', 'methods': ['/q.Q/Do'],"
      "                     'arrival': {'kind': 'open', 'rate': '80/s'}}}}",
      50.0, 20);
}

static void test_model_world_mmc_matches_erlang_c(void **state) {
  (void)state;
  /* c = 8, rho = 0.9: lambda 720/s, mu 100/s per worker. */
  double w_ms = erlang_c_sojourn(8, 720.0, 100.0) * 1e3;
  check_queue(
      "{'duration': '150s', 'drain': '10s',"
      " 'services': {'q': {'workers': 8, 'service_time': {'dist': 'exponential', 'mean': '10ms'},"
      "                    'queue': {'capacity': 1000000}}},"
      " 'clients': {'src': {'target': 'q', 'methods': ['/q.Q/Do'],"
      "                     'arrival': {'kind': 'open', 'rate': '720/s'}}}}",
      w_ms, 20);
}

/* }================================================================== */

/* {==================================================================
 * Determinism and common random numbers
 * =================================================================== */

static const char storm[] =
    "{'duration': '20s', 'drain': '5s',"
    " 'services': {'api': {'replicas': 2, 'workers': 4, 'queue': {'capacity': 50},"
    "   'service_time': {'dist': 'lognormal', 'median': '8ms', 'sigma': 0.6},"
    "   'faults': [{'kind': 'refuse', 'status': 'UNAVAILABLE', 'rate': 0.3,"
    "               'start': '5s', 'end': '10s'}]}},"
    " 'clients': {'web': {'count': 20, 'target': 'api', 'methods': ['/api.A/Get'],"
    "   'deadline': '500ms', 'network': {'dist': 'exponential', 'mean': '1ms'},"
    "   'arrival': {'kind': 'open', 'rate': '600/s'},"
    "   'policy': {'methodConfig': [{'name': [{'service': 'api.A'}],"
    "     'retryPolicy': {'maxAttempts': 3, 'initialBackoff': '0.01s', 'maxBackoff': '0.1s',"
    "       'backoffMultiplier': 2, 'retryableStatusCodes': ['UNAVAILABLE']}}],"
    "     'retryThrottling': {'maxTokens': 10, 'tokenRatio': 0.1}}}},"
    " 'variants': [{'name': 'retry'},"
    "              {'name': 'no-retry', 'set': {'clients.web.policy': null}}]}";

static void test_model_world_same_seed_same_results(void **state) {
  (void)state;
  test_run a, b;
  test_run_text(&a, storm, 7);
  test_run_text(&b, storm, 7);
  assert_true(a.r->events > 10000);
  assert_int_equal(a.r->events, b.r->events);
  assert_int_equal(a.r->sim_time_ns, b.r->sim_time_ns);
  assert_int_equal(a.r->attempts, b.r->attempts);
  assert_int_equal(a.r->calls_ok, b.r->calls_ok);
  assert_memory_equal(&a.r->latency, &b.r->latency, sizeof a.r->latency);
  assert_int_equal(a.r->ts.n_buckets, b.r->ts.n_buckets);
  assert_memory_equal(a.r->ts.values, b.r->ts.values,
                      a.r->ts.n_buckets * a.r->ts.n_columns * sizeof(double));
  test_run c;
  test_run_text(&c, storm, 8);
  assert_int_not_equal(a.r->attempts, c.r->attempts);
  test_run_free(&a);
  test_run_free(&b);
  test_run_free(&c);
}

static void test_model_world_variants_see_same_arrivals(void **state) {
  (void)state;
  expt_scenario *s = test_load(storm);
  assert_int_equal(expt_scenario_n_runs(s), 2);
  test_run a = {.s = s}, b = {.s = s};
  test_run_loaded(&a, 0, 3);
  test_run_loaded(&b, 1, 3);
  /* Retries change everything downstream, never the offered load. */
  assert_int_equal(a.r->calls_started, b.r->calls_started);
  assert_true(a.r->attempts > b.r->attempts);
  assert_int_equal(b.r->attempts, b.r->calls_started);
  for (size_t i = 0; i < 20; i++)
    assert_true(a.r->ts.values[i * a.r->ts.n_columns] == b.r->ts.values[i * b.r->ts.n_columns]);
  test_run_close(&a);
  test_run_close(&b);
  expt_scenario_destroy(s);
}

/* }================================================================== */

/* {==================================================================
 * Out of memory and memory in use
 * =================================================================== */

/* One world on a kernel whose allocation number fail fails (tests/support/oom.h), built and,
 * when and_run is true, run. Asserts that nothing leaked once the world and the kernel are gone. */
typedef struct failing_world {
  bool kernel;                 /* the kernel was made (else nothing else was tried) */
  bool built;                  /* the world was made */
  int rc;                      /* 0: nothing failed; else RETRY_ENOMEM, details in err */
  long n_calls;                /* allocations attempted */
  int64_t peak;                /* calls in flight at most, when the run completed */
  int64_t worst_case_front_db; /* the edge front -> db's worst case, when built (-1: none) */
} failing_world;

static failing_world world_with_failing_alloc(const model_config *cfg, long fail, bool and_run,
                                              retry_error *err) {
  failing_world f = {.rc = RETRY_ENOMEM, .worst_case_front_db = -1};
  test_oom c;
  retry_allocator a = test_oom_allocator(&c, fail);
  retry_error_clear(err);
  sim_kernel *k = sim_kernel_create(0, &a);
  if (k != NULL) {
    f.kernel = true;
    model_world *w = model_world_create(cfg, k, 1, err);
    if (w != NULL) {
      f.built = true;
      const model_results *r = model_world_results(w);
      for (size_t i = 0; i < r->n_edges; i++)
        if (strcmp(r->edges[i].from, "front") == 0 && strcmp(r->edges[i].to, "db") == 0)
          f.worst_case_front_db = (int64_t)r->edges[i].worst_case;
      f.rc = and_run ? model_world_run(w, NULL, NULL, err) : 0;
      if (f.rc == 0) f.peak = model_world_peak_in_flight(w);
      model_world_destroy(w);
    }
    sim_kernel_destroy(k);
  }
  f.n_calls = c.n_calls;
  assert_int_equal(c.live, 0);
  return f;
}

/* The worst-case figures need scratch memory: when it cannot be had, the world is not built
 * (no wrong figures), the error says why, and nothing leaks. The time series' table also comes
 * from the kernel's allocator, so its failures are refused the same way, as the world's. */
static void test_model_world_worst_case_out_of_memory_builds_no_world(void **state) {
  (void)state;
  expt_scenario *s = test_load(
      "{'duration': '1s',"
      " 'services': {"
      "  'front': {'service_time': '1ms', 'calls': [{'service': 'db',"
      "     'method': '/d.D/Do', 'policy': " TEST_P3
      "}]},"
      "  'db': {'service_time': '1ms'}},"
      " 'clients': {'c': {'target': 'front', 'methods': ['/f.F/Do'],"
      "   'policy': " TEST_P3 ", 'arrival': {'kind': 'script', 'at': ['0s']}}}}");
  int failures = 0, series_failures = 0;
  for (long fail = 0;; fail++) {
    retry_error err;
    failing_world f = world_with_failing_alloc(expt_scenario_config(s, 0), fail, false, &err);
    if (f.built) {
      assert_int_equal(f.worst_case_front_db, 9);
      break;
    }
    if (!f.kernel) continue;
    assert_int_equal(err.code, RETRY_ENOMEM);
    if (strstr(err.message, "worst-case") != NULL)
      failures++;
    else if (strstr(err.message, "building the world") != NULL)
      series_failures++;
    else
      fail_msg("unexpected message: %s", err.message);
  }
  assert_int_equal(failures, 4);     /* its four scratch arrays */
  assert_true(series_failures >= 2); /* the series and its columns, at least */
  expt_scenario_destroy(s);
}

/* Every allocation of a world, built and run, comes from its kernel's allocator (GSL's
 * generators aside): failing each one in turn, the world is either not built (RETRY_ENOMEM,
 * said so) or its run stops with RETRY_ENOMEM, and either way nothing leaks. The scenario has
 * nested calls, shared state on every edge, a ledger and enough calls in flight to grow the
 * pools and the series during the run. */
static void test_model_world_every_allocation_can_fail_cleanly(void **state) {
  (void)state;
  expt_scenario *s = test_load(
      "{'duration': '1s', 'bucket': '100ms',"
      " 'services': {"
      "  'front': {'service_time': '2ms', 'workers': 1024, 'side_effect': 'after',"
      "     'calls': [{'service': 'db', 'method': '/d.D/Do', 'policy': {"
      "       'retryThrottling': {'maxTokens': 10, 'tokenRatio': 0.1},"
      "       'methodConfig': [{'name': [{}], 'retryPolicy': {'maxAttempts': 3,"
      "         'initialBackoff': '0.01s', 'maxBackoff': '0.01s', 'backoffMultiplier': 1,"
      "         'retryableStatusCodes': ['UNAVAILABLE']}}]}}]},"
      "  'db': {'service_time': '300ms', 'workers': 512, 'side_effect': 'before',"
      "     'faults': [{'kind': 'refuse', 'status': 'UNAVAILABLE', 'rate': 0.3}]}},"
      " 'clients': {'c': {'count': 30, 'target': 'front', 'methods': ['/f.F/Do'],"
      "   'arrival': {'kind': 'open', 'rate': '1000/s'}, 'policy': " TEST_P3 "}}}");
  long stopped = 0; /* runs of a built world that an allocation stopped */
  int64_t peak = 0;
  for (long fail = 0;; fail++) {
    retry_error err;
    failing_world f = world_with_failing_alloc(expt_scenario_config(s, 0), fail, true, &err);
    if (!f.kernel) continue;
    if (f.rc == 0) {
      /* A success must mean fail_at is past every allocation the run made, not a failure
       * that went unnoticed. */
      assert_true(f.n_calls <= fail);
      peak = f.peak;
      break;
    }
    assert_int_equal(f.rc, RETRY_ENOMEM);
    assert_int_equal(err.code, RETRY_ENOMEM);
    assert_non_null(strstr(err.message, "out of memory"));
    stopped += f.built;
  }
  /* Failures were met while building and while running, the pools growing past one chunk of
   * 256 calls in flight among them. */
  assert_true(stopped > 6);
  assert_true(peak > 256);
  expt_scenario_destroy(s);
}

/* Memory follows calls in flight: a long run recycles the same few objects. */
static void test_model_world_memory_follows_in_flight(void **state) {
  (void)state;
  test_run x;
  test_run_text(&x,
                "{'duration': '200s', 'services': {'s': {'service_time': {'dist': 'exponential',"
                "   'mean': '1ms'}, 'workers': 2}},"
                " 'clients': {'c': {'target': 's', 'methods': ['/s.S/M'],"
                "   'arrival': {'kind': 'open', 'rate': '1000/s'}}}}",
                1);
  assert_true(x.r->calls_started > 190000);
  assert_true(model_world_peak_in_flight(x.w) < 100);
  assert_true(sim_kernel_pool_capacity(x.k) < 4096);
  /* A call without a policy is one request (no call, no operation of its own): objects
   * follow the calls in flight, one each. */
  assert_true(model_world_peak_objects(x.w) <= model_world_peak_in_flight(x.w));
  assert_true(model_world_peak_objects(x.w) > 0);
  test_run_free(&x);
}

/* }================================================================== */

/* {==================================================================
 * Random scenarios: invariants that hold whatever the world
 * =================================================================== */

static uint64_t mix(uint64_t *s) {
  uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

/* Appends printf output to a growing buffer. */
static void put(char *buf, size_t size, const char *fmt, ...) {
  size_t n = strlen(buf);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + n, size - n, fmt, ap);
  va_end(ap);
}

/* A random policy (no retries, retries, or hedging) with random shared state. */
static void random_policy(char *b, size_t size, uint64_t *r) {
  static const char *const codes = "['UNAVAILABLE', 'RESOURCE_EXHAUSTED', 'DEADLINE_EXCEEDED']";
  switch (mix(r) % 3) {
    case 0: put(b, size, "null"); return;
    case 1:
      put(b, size,
          "{'methodConfig': [{'name': [{}], 'retryPolicy': {'maxAttempts': %d,"
          " 'initialBackoff': '0.0%ds', 'maxBackoff': '0.2s', 'backoffMultiplier': 2,"
          " 'retryableStatusCodes': %s}, 'retrysim': {'jitter': '%s'}}]",
          (int)(mix(r) % 4) + 2, (int)(mix(r) % 9) + 1, codes,
          (const char *[]){"grpc", "full", "equal", "decorrelated", "none"}[mix(r) % 5]);
      break;
    default:
      put(b, size,
          "{'methodConfig': [{'name': [{}], 'hedgingPolicy': {'maxAttempts': %d,"
          " 'hedgingDelay': '0.0%ds', 'nonFatalStatusCodes': ['UNAVAILABLE']}}]",
          (int)(mix(r) % 3) + 2, (int)(mix(r) % 9) + 1);
      break;
  }
  if (mix(r) % 2) put(b, size, ", 'retryThrottling': {'maxTokens': 10, 'tokenRatio': 0.1}");
  uint64_t extra = mix(r) % 4;
  if (extra == 1) put(b, size, ", 'retrysim': {'budget': {'type': 'finagle'}}");
  if (extra == 2) put(b, size, ", 'retrysim': {'budget': {'type': 'envoy'}}");
  if (extra == 3)
    put(b, size,
        ", 'retrysim': {'circuitBreaker': {'type': 'consecutive', 'failureThreshold': 3,"
        " 'waitDurationInOpenState': '0.5s'}}");
  put(b, size, "}");
}

/* A random world: a chain of 1 to 3 services, random queues, faults and policies, one or two
 * client populations. */
static void random_scenario(char *b, size_t size, uint64_t seed) {
  uint64_t r = seed;
  int layers = (int)(mix(&r) % 3) + 1;
  b[0] = '\0';
  put(b, size, "{'duration': '3s', 'drain': '2s', 'bucket': '500ms', 'services': {");
  for (int l = 0; l < layers; l++) {
    put(b, size,
        "%s's%d': {'replicas': %d, 'workers': %d, 'queue': {'capacity': %d, 'discipline': '%s'},"
        " 'service_time': {'dist': 'exponential', 'mean': '%dms'}, 'deadline': '%s',"
        " 'lb': {'kind': '%s', 'avoid_previous': %s}, 'side_effect': '%s', 'dedup': %s,"
        " 'slowdown_per_busy': 0.%d, 'calls_mode': '%s'",
        l ? ", " : "", l, (int)(mix(&r) % 3) + 1, (int)(mix(&r) % 4) + 1, (int)(mix(&r) % 20),
        mix(&r) % 2 ? "fifo" : "lifo", (int)(mix(&r) % 20) + 1,
        (const char *[]){"ignore", "drop", "waste"}[mix(&r) % 3],
        (const char *[]){"round_robin", "random", "p2c"}[mix(&r) % 3],
        mix(&r) % 2 ? "true" : "false", (const char *[]){"none", "before", "after"}[mix(&r) % 3],
        mix(&r) % 2 ? "true" : "false", (int)(mix(&r) % 3), mix(&r) % 2 ? "sequential" : "fanout");
    put(b, size,
        ", 'faults': [{'kind': 'refuse', 'status': 'UNAVAILABLE', 'rate': 0.%d, 'start': '1s',"
        " 'end': '2s'}, {'kind': 'fail', 'status': 'INTERNAL', 'rate': 0.%d},"
        " {'kind': 'stall', 'delay': '50ms', 'rate': 0.%d, 'attempts': [1]},"
        " {'kind': 'pushback', 'pushback': '%s'}, {'kind': 'capacity', 'workers': 0,"
        " 'start': '2s', 'end': '2.5s'}]",
        (int)(mix(&r) % 9) + 1, (int)(mix(&r) % 3) + 1, (int)(mix(&r) % 5) + 1,
        (const char *[]){"20", "-1", "x"}[mix(&r) % 3]);
    if (l + 1 < layers) {
      int n = (int)(mix(&r) % 2) + 1;
      put(b, size, ", 'calls': [");
      for (int j = 0; j < n; j++) {
        put(b, size, "%s{'service': 's%d', 'method': '/m.M/C%d', 'deadline': '%dms', 'policy': ",
            j ? ", " : "", l + 1, j, (int)(mix(&r) % 300) + 20);
        random_policy(b, size, &r);
        put(b, size, "}");
      }
      put(b, size, "]");
    }
    put(b, size, "}");
  }
  put(b, size, "}, 'clients': {");
  int pops = (int)(mix(&r) % 2) + 1;
  for (int p = 0; p < pops; p++) {
    put(b, size,
        "%s'c%d': {'count': %d, 'target': 's0', 'methods': ['/a.A/M'], 'deadline': '%dms',",
        p ? ", " : "", p, (int)(mix(&r) % 5) + 1, (int)(mix(&r) % 500) + 50);
    if (mix(&r) % 2)
      put(b, size, " 'arrival': {'kind': 'open', 'rate': '%d/s'},", (int)(mix(&r) % 300) + 10);
    else
      put(b, size,
          " 'arrival': {'kind': 'closed', 'think': '%dms', 'user_retries': %d,"
          " 'user_retry_delay': '10ms'},",
          (int)(mix(&r) % 50) + 1, (int)(mix(&r) % 3));
    put(b, size, " 'network': {'dist': 'uniform', 'min': '0s', 'max': '%dms'}, 'policy': ",
        (int)(mix(&r) % 3) + 1);
    random_policy(b, size, &r);
    put(b, size, "}");
  }
  put(b, size, "}}");
}

static void test_model_world_random_scenarios_keep_invariants(void **state) {
  (void)state;
  static char text[16384];
  for (uint64_t seed = 1; seed <= 40; seed++) {
    random_scenario(text, sizeof text, seed);
    test_run x;
    test_run_text(&x, text, seed);
    /* TEST_WORLD_DUMP=N writes scenario N to /tmp/world-dump.json (double quotes), to rerun
     * it with retrysim; TEST_WORLD_VERBOSE prints what each scenario did. */
    if (getenv("TEST_WORLD_DUMP") != NULL && (uint64_t)atoi(getenv("TEST_WORLD_DUMP")) == seed) {
      FILE *f = fopen("/tmp/world-dump.json", "w");
      if (f != NULL) {
        for (const char *p = text; *p; p++)
          fputc(*p == 39 ? 34 : *p, f);
        fclose(f);
      }
    }
    if (getenv("TEST_WORLD_VERBOSE") != NULL)
      print_message(
          "seed %d: calls %lld ok %lld attempts %lld retries %lld hedges %lld exec %lld dup %lld\n",
          (int)seed, (long long)x.r->calls_started, (long long)x.r->calls_ok,
          (long long)x.r->attempts, (long long)x.r->retries, (long long)x.r->hedges,
          (long long)x.r->executions, (long long)x.r->duplicates);
    const model_results *r = x.r;
    /* Every call is counted once: ended OK, ended otherwise, or still in flight. */
    assert_int_equal(r->calls_started, r->calls_ok + r->calls_failed + r->calls_unfinished);
    int64_t stops = 0, statuses = 0;
    for (int i = 1; i < RETRY_STOP_N; i++)
      stops += r->by_stop[i];
    assert_int_equal(r->by_stop[RETRY_STOP_NONE], 0);
    for (int i = 0; i < RETRY_GRPC_N_CODES; i++)
      statuses += r->by_status.grpc[i];
    assert_int_equal(stops, r->calls_ok + r->calls_failed);
    assert_int_equal(statuses, r->calls_ok + r->calls_failed);
    assert_int_equal((int64_t)r->latency.count, r->calls_ok + r->calls_failed);
    assert_int_equal((int64_t)r->latency_ok.count, r->calls_ok);
    assert_true(r->calls_ok_in_deadline <= r->calls_ok);
    /* What the edges sent is what the services received. */
    int64_t top = 0;
    for (size_t e = 0; e < r->n_edges; e++) {
      assert_true(r->edges[e].attempts <= r->edges[e].calls * (int64_t)r->edges[e].max_attempts);
      assert_true(r->edges[e].worst_case >= (uint64_t)r->edges[e].max_attempts);
      if (r->edges[e].from[0] == 'c') top += r->edges[e].attempts;
    }
    assert_int_equal(top, r->attempts);
    for (size_t s = 0; s < r->n_services; s++) {
      int64_t in = 0;
      for (size_t e = 0; e < r->n_edges; e++)
        if (strcmp(r->edges[e].to, r->services[s].name) == 0) in += r->edges[e].attempts;
      /* Attempts still on their outbound hop when the run ended have not arrived. */
      assert_true(r->services[s].arrivals <= in);
      assert_true(r->services[s].arrivals >= in - 64);
      assert_true(r->services[s].busy_s <= r->services[s].capacity_s + 1e-9);
      assert_true(r->services[s].wasted_work_s <= r->services[s].busy_s + 1e-9);
    }
    /* The ledger: every operation executed at least once, duplicates are the rest. */
    assert_int_equal(r->duplicates, r->executions - r->operations);
    test_run_free(&x);
  }
}

/* Issue 11: "warmup" leaves the calls started before it out of the summary's figures and
 * nothing out of the time series. The same seed with and without it runs the same world (the
 * series are equal value for value), and the counts differ by exactly the calls started
 * before the warmup, which the series' offered column counts on its own. */
static const char warm[] =
    "{'duration': '12s', 'drain': '5s',"
    " 'services': {'api': {'replicas': 2, 'workers': 4, 'queue': {'capacity': 50},"
    "   'side_effect': 'before',"
    "   'service_time': {'dist': 'exponential', 'mean': '8ms'},"
    "   'faults': [{'kind': 'fail', 'status': 'UNAVAILABLE', 'rate': 0.3}]}},"
    " 'clients': {'web': {'count': 20, 'target': 'api', 'methods': ['/api.A/Get'],"
    "   'network': {'dist': 'exponential', 'mean': '1ms'},"
    "   'arrival': {'kind': 'open', 'rate': '400/s'},"
    "   'policy': {'methodConfig': [{'name': [{'service': 'api.A'}],"
    "     'retryPolicy': {'maxAttempts': 3, 'initialBackoff': '0.01s', 'maxBackoff': '0.1s',"
    "       'backoffMultiplier': 2, 'retryableStatusCodes': ['UNAVAILABLE']}}]}}},"
    " 'variants': [{'name': 'all'}, {'name': 'warm', 'set': {'warmup': '4s'}}]}";

static void test_model_world_warmup_leaves_out_calls_started_before_it(void **state) {
  (void)state;
  test_run a, b;
  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);
  a.s = test_load(warm);
  test_run_loaded(&a, 0, 11);
  b.s = a.s;
  test_run_loaded(&b, 1, 11);
  const model_results *x = a.r, *y = b.r;
  /* The same world: the time series keeps everything, value for value. */
  assert_int_equal(y->warmup_ns, 4000000000LL);
  assert_int_equal(x->ts.n_buckets, y->ts.n_buckets);
  assert_int_equal(x->ts.n_columns, y->ts.n_columns);
  for (size_t i = 0; i < x->ts.n_buckets * x->ts.n_columns; i++) {
    double u = x->ts.values[i], v = y->ts.values[i];
    assert_true(u == v || (isnan(u) && isnan(v)));
  }
  /* Calls started in [0, 4 s): the offered column of the first four buckets. */
  int col = test_ts_col(&x->ts, "offered_rps");
  assert_true(col >= 0);
  double before = 0;
  for (size_t bk = 0; bk < 4; bk++)
    before += x->ts.values[bk * x->ts.n_columns + (size_t)col];
  assert_true(before > 1000);
  assert_int_equal(x->calls_started - y->calls_started, (int64_t)before);
  assert_int_equal(y->calls_ok + y->calls_failed + y->calls_unfinished, y->calls_started);
  assert_int_equal((int64_t)y->latency.count, y->calls_ok + y->calls_failed);
  const model_edge_stats *ex = test_edge(x, "web", "api"), *ey = test_edge(y, "web", "api");
  assert_int_equal(ex->calls - ey->calls, (int64_t)before);
  assert_int_equal(ey->calls, y->calls_started);
  assert_int_equal(ey->attempts, y->attempts);
  assert_true(y->attempts < x->attempts && y->attempts >= y->calls_started);
  assert_true(y->retries < x->retries && y->retries > 0);
  /* Side effects: operations made after the warmup, still consistent. */
  assert_true(y->executions < x->executions && y->executions > 0);
  assert_int_equal(y->duplicates, y->executions - y->operations);
  /* Services: the window after the warmup, so a utilization of the same order. */
  const model_service_stats *sx = test_svc(x, "api"), *sy = test_svc(y, "api");
  assert_true(sy->arrivals < sx->arrivals && sy->arrivals > 0);
  assert_true(sy->busy_s < sx->busy_s && sy->busy_s > 0);
  assert_true(sy->capacity_s < sx->capacity_s);
  double ux = sx->busy_s / sx->capacity_s, uy = sy->busy_s / sy->capacity_s;
  assert_true(fabs(ux - uy) < 0.1 * ux);
  /* Goodput is per second of the measured time. */
  assert_int_equal(y->duration_ns, 8000000000LL);
  test_run_close(&a);
  test_run_free(&b);
}

/* Calls without a policy, channel state or trace go without the retry engine ("bare" calls,
 * model_call.c), deciding as the engine decides for them. A trace sink that selects no call
 * sends every call through the engine instead, and tracing changes nothing the world does:
 * the two runs must agree on every figure. The world mixes deadlines met and missed (with
 * and without propagation), failures, streams and a gateway's map, all without a policy. */
static const char bare[] =
    "{'duration': '10s', 'drain': '2s',"
    " 'services': {'api': {'replicas': 2, 'workers': 4, 'queue': {'capacity': 20},"
    "   'service_time': {'dist': 'exponential', 'mean': '2ms'},"
    "   'calls': [{'service': 'db', 'method': '/db.D/Get', 'deadline': '15ms'},"
    "             {'service': 'db', 'method': '/db.D/Scan', 'stream': 'server', 'stream_items': 3,"
    "              'deadline': '40ms', 'propagate_deadline': false}],"
    "   'faults': [{'kind': 'fail', 'status': 'UNAVAILABLE', 'rate': 0.1}]},"
    "  'db': {'workers': 8, 'service_time': {'dist': 'exponential', 'mean': '3ms'},"
    "   'queue': {'capacity': 30},"
    "   'faults': [{'kind': 'refuse', 'status': 'RESOURCE_EXHAUSTED', 'rate': 0.05}]}},"
    " 'clients': {'web': {'count': 5, 'target': 'api', 'methods': ['/api.A/Get'],"
    "   'deadline': '25ms', 'network': {'dist': 'exponential', 'mean': '1ms'},"
    "   'arrival': {'kind': 'open', 'rate': '500/s'}}}}";

static bool select_none(void *ctx, const model_trace_call *call) {
  (void)ctx;
  (void)call;
  return false;
}
static void record_none(void *ctx, const model_trace_call *call, const retry_trace_rec *rec) {
  (void)ctx;
  (void)call;
  (void)rec;
  fail_msg("no call is selected");
}

static void test_model_world_bare_calls_decide_as_the_engine(void **state) {
  (void)state;
  test_run x[2];
  for (int i = 0; i < 2; i++) {
    retry_error err;
    retry_error_clear(&err);
    memset(&x[i], 0, sizeof x[i]);
    x[i].s = test_load(bare);
    x[i].k = sim_kernel_create(0, NULL);
    x[i].w = model_world_create(expt_scenario_config(x[i].s, 0), x[i].k, 5, &err);
    assert_non_null(x[i].w);
    model_trace_sink sink = {select_none, record_none, NULL};
    if (i == 1) model_world_set_trace(x[i].w, &sink);
    assert_int_equal(model_world_run(x[i].w, NULL, NULL, &err), 0);
    x[i].r = model_world_results(x[i].w);
  }
  const model_results *a = x[0].r, *b = x[1].r;
  assert_true(a->calls_ok > 1000 && a->calls_failed > 100);
  assert_true(a->by_stop[RETRY_STOP_DEADLINE] > 10 && a->by_stop[RETRY_STOP_NO_RETRY_POLICY] > 10);
  assert_int_equal(a->events, b->events);
  assert_int_equal(a->calls_started, b->calls_started);
  assert_int_equal(a->calls_ok, b->calls_ok);
  assert_int_equal(a->calls_ok_in_deadline, b->calls_ok_in_deadline);
  assert_int_equal(a->attempts, b->attempts);
  assert_memory_equal(a->by_stop, b->by_stop, sizeof a->by_stop);
  assert_memory_equal(&a->by_status, &b->by_status, sizeof a->by_status);
  assert_memory_equal(&a->latency, &b->latency, sizeof a->latency);
  assert_int_equal(a->n_edges, 3);
  for (size_t e = 0; e < a->n_edges; e++) {
    const model_edge_stats *p = &a->edges[e], *q = &b->edges[e];
    assert_true(p->calls > 100);
    assert_int_equal(p->calls, q->calls);
    assert_int_equal(p->ok, q->ok);
    assert_int_equal(p->failed, q->failed);
    assert_memory_equal(p->by_stop, q->by_stop, sizeof p->by_stop);
    assert_memory_equal(&p->by_status, &q->by_status, sizeof p->by_status);
    assert_memory_equal(&p->latency, &q->latency, sizeof p->latency);
  }
  assert_true(a->edges[1].by_stop[RETRY_STOP_DEADLINE] > 0);
  assert_memory_equal(a->ts.values, b->ts.values,
                      a->ts.n_buckets * a->ts.n_columns * sizeof(double));
  test_run_free(&x[0]);
  test_run_free(&x[1]);
}

/* }================================================================== */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_model_world_mm1_matches_theory),
      cmocka_unit_test(test_model_world_mmc_matches_erlang_c),
      cmocka_unit_test(test_model_world_same_seed_same_results),
      cmocka_unit_test(test_model_world_bare_calls_decide_as_the_engine),
      cmocka_unit_test(test_model_world_warmup_leaves_out_calls_started_before_it),
      cmocka_unit_test(test_model_world_variants_see_same_arrivals),
      cmocka_unit_test(test_model_world_every_allocation_can_fail_cleanly),
      cmocka_unit_test(test_model_world_worst_case_out_of_memory_builds_no_world),
      cmocka_unit_test(test_model_world_memory_follows_in_flight),
      cmocka_unit_test(test_model_world_random_scenarios_keep_invariants),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
