/*
 * test_model_overload.c: a service's own overload rules (models/model_overload.c), each on its
 * own and then in a running world: the admission token bucket admits exactly rate x time plus
 * its burst; controlled delay bounds queueing at the interval while the queue empties and at
 * the target once it has not emptied for an interval, and serves newest first then (adaptive
 * LIFO, "Fail at Scale"); the versioned row refuses a write whose read is stale (the AWS
 * backoff-and-jitter article's optimistic concurrency).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "expt/expt_scenario.h"
#include "models/model_acc.h"
#include "models/model_overload.h"
#include "models/model_world.h"
#include "sim/sim_event.h"
#include "sim/sim_rng.h"

#define MS INT64_C(1000000)
#define S INT64_C(1000000000)

/* {==================================================================
 * The rules on their own
 * =================================================================== */

/* A full bucket of 5 admits 5 at once and refuses the 6th; then one a 1/rate later. */
static void test_model_overload_bucket_starts_full_and_admits_burst(void **state) {
  (void)state;
  model_admission_cfg cfg = {.on = true, .rate = 10, .burst = 5, .status = 8};
  model_bucket b;
  model_bucket_init(&b, &cfg, 0);
  for (int i = 0; i < 5; i++)
    assert_true(model_bucket_admit(&b, &cfg, 0));
  assert_false(model_bucket_admit(&b, &cfg, 0));
  assert_false(model_bucket_admit(&b, &cfg, 99 * MS)); /* 0.99 token */
  assert_true(model_bucket_admit(&b, &cfg, 100 * MS)); /* exactly one earned */
  assert_false(model_bucket_admit(&b, &cfg, 100 * MS));
}

/* Offered 1000 a second for 10 s, a bucket of rate 100 and burst 1 admits exactly 100 x 10 + 1
 * (the initial token, then one per 10 ms); the balance never exceeds the burst. */
static void test_model_overload_bucket_admits_exactly_rate_per_second(void **state) {
  (void)state;
  model_admission_cfg cfg = {.on = true, .rate = 100, .burst = 1, .status = 8};
  model_bucket b;
  model_bucket_init(&b, &cfg, 0);
  int admitted = 0;
  for (int64_t t = 0; t <= 10 * S; t += MS)
    admitted += model_bucket_admit(&b, &cfg, t);
  assert_int_equal(admitted, 1001);
  /* Idle for an hour: still at most the burst. */
  model_bucket_admit(&b, &cfg, 3600 * S);
  assert_true(b.tokens <= cfg.burst);
  assert_false(model_bucket_admit(&b, &cfg, 3600 * S));
}

/* Fail at Scale's rule with its own numbers (M = 5 ms, N = 100 ms): a queue empty within the
 * last 100 ms lets a request wait 100 ms; one not empty for longer, only 5 ms. */
static void test_model_overload_codel_bound_is_interval_then_target(void **state) {
  (void)state;
  model_codel_cfg cfg = {.on = true, .target_ns = 5 * MS, .interval_ns = 100 * MS};
  assert_int_equal(model_codel_bound(&cfg, 1000 * MS, 1000 * MS), 100 * MS);
  assert_int_equal(model_codel_bound(&cfg, 1000 * MS, 1100 * MS), 100 * MS); /* exactly N */
  assert_false(model_codel_overloaded(&cfg, 1000 * MS, 1100 * MS));
  assert_true(model_codel_overloaded(&cfg, 1000 * MS, 1100 * MS + 1));
  assert_int_equal(model_codel_bound(&cfg, 1000 * MS, 1100 * MS + 1), 5 * MS);
}

/* Adaptive LIFO: FIFO while the queue keeps emptying, LIFO once it has not emptied for an
 * interval; never LIFO when the option is off. */
static void test_model_overload_codel_adaptive_lifo_only_while_overloaded(void **state) {
  (void)state;
  model_codel_cfg cfg = {
      .on = true, .target_ns = 5 * MS, .interval_ns = 100 * MS, .adaptive_lifo = true};
  assert_false(model_codel_lifo(&cfg, 0, 50 * MS));
  assert_true(model_codel_lifo(&cfg, 0, 150 * MS));
  cfg.adaptive_lifo = false;
  assert_false(model_codel_lifo(&cfg, 0, 150 * MS));
}

/* Two writers read version 0; the first write commits (version 1), the second is refused and
 * changes nothing; a fresh read then succeeds. */
static void test_model_overload_row_refuses_stale_write(void **state) {
  (void)state;
  model_row row = {0};
  int64_t a = model_row_read(&row), b = model_row_read(&row);
  assert_true(model_row_write(&row, a));
  assert_int_equal(row.version, 1);
  assert_false(model_row_write(&row, b));
  assert_int_equal(row.version, 1);
  assert_true(model_row_write(&row, model_row_read(&row)));
  assert_int_equal(row.version, 2);
}

/* }================================================================== */

/* Envoy's gradient: g = clamp(minRTT x 1.25 / sampleRTT, 0.5, 2), then floor(l + sqrt(l)) for
 * l = limit x g, within [min_concurrency, max_concurrency]. */
static void test_model_overload_acc_gradient_limit_formula(void **state) {
  (void)state;
  model_acc_cfg cfg = {.on = true, .buffer = 0.25, .min_concurrency = 3, .max_concurrency = 1000};
  double g = 0;
  /* sampleRTT = buffered minRTT: g = 1, 10 + sqrt(10) = 13.16 -> 13. */
  assert_int_equal(model_acc_new_limit(&cfg, 10, 10 * MS, 12500000, &g), 13);
  assert_true(g == 1.0);
  /* Much slower than minRTT: g clamps at 0.5, l = 5, 5 + 2.24 -> 7. */
  assert_int_equal(model_acc_new_limit(&cfg, 10, 10 * MS, 50 * MS, &g), 7);
  assert_true(g == 0.5);
  /* Much faster: g clamps at 2, l = 20, 20 + 4.47 -> 24. */
  assert_int_equal(model_acc_new_limit(&cfg, 10, 10 * MS, 1 * MS, &g), 24);
  assert_true(g == 2.0);
  /* The bounds. */
  assert_int_equal(model_acc_new_limit(&cfg, 3, 10 * MS, 100 * MS, NULL), 3);
  cfg.max_concurrency = 20;
  assert_int_equal(model_acc_new_limit(&cfg, 10, 10 * MS, 1 * MS, NULL), 20);
}

/* The controller starts in a minRTT window at min_concurrency (3): a 4th request is blocked.
 * request_count samples end the window: minRTT is their percentile and the limit goes back to
 * the one deferred (3, the first time); the next sample window moves it by the gradient. */
static void test_model_overload_acc_min_rtt_window_then_gradient(void **state) {
  (void)state;
  model_acc_cfg cfg = {.on = true,
                       .update_interval_ns = 100 * MS,
                       .min_rtt_interval_ns = 10 * S,
                       .jitter = 0.15,
                       .request_count = 5,
                       .percentile = 0.5,
                       .min_concurrency = 3,
                       .max_concurrency = 1000,
                       .buffer = 0.25};
  gsl_rng *r = sim_rng_stream_create(1, "test", "acc", 0);
  model_acc a;
  model_acc_init(&a, &cfg, 0);
  assert_int_equal(a.limit, 3);
  for (int i = 0; i < 3; i++)
    assert_true(model_acc_forward(&a, 0, r));
  assert_false(model_acc_forward(&a, 0, r));
  /* Five answers of 10 ms each (another forwarded as each finishes) end the window. */
  int64_t t = 0;
  for (int i = 0; i < 5; i++) {
    t += 10 * MS;
    model_acc_record(&a, t - 10 * MS, t, r);
    assert_true(model_acc_forward(&a, t, r));
  }
  assert_int_equal(a.deferred, 0);
  assert_in_range(a.min_rtt_ns, 99 * MS / 10, 101 * MS / 10);
  assert_int_equal(a.limit, 3);
  /* The next minRTT window is due in 10 s plus up to 15 %. */
  assert_in_range(a.next_min_rtt_ns, t + 10 * S, t + 11500 * MS);
  /* A sample window of 10 ms answers: g = 1.25, l = 3.75, 3.75 + 1.94 -> 5. */
  model_acc_record(&a, t, t + 10 * MS, r);
  model_acc_advance(&a, t + 100 * MS, r);
  assert_int_equal(a.limit, 5);
  /* The minRTT timer opens a new window: the limit drops to 3 and 5 is deferred. */
  model_acc_advance(&a, a.next_min_rtt_ns, r);
  assert_int_equal(a.limit, 3);
  assert_int_equal(a.deferred, 5);
  gsl_rng_free(r);
}

/* Five sample windows in a row that set the limit to min_concurrency start a minRTT window at
 * once (Envoy's guard against a wrong minRTT). */
static void test_model_overload_acc_five_windows_at_minimum_resample_min_rtt(void **state) {
  (void)state;
  model_acc_cfg cfg = {.on = true,
                       .update_interval_ns = 100 * MS,
                       .min_rtt_interval_ns = 60 * S,
                       .jitter = 0,
                       .request_count = 1,
                       .percentile = 0.5,
                       .min_concurrency = 3,
                       .max_concurrency = 1000,
                       .buffer = 0.25};
  gsl_rng *r = sim_rng_stream_create(1, "test", "acc", 0);
  model_acc a;
  model_acc_init(&a, &cfg, 0);
  assert_true(model_acc_forward(&a, 0, r));
  model_acc_record(&a, 0, 1 * MS, r); /* minRTT 1 ms, the window is over */
  assert_int_equal(a.deferred, 0);
  int64_t t = 1 * MS;
  for (int k = 1; k <= 5; k++) {
    /* Each window sees one answer 100x slower than minRTT: the limit stays at 3. */
    assert_int_equal(a.deferred, 0);
    assert_true(model_acc_forward(&a, t, r));
    model_acc_record(&a, t, t + 100 * MS - 1, r);
    t += 100 * MS;
    model_acc_advance(&a, t, r);
    assert_int_equal(a.limit, 3);
  }
  assert_true(a.deferred > 0); /* a minRTT window is open again */
  assert_int_equal(a.epoch_ns, t);
  gsl_rng_free(r);
}

/* A method's label wins over its caller's, the caller's over the default. */
static void test_model_overload_criticality_method_then_caller_then_default(void **state) {
  (void)state;
  char pay[] = "/a.A/Pay", batch[] = "batch";
  model_criticality_cfg cfg = {.on = true, .dflt = MODEL_CRIT_CRITICAL};
  cfg.methods[0] = (model_crit_rule){.name = pay, .crit = MODEL_CRIT_CRITICAL_PLUS};
  cfg.n_methods = 1;
  cfg.callers[0] = (model_crit_rule){.name = batch, .crit = MODEL_CRIT_SHEDDABLE};
  cfg.n_callers = 1;
  assert_int_equal(model_criticality_of(&cfg, "/a.A/Pay", "batch"), MODEL_CRIT_CRITICAL_PLUS);
  assert_int_equal(model_criticality_of(&cfg, "/a.A/Get", "batch"), MODEL_CRIT_SHEDDABLE);
  assert_int_equal(model_criticality_of(&cfg, "/a.A/Get", "web"), MODEL_CRIT_CRITICAL);
}

/* The SRE book's rule: a criticality is refused only while every lower one is. With
 * thresholds 5, 10, 40 and none for CRITICAL_PLUS, a queue of 7 sheds SHEDDABLE only, 10 also
 * SHEDDABLE_PLUS, 40 also CRITICAL (and an unlabelled request, CRITICAL by default); nothing
 * sheds CRITICAL_PLUS. */
static void test_model_overload_shedding_lowest_criticality_first(void **state) {
  (void)state;
  model_shedding_cfg cfg = {.on = true};
  cfg.threshold[MODEL_CRIT_SHEDDABLE] = 5;
  cfg.threshold[MODEL_CRIT_SHEDDABLE_PLUS] = 10;
  cfg.threshold[MODEL_CRIT_CRITICAL] = 40;
  cfg.threshold[MODEL_CRIT_CRITICAL_PLUS] = INT32_MAX;
  assert_false(model_shedding_refuses(&cfg, MODEL_CRIT_SHEDDABLE, 4));
  assert_true(model_shedding_refuses(&cfg, MODEL_CRIT_SHEDDABLE, 7));
  assert_false(model_shedding_refuses(&cfg, MODEL_CRIT_SHEDDABLE_PLUS, 7));
  assert_true(model_shedding_refuses(&cfg, MODEL_CRIT_SHEDDABLE_PLUS, 10));
  assert_false(model_shedding_refuses(&cfg, MODEL_CRIT_CRITICAL, 39));
  assert_false(model_shedding_refuses(&cfg, MODEL_CRIT_UNSET, 39));
  assert_true(model_shedding_refuses(&cfg, MODEL_CRIT_CRITICAL, 40));
  assert_true(model_shedding_refuses(&cfg, MODEL_CRIT_UNSET, 40));
  assert_false(model_shedding_refuses(&cfg, MODEL_CRIT_CRITICAL_PLUS, 10000000));
}

/* The share of retries decays with the window: 9 first attempts and 1 retry at once is 10 %;
 * one window later the old arrivals weigh 1/e, so a new retry makes it
 * (0.1/e + 1) / (1/e + 1). */
static void test_model_overload_retry_share_decays_with_window(void **state) {
  (void)state;
  model_retry_share sh = {0};
  for (int i = 0; i < 9; i++)
    model_retry_share_add(&sh, 10 * S, 0, false);
  model_retry_share_add(&sh, 10 * S, 0, true);
  assert_true(fabs(model_retry_share_ratio(&sh) - 0.1) < 1e-12);
  model_retry_share_add(&sh, 10 * S, 10 * S, true);
  double e = exp(-1.0);
  assert_true(fabs(model_retry_share_ratio(&sh) - (e + 1) / (10 * e + 1)) < 1e-12);
}

/* {==================================================================
 * In a running world
 * =================================================================== */

typedef struct run {
  expt_scenario *s;
  sim_kernel *k;
  model_world *w;
  const model_results *r;
} run;

/* Loads (single quotes for double) and runs the scenario's first run with seed 1. */
static void run_text(run *x, const char *text) {
  memset(x, 0, sizeof *x);
  char *json = strdup(text);
  assert_non_null(json);
  for (char *p = json; *p; p++)
    if (*p == '\'') *p = '"';
  retry_error err;
  retry_error_clear(&err);
  x->s = expt_scenario_load_string(json, "<test>", NULL, 0, &err);
  free(json);
  if (x->s == NULL) {
    char buf[700];
    retry_error_format(&err, buf, sizeof buf);
    fail_msg("scenario failed to load: %s", buf);
  }
  x->k = sim_kernel_create(0, NULL);
  assert_non_null(x->k);
  x->w = model_world_create(expt_scenario_config(x->s, 0), x->k, 1, &err);
  assert_non_null(x->w);
  assert_int_equal(model_world_run(x->w, NULL, NULL, &err), 0);
  x->r = model_world_results(x->w);
}

static void run_free(run *x) {
  model_world_destroy(x->w);
  sim_kernel_destroy(x->k);
  expt_scenario_destroy(x->s);
}

/* Three clients write at once without retries: the row has no worker queue in the way (10
 * workers), so all three read version 0 and the first to finish wins; the other two are
 * refused with ABORTED. With retries on ABORTED, every write commits in the end. */
static void test_model_overload_contention_one_writer_wins_a_round(void **state) {
  (void)state;
  run x;
  run_text(&x,
           "{'duration': '1s', 'services': {'row': {'workers': 10, "
           "'service_time': {'dist': 'uniform', 'min': '1ms', 'max': '2ms'}, "
           "'contention': {}}}, 'clients': {'w': {'count': 3, 'target': 'row', "
           "'arrival': {'kind': 'script', 'at': ['0s']}, 'methods': ['/r.R/W']}}}");
  assert_int_equal(x.r->calls_ok, 1);
  assert_int_equal(x.r->by_status.grpc[RETRY_GRPC_ABORTED], 2);
  assert_int_equal(x.r->services[0].conflicts, 2);
  run_free(&x);
  run_text(&x,
           "{'duration': '1s', 'services': {'row': {'workers': 10, "
           "'service_time': {'dist': 'uniform', 'min': '1ms', 'max': '2ms'}, "
           "'contention': {}}}, 'clients': {'w': {'count': 3, 'target': 'row', "
           "'arrival': {'kind': 'script', 'at': ['0s']}, 'methods': ['/r.R/W'], "
           "'policy': {'methodConfig': [{'name': [{}], 'retryPolicy': {'maxAttempts': 5, "
           "'initialBackoff': '0.01s', 'maxBackoff': '1s', 'backoffMultiplier': 2, "
           "'retryableStatusCodes': ['ABORTED']}}]}}}}");
  assert_int_equal(x.r->calls_ok, 3);
  assert_int_equal(x.r->services[0].conflicts, x.r->attempts - 3);
  run_free(&x);
}

/* Offered 1000 a second for 10 s (Poisson), admission at 100/s with a burst of 10 lets in the
 * 10 tokens it starts with plus the 1000 it earns (less the fraction of one earned at the
 * end), and refuses the rest with its status: under this overload the bucket is never full,
 * so no token is lost. */
static void test_model_overload_admission_admits_exactly_c_per_second(void **state) {
  (void)state;
  run x;
  run_text(&x,
           "{'duration': '10s', 'services': {'api': {'workers': 100, 'service_time': '1ms', "
           "'admission': {'rate': '100/s', 'burst': 10, 'status': 'UNAVAILABLE'}}}, "
           "'clients': {'c': {'target': 'api', 'arrival': {'kind': 'open', 'rate': '1000/s'}, "
           "'methods': ['/a.A/M']}}}");
  const model_service_stats *s = &x.r->services[0];
  int64_t admitted = s->arrivals - s->admission_rejected;
  assert_in_range(admitted, 1009, 1010);
  assert_int_equal(x.r->calls_ok, admitted);
  assert_int_equal(x.r->by_status.grpc[RETRY_GRPC_UNAVAILABLE], s->admission_rejected);
  assert_int_equal(s->rejected, s->admission_rejected);
  run_free(&x);
}

/* A service at twice its capacity: without CoDel its FIFO queue (capacity 1000) fills and
 * requests wait seconds; with CoDel a request that waited past the bound is refused, so what
 * is served waited at most the 100 ms interval, and most are dropped, not served late. */
static void test_model_overload_codel_bounds_queueing_under_overload(void **state) {
  (void)state;
  const char *base =
      "{'duration': '20s', 'services': {'api': {'workers': 1, "
      "'service_time': '10ms'%s}}, 'clients': {'c': {'target': 'api', "
      "'arrival': {'kind': 'open', 'rate': '200/s'}, 'methods': ['/a.A/M']}}}";
  char text[600];
  run x;
  snprintf(text, sizeof text, base, "");
  run_text(&x, text);
  double fifo_p99 = (double)sim_hist_quantile(&x.r->latency_ok, 0.99);
  assert_true(fifo_p99 > 2e9); /* seconds of queueing */
  run_free(&x);
  snprintf(text, sizeof text, base, ", 'codel': {'adaptive_lifo': false}");
  run_text(&x, text);
  const model_service_stats *s = &x.r->services[0];
  assert_true(s->codel_dropped > 1000);
  /* Waited at most 100 ms, plus the 10 ms of work. */
  assert_true(x.r->latency_ok.max <= 110 * MS + 1);
  int64_t fifo_p50 = sim_hist_quantile(&x.r->latency_ok, 0.5);
  run_free(&x);
  /* Adaptive LIFO serves the newest while overloaded: the median served request waited much
   * less than under CoDel with FIFO (about 25 ms against 55 ms here). */
  snprintf(text, sizeof text, base, ", 'codel': {}");
  run_text(&x, text);
  assert_true(sim_hist_quantile(&x.r->latency_ok, 0.5) < fifo_p50 * 7 / 10);
  assert_true(x.r->latency_ok.max <= 110 * MS + 1);
  run_free(&x);
}

/* An HTTP service at 150 % of its capacity behind the filter: what it refuses is the filter's
 * 503, the summary and the time series carry the limit, and the limit stays within its
 * bounds. */
static void test_model_overload_acc_rejects_above_limit_with_503(void **state) {
  (void)state;
  run x;
  run_text(&x,
           "{'duration': '20s', 'services': {'api': {'space': 'http', 'workers': 8, "
           "'service_time': {'dist': 'exponential', 'mean': '10ms'}, "
           "'adaptive_concurrency': {'update_interval': '100ms', 'min_rtt_interval': '5s', "
           "'max_concurrency': 40}}}, 'clients': {'c': {'target': 'api', "
           "'arrival': {'kind': 'open', 'rate': '1200/s'}, 'methods': ['/a.A/M']}}}");
  const model_service_stats *s = &x.r->services[0];
  assert_true(s->acc_rejected > 1000);
  assert_int_equal(x.r->by_status.http[503], s->acc_rejected);
  assert_int_equal(s->rejected, s->acc_rejected);
  assert_true(s->acc_limit >= 3 && s->acc_limit <= 40);
  const model_timeseries *ts = &x.r->ts;
  size_t col = ts->n_columns;
  for (size_t j = 0; j < ts->n_columns; j++)
    if (strcmp(ts->names[j], "api_concurrency_limit") == 0) col = j;
  assert_true(col < ts->n_columns);
  for (size_t b = 0; b < ts->n_buckets; b++) {
    double v = ts->values[b * ts->n_columns + col];
    assert_true(v >= 3 && v <= 40);
  }
  run_free(&x);
}

/* Two populations at twice the capacity: the batch one labelled SHEDDABLE by its caller name
 * is shed, the web one (CRITICAL by default) is not; a downstream call of a batch request
 * carries SHEDDABLE to the backend, which sheds it there too without labelling it itself. */
static void test_model_overload_shedding_sheds_the_sheddable_caller(void **state) {
  (void)state;
  run x;
  run_text(&x,
           "{'duration': '20s', 'services': {'api': {'workers': 4, 'queue': {'capacity': 100}, "
           "'service_time': {'dist': 'exponential', 'mean': '10ms'}, "
           "'criticality': {'callers': {'batch': 'SHEDDABLE'}}, "
           "'shedding': {'SHEDDABLE': 5, 'CRITICAL': 40}}}, 'clients': {"
           "'web': {'target': 'api', 'arrival': {'kind': 'open', 'rate': '300/s'}, "
           "'methods': ['/a.A/Get']}, 'batch': {'target': 'api', 'arrival': {'kind': 'open', "
           "'rate': '300/s'}, 'methods': ['/a.A/Get']}}}");
  const model_service_stats *s = &x.r->services[0];
  assert_true(s->shed > 1000);
  assert_int_equal(s->rejected, s->shed);
  const model_edge_stats *web = &x.r->edges[0], *batch = &x.r->edges[1];
  assert_string_equal(web->from, "web");
  assert_int_equal(web->failed, 0);
  assert_int_equal(batch->by_status.grpc[RETRY_GRPC_RESOURCE_EXHAUSTED], s->shed);
  run_free(&x);
  /* Propagation: the backend has shedding but no labels of its own. */
  run_text(&x,
           "{'duration': '10s', 'services': {'front': {'workers': 1000, 'service_time': '0ms', "
           "'criticality': {'default': 'SHEDDABLE'}, "
           "'calls': [{'service': 'back', 'method': '/b.B/Get'}]}, "
           "'back': {'workers': 1, 'queue': {'capacity': 100}, 'service_time': '10ms', "
           "'shedding': {'SHEDDABLE': 3}}}, 'clients': {'c': {'target': 'front', "
           "'arrival': {'kind': 'open', 'rate': '200/s'}, 'methods': ['/f.F/Get']}}}");
  assert_true(x.r->services[1].shed > 500);
  assert_int_equal(x.r->services[1].rejected, x.r->services[1].shed);
  run_free(&x);
}

/* Retries at an overloaded replica: without the server's budget the clients' 3 attempts make
 * about 2.2 arrivals a call; with it, retries are refused while the queue holds 10, and once
 * retries pass 10 % of recent arrivals every refusal is RESOURCE_EXHAUSTED with pushback -1,
 * which stops the client's retries (stop reason pushback_stop): about 1.1 a call. */
static void test_model_overload_retry_budget_says_dont_retry(void **state) {
  (void)state;
  const char *base =
      "{'duration': '20s', 'services': {'api': {'workers': 4, 'queue': {'capacity': 50}, "
      "'service_time': {'dist': 'exponential', 'mean': '10ms'}%s}}, 'clients': {'web': {"
      "'target': 'api', 'arrival': {'kind': 'open', 'rate': '600/s'}, 'methods': ['/a.A/Get'], "
      "'policy': {'methodConfig': [{'name': [{}], 'retryPolicy': {'maxAttempts': 3, "
      "'initialBackoff': '0.01s', 'maxBackoff': '0.1s', 'backoffMultiplier': 2, "
      "'retryableStatusCodes': ['RESOURCE_EXHAUSTED']}}]}}}}";
  char text[900];
  run x;
  snprintf(text, sizeof text, base, "");
  run_text(&x, text);
  double plain = (double)x.r->services[0].arrivals / (double)x.r->calls_started;
  assert_true(plain > 2.0);
  assert_int_equal(x.r->by_stop[RETRY_STOP_PUSHBACK_STOP], 0);
  run_free(&x);
  snprintf(text, sizeof text, base, ", 'retry_budget': {'queue': 10, 'ratio': 0.1}");
  run_text(&x, text);
  const model_service_stats *s = &x.r->services[0];
  double budget = (double)s->arrivals / (double)x.r->calls_started;
  assert_true(budget < 1.3);
  assert_true(s->retries_rejected > 0);
  assert_true(s->dont_retry > 1000);
  /* A don't-retry reply to a last attempt ends the call by max_attempts instead. */
  assert_true(x.r->by_stop[RETRY_STOP_PUSHBACK_STOP] <= s->dont_retry);
  assert_true(x.r->by_stop[RETRY_STOP_PUSHBACK_STOP] >= s->dont_retry * 9 / 10);
  run_free(&x);
}

/* }================================================================== */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_model_overload_bucket_starts_full_and_admits_burst),
      cmocka_unit_test(test_model_overload_bucket_admits_exactly_rate_per_second),
      cmocka_unit_test(test_model_overload_codel_bound_is_interval_then_target),
      cmocka_unit_test(test_model_overload_codel_adaptive_lifo_only_while_overloaded),
      cmocka_unit_test(test_model_overload_row_refuses_stale_write),
      cmocka_unit_test(test_model_overload_criticality_method_then_caller_then_default),
      cmocka_unit_test(test_model_overload_shedding_lowest_criticality_first),
      cmocka_unit_test(test_model_overload_retry_share_decays_with_window),
      cmocka_unit_test(test_model_overload_acc_gradient_limit_formula),
      cmocka_unit_test(test_model_overload_acc_min_rtt_window_then_gradient),
      cmocka_unit_test(test_model_overload_acc_five_windows_at_minimum_resample_min_rtt),
      cmocka_unit_test(test_model_overload_contention_one_writer_wins_a_round),
      cmocka_unit_test(test_model_overload_admission_admits_exactly_c_per_second),
      cmocka_unit_test(test_model_overload_codel_bounds_queueing_under_overload),
      cmocka_unit_test(test_model_overload_acc_rejects_above_limit_with_503),
      cmocka_unit_test(test_model_overload_shedding_sheds_the_sheddable_caller),
      cmocka_unit_test(test_model_overload_retry_budget_says_dont_retry),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
