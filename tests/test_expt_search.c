/*
 * test_expt_search.c: the tipping-point search (expt_search.h) against fake probes whose
 * boundary is known: a sharp one (success below it, failure above) on a real and on an
 * integer axis, a noisy one (a probability falling smoothly through p), ranges that do not
 * bracket the boundary, the replications each probe asked for, errors; and the "search"
 * block of a scenario.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "expt/expt_scenario.h"
#include "expt/expt_search.h"

/* {==================================================================
 * Fake probes
 * =================================================================== */

typedef struct fake {
  double boundary; /* sharp: success iff x <= boundary */
  double slope;    /* noisy: P(success) = 1 / (1 + exp((x - mid) / slope)); 0: sharp */
  double mid;
  gsl_rng *rng;                           /* noisy only */
  size_t calls;                           /* callback calls */
  size_t next_rep[EXPT_SEARCH_MAX_PROBES]; /* per probe: the replication expected next */
  double last_x;
  size_t probe; /* index of the probe being run (a new x starts a new one) */
  char last_value[64];
  int fail_at_call;         /* > 0: that call returns an error */
  double bump_from, bump_p; /* bump_p > 0: P(success) = bump_p from bump_from up */
} fake;

static double p_success(const fake *f, double x) {
  if (f->bump_p > 0 && x >= f->bump_from) return f->bump_p;
  if (f->slope == 0) return x <= f->boundary ? 1.0 : 0.0;
  return 1.0 / (1.0 + exp((x - f->mid) / f->slope));
}

static int fake_probe(void *ctx, double x, const expt_set *set, size_t first_rep, size_t n,
                      size_t *k, retry_error *err) {
  fake *f = ctx;
  f->calls++;
  if (f->fail_at_call > 0 && (int)f->calls == f->fail_at_call) {
    retry_error_set(err, RETRY_EIO, "fake", "", -1, -1, "the probe broke");
    return RETRY_EIO;
  }
  if (f->calls == 1 || x != f->last_x) {
    if (f->calls > 1) f->probe++;
    assert_int_equal(first_rep, 0); /* a new probe starts at replication 0 */
  } else {
    assert_int_equal(first_rep, f->next_rep[f->probe]); /* and continues where it stopped */
  }
  f->next_rep[f->probe] = first_rep + n;
  f->last_x = x;
  assert_string_equal(set->path, "clients.web.arrival.rate");
  snprintf(f->last_value, sizeof f->last_value, "%s", set->value);
  double p = p_success(f, x);
  size_t kk = 0;
  for (size_t i = 0; i < n; i++)
    kk += f->rng != NULL ? gsl_rng_uniform(f->rng) < p : p >= 0.5;
  *k = kk;
  return 0;
}

static expt_search_spec spec_of(double from, double to, bool integer, size_t probes) {
  expt_search_spec s;
  memset(&s, 0, sizeof s);
  s.path = (char *)"clients.web.arrival.rate";
  s.metric = (char *)"recovery.recovered";
  s.from.x = from;
  s.to.x = to;
  s.from.integer = s.to.integer = integer;
  s.p = 0.95;
  s.reps = 20;
  s.max_reps = 100;
  s.probes = probes;
  return s;
}

static double bx(const expt_search_result *r, int i) { return r->probes[i].x; }

/* }================================================================== */

/* {==================================================================
 * The driver
 * =================================================================== */

/* A sharp boundary at 0.7 in [0, 1]: after 8 probes (2 ends, 6 halvings) the interval is
 * 1/64 wide and holds 0.7. With batches of 20 up to 100 a pass needs 100 successes of 100
 * (the exact lower bound of n of n is alpha^(1/n), 0.964 at 100 with the whole 0.025; earlier
 * looks cannot reach 0.95 even with the error split among fewer of them), a fail 20 of none
 * (the upper bound 1 - 0.005^(1/20) = 0.233). */
static void test_search_finds_a_sharp_boundary(void **state) {
  (void)state;
  fake f = {.boundary = 0.7};
  expt_search_spec s = spec_of(0, 1, false, 8);
  expt_search_result r;
  retry_error err;
  retry_error_clear(&err);
  assert_int_equal(expt_search_run(&s, 0.95, fake_probe, &f, &r, &err), 0);
  assert_int_equal(r.outcome, EXPT_SEARCH_BRACKETED);
  assert_int_equal(r.n_probes, 8);
  assert_true(bx(&r, r.pass) <= 0.7 && 0.7 < bx(&r, r.fail));
  assert_true(fabs(bx(&r, r.fail) - bx(&r, r.pass) - 1.0 / 64) < 1e-12);
  for (size_t i = 0; i < r.n_probes; i++) {
    const expt_search_probe *p = &r.probes[i];
    assert_false(p->undecided);
    assert_int_equal(p->n, p->pass ? 100 : 20);
    assert_int_equal(p->k, p->pass ? 100 : 0);
    assert_true(p->pass ? p->lo >= 0.95 : p->hi < 0.95);
    assert_true(p->pass == (p->x <= 0.7));
  }
  /* The order: from, to, then the midpoints. */
  assert_true(bx(&r, 0) == 0 && bx(&r, 1) == 1 && bx(&r, 2) == 0.5 && bx(&r, 3) == 0.75);
  json_t *j = expt_search_result_json(&s, 0.95, "v", &r);
  assert_non_null(j);
  assert_string_equal(json_string_value(json_object_get(j, "outcome")), "bracketed");
  json_t *b = json_object_get(j, "boundary");
  assert_true(json_number_value(json_object_get(b, "pass")) == bx(&r, r.pass));
  assert_int_equal(json_array_size(json_object_get(j, "probes")), 8);
  json_t *p0 = json_array_get(json_object_get(j, "probes"), 0);
  assert_string_equal(json_string_value(json_object_get(p0, "verdict")), "pass");
  assert_int_equal(json_integer_value(json_object_get(p0, "n")), 100);
  assert_string_equal(json_string_value(json_object_get(p0, "decision")), "pass");
  json_decref(j);
  expt_search_result_free(&r);
}

/* An integer axis with units: "1/s" to "100/s", boundary 37: the search ends on adjacent
 * integers 37 and 38, before the probe budget, and the values are written with the unit. */
static void test_search_on_integers_ends_on_adjacent_values(void **state) {
  (void)state;
  fake f = {.boundary = 37};
  expt_search_spec s = spec_of(1, 100, true, 30);
  s.from.text = s.to.text = true;
  strcpy(s.from.unit, "/s");
  strcpy(s.to.unit, "/s");
  expt_search_result r;
  retry_error err;
  retry_error_clear(&err);
  assert_int_equal(expt_search_run(&s, 0.95, fake_probe, &f, &r, &err), 0);
  assert_int_equal(r.outcome, EXPT_SEARCH_BRACKETED);
  assert_true(bx(&r, r.pass) == 37 && bx(&r, r.fail) == 38);
  assert_true(r.n_probes < 30 && r.n_probes <= 2 + 8);
  assert_string_equal(json_string_value(r.probes[r.pass].value), "37/s");
  assert_string_equal(json_string_value(r.probes[1].value), "100/s");
  assert_string_equal(f.last_value, "\"38/s\"");
  expt_search_result_free(&r);
}

/* The range must bracket the boundary: a failing "from" stops at once, a passing "to" after
 * the two ends, each saying so. */
static void test_search_says_when_the_range_misses_the_boundary(void **state) {
  (void)state;
  fake f = {.boundary = -1};
  expt_search_spec s = spec_of(0, 1, false, 8);
  expt_search_result r;
  retry_error err;
  retry_error_clear(&err);
  assert_int_equal(expt_search_run(&s, 0.95, fake_probe, &f, &r, &err), 0);
  assert_int_equal(r.outcome, EXPT_SEARCH_FROM_FAILS);
  assert_int_equal(r.n_probes, 1);
  assert_int_equal(r.pass, -1);
  json_t *j = expt_search_result_json(&s, 0.95, "v", &r);
  assert_string_equal(json_string_value(json_object_get(j, "outcome")), "from_fails");
  assert_true(json_is_null(json_object_get(json_object_get(j, "boundary"), "pass")));
  json_decref(j);
  expt_search_result_free(&r);
  fake g = {.boundary = 5};
  assert_int_equal(expt_search_run(&s, 0.95, fake_probe, &g, &r, &err), 0);
  assert_int_equal(r.outcome, EXPT_SEARCH_TO_PASSES);
  assert_int_equal(r.n_probes, 2);
  assert_int_equal(r.fail, -1);
  expt_search_result_free(&r);
}

/* A probability falling smoothly through p: P(x) = 1 / (1 + exp((x - 0.6) / 0.02)), so
 * P = 0.95 at x* = 0.6 - 0.02 ln 19 = 0.541. A probe decided wrongly at Wilson's level is
 * rare; one undecided after 100 replications is decided by k/n and may land either side of
 * x* when P is close to p, so a bracket 1/256 wide need not hold x* itself. What must hold,
 * over 40 searches: every pass is where P >= 0.85 and every fail where P <= 0.99 (the band
 * where 100 replications cannot tell P from 0.95), each bracket lies in that band, and the
 * brackets' middles average to x* within 0.005 (their spread is about 0.007 each). */
static void test_search_with_noise_brackets_the_boundary(void **state) {
  (void)state;
  const double mid = 0.6, slope = 0.02, xstar = mid - slope * log(19.0);
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  /* Where P is 0.99 and 0.85. */
  const double x99 = mid - slope * log(99.0), x85 = mid - slope * log(0.85 / 0.15);
  double sum = 0;
  int undecided = 0;
  for (unsigned long seed = 1; seed <= 40; seed++) {
    gsl_rng_set(rng, seed);
    fake f = {.slope = slope, .mid = mid, .rng = rng};
    expt_search_spec s = spec_of(0, 1, false, 10);
    expt_search_result r;
    retry_error err;
    retry_error_clear(&err);
    assert_int_equal(expt_search_run(&s, 0.95, fake_probe, &f, &r, &err), 0);
    assert_int_equal(r.outcome, EXPT_SEARCH_BRACKETED);
    for (size_t i = 0; i < r.n_probes; i++) {
      const expt_search_probe *p = &r.probes[i];
      double truth = p_success(&f, p->x);
      if (p->pass && truth < 0.85) fail_msg("seed %lu: pass at %g where P = %g", seed, p->x, truth);
      if (!p->pass && truth > 0.99)
        fail_msg("seed %lu: fail at %g where P = %g", seed, p->x, truth);
      undecided += p->undecided;
      assert_true(p->n >= 20 && p->n <= 100 && p->n % 20 == 0);
    }
    /* The bracket lies in the band, and its middle averages to x*. */
    if (!(bx(&r, r.pass) >= x99 && bx(&r, r.fail) <= x85))
      fail_msg("seed %lu: [%g, %g] outside [%g, %g]", seed, bx(&r, r.pass), bx(&r, r.fail), x99,
               x85);
    sum += (bx(&r, r.pass) + bx(&r, r.fail)) / 2;
    expt_search_result_free(&r);
  }
  gsl_rng_free(rng);
  if (fabs(sum / 40 - xstar) > 0.005)
    fail_msg("the brackets' middles average %g, x* is %g", sum / 40, xstar);
  /* Near x* some probes cannot be decided: the rule that decides them is exercised. */
  assert_true(undecided > 0);
}

/* A probe's error stops the search and is returned as it is. */
static void test_search_stops_on_a_probe_error(void **state) {
  (void)state;
  fake f = {.boundary = 0.7, .fail_at_call = 9};
  expt_search_spec s = spec_of(0, 1, false, 8);
  expt_search_result r;
  retry_error err;
  retry_error_clear(&err);
  assert_int_equal(expt_search_run(&s, 0.95, fake_probe, &f, &r, &err), RETRY_EIO);
  assert_string_equal(err.message, "the probe broke");
  assert_int_equal(r.n_probes, 0);
}

/* }================================================================== */

/* {==================================================================
 * The scenario's "search" block
 * =================================================================== */

static const char base[] =
    "{\"duration\": \"10s\", \"services\": {\"api\": {\"service_time\": \"5ms\", \"workers\": 4}},"
    " \"clients\": {\"web\": {\"target\": \"api\", \"arrival\": {\"kind\": \"open\", \"rate\": "
    "\"100/s\"}, \"methods\": [\"/a.A/M\"]}}, \"search\": %s}";

static expt_scenario *load_search(const char *block, retry_error *err) {
  char text[1024];
  snprintf(text, sizeof text, base, block);
  retry_error_clear(err);
  return expt_scenario_load_string(text, "s.json", NULL, 0, err);
}

static void test_search_block(void **state) {
  (void)state;
  retry_error err;
  expt_scenario *s = load_search(
      "{\"path\": \"clients.web.arrival.rate\", \"from\": \"100/s\", \"to\": \"900/s\"}", &err);
  if (s == NULL) fail_msg("%s: %s", err.path, err.message);
  expt_search_spec spec;
  assert_int_equal(expt_search_spec_from_json(expt_scenario_search_block(s), &spec, &err), 0);
  assert_string_equal(spec.path, "clients.web.arrival.rate");
  assert_string_equal(spec.metric, "recovery.recovered");
  assert_true(spec.from.x == 100 && spec.to.x == 900 && spec.from.text && spec.from.integer);
  assert_string_equal(spec.to.unit, "/s");
  assert_true(spec.p == 0.95);
  assert_int_equal(spec.reps, 20);
  assert_int_equal(spec.max_reps, 100);
  assert_int_equal(spec.probes, 8);
  expt_search_spec_free(&spec);
  expt_scenario_destroy(s);
  s = load_search(
      "{\"path\": \"services.api.workers\", \"from\": 1, \"to\": 9, \"reps\": 200,"
      " \"p\": 0.5, \"probes\": 3, \"metric\": \"x.y\"}",
      &err);
  if (s == NULL) fail_msg("%s: %s", err.path, err.message);
  assert_int_equal(expt_search_spec_from_json(expt_scenario_search_block(s), &spec, &err), 0);
  assert_int_equal(spec.max_reps, 200);
  assert_int_equal(spec.probes, 3);
  assert_string_equal(spec.metric, "x.y");
  expt_search_spec_free(&spec);
  expt_scenario_destroy(s);
  static const struct {
    const char *block, *path, *msg;
  } bad[] = {
      {"3", "$.search", "\"search\" must be an object"},
      {"{\"from\": 1, \"to\": 2}", "$.search.path", "\"path\" is required"},
      {"{\"path\": \"services.api.workers\", \"to\": 2}", "$.search.from", "\"from\" is required"},
      {"{\"path\": \"services.api.workers\", \"from\": 3, \"to\": 2}", "$.search.to",
       "more than \"from\""},
      {"{\"path\": \"services.api.workers\", \"from\": \"1s\", \"to\": 2}", "$.search.to",
       "like \"from\""},
      {"{\"path\": \"services.api.workers\", \"from\": \"x\", \"to\": 2}", "$.search.from",
       "\"x\" is not a number"},
      {"{\"path\": \"services.api.workers\", \"from\": 1, \"to\": 2, \"p\": 1}", "$.search.p",
       "a probability in (0, 1)"},
      {"{\"path\": \"services.api.workers\", \"from\": 1, \"to\": 2, \"reps\": 30, "
       "\"max_reps\": 20}",
       "$.search.max_reps", "at least \"reps\""},
      {"{\"path\": \"services.api.workers\", \"from\": 1, \"to\": 2, \"probes\": 1}",
       "$.search.probes", "from 2 to 64"},
      {"{\"path\": \"services.api.workers\", \"from\": 1, \"to\": 2, \"metric\": \"a..b\"}",
       "$.search.metric", "a boolean in a run's summary"},
      {"{\"path\": \"services.api.workers\", \"from\": 1, \"to\": 2, \"step\": 1}", "$.search.step",
       "not allowed in \"search\""},
      {"{\"path\": \"services.api.queue.capacity\", \"from\": 1, \"to\": 2}", "$.search.path",
       "\"services.api.queue.capacity\" reaches no value (\"services.api.queue\" is not there)"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    s = load_search(bad[i].block, &err);
    if (s != NULL) fail_msg("loaded: %s", bad[i].block);
    if (strcmp(err.path, bad[i].path) != 0 || strstr(err.message, bad[i].msg) == NULL)
      fail_msg("%s:\n got %s: %s\nwant %s: ...%s...", bad[i].block, err.path, err.message,
               bad[i].path, bad[i].msg);
  }
}

/* A probability that rises again (a fleet already dead at lower loads, say): the bracket
 * is found, and expt_search_monotone says the shares do not fall; a sharp one is monotone. */
static void test_search_sees_a_rising_probability(void **state) {
  (void)state;
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 7);
  fake f = {.boundary = 100, .bump_from = 150, .bump_p = 0.7, .rng = rng};
  expt_search_spec s = spec_of(50, 200, false, 3);
  expt_search_result r;
  retry_error err;
  retry_error_clear(&err);
  assert_int_equal(expt_search_run(&s, 0.95, fake_probe, &f, &r, &err), 0);
  assert_int_equal(r.n_probes, 3); /* 50 passes, 200 (0.7) fails, 125 (0) fails */
  size_t lo = 9, hi = 9;
  assert_false(expt_search_monotone(&r, &lo, &hi));
  assert_true(bx(&r, (int)lo) == 125 && bx(&r, (int)hi) == 200);
  expt_search_result_free(&r);
  gsl_rng_free(rng);

  fake g = {.boundary = 0.7};
  s = spec_of(0, 1, false, 8);
  assert_int_equal(expt_search_run(&s, 0.95, fake_probe, &g, &r, &err), 0);
  assert_true(expt_search_monotone(&r, NULL, NULL));
  expt_search_result_free(&r);
  /* The exact lower bound of n of n is alpha^(1/n): with batches of 20 up to 100 only the last
   * look can reach 0.95 (at alpha 0.025: from 72 on); up to 200, the last 5 looks share it
   * (0.005 each: from 104 on, so from 120); 0.99 needs 367 at 0.025 alone: none. */
  s = spec_of(0, 1, false, 8);
  s.max_reps = 100;
  assert_int_equal(expt_search_min_reps_to_pass(&s, 0.95), 100);
  s.max_reps = 200;
  assert_int_equal(expt_search_min_reps_to_pass(&s, 0.95), 120);
  s.p = 0.99;
  assert_int_equal(expt_search_min_reps_to_pass(&s, 0.95), 0);
}

/* Issue 23: each probe was re-tested after every batch at 95 % with no correction, so at a
 * true P equal to the threshold (0.95) it failed 12.5 % of the time, not 2.5 %, and at 0.93 it
 * passed 28 % of the time. Over 2000 probes each, the stated error (1 - 0.95) / 2 must hold
 * for decided probes: fail at P = 0.95, pass at P = 0.93 and at 0.9499. */
static void test_search_probe_error_holds_over_its_looks(void **state) {
  (void)state;
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 23);
  const double ps[] = {0.95, 0.93, 0.9499};
  for (size_t c = 0; c < 3; c++) {
    int wrong = 0, undecided = 0;
    for (int i = 0; i < 2000; i++) {
      fake f = {.bump_from = -1, .bump_p = ps[c], .rng = rng};
      expt_search_spec s = spec_of(100, 200, false, 2);
      s.max_reps = 200;
      expt_search_result r;
      retry_error err;
      retry_error_clear(&err);
      assert_int_equal(expt_search_run(&s, 0.95, fake_probe, &f, &r, &err), 0);
      const expt_search_probe *p = &r.probes[0];
      undecided += p->undecided;
      if (!p->undecided && p->pass != (ps[c] >= 0.95)) wrong++;
      expt_search_result_free(&r);
    }
    print_message("P = %g: %d of 2000 wrongly decided, %d undecided\n", ps[c], wrong, undecided);
    /* 2.5 % of 2000 is 50; the bound is an upper one, so allow only chance above it. */
    assert_true(wrong <= 50 + 3 * 7);
  }
  gsl_rng_free(rng);
}

/* Issue 23, what it must show: over 200 searches on a known P(x) (logistic through 0.95 at
 * x*), every decided probe is wrong (a pass where P < 0.95, a fail where P >= 0.95) at most
 * at the stated error: the share of wrong decisions among all decided probes is at most
 * 2.5 % (plus chance), and the result states that error. */
static void test_search_stated_error_holds_over_searches(void **state) {
  (void)state;
  const double mid = 0.6, slope = 0.02;
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  int decided = 0, wrong = 0, undecided = 0;
  for (unsigned long seed = 1; seed <= 200; seed++) {
    gsl_rng_set(rng, seed);
    fake f = {.slope = slope, .mid = mid, .rng = rng};
    expt_search_spec s = spec_of(0, 1, false, 8);
    s.max_reps = 200;
    expt_search_result r;
    retry_error err;
    retry_error_clear(&err);
    assert_int_equal(expt_search_run(&s, 0.95, fake_probe, &f, &r, &err), 0);
    assert_true(fabs(r.levels.error - 0.025) < 1e-12);
    for (size_t i = 0; i < r.n_probes; i++) {
      const expt_search_probe *p = &r.probes[i];
      if (p->undecided) {
        undecided++;
        continue;
      }
      decided++;
      bool truth = p_success(&f, p->x) >= 0.95;
      if (p->pass != truth) wrong++;
    }
    expt_search_result_free(&r);
  }
  gsl_rng_free(rng);
  print_message("%d of %d decided probes wrong, %d undecided\n", wrong, decided, undecided);
  double bound = 0.025 * decided + 3 * sqrt(0.025 * decided);
  assert_true(wrong <= bound);
  assert_true(decided > 800);
}

/* }================================================================== */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_search_finds_a_sharp_boundary),
      cmocka_unit_test(test_search_on_integers_ends_on_adjacent_values),
      cmocka_unit_test(test_search_says_when_the_range_misses_the_boundary),
      cmocka_unit_test(test_search_with_noise_brackets_the_boundary),
      cmocka_unit_test(test_search_stops_on_a_probe_error),
      cmocka_unit_test(test_search_block),
      cmocka_unit_test(test_search_sees_a_rising_probability),
      cmocka_unit_test(test_search_probe_error_holds_over_its_looks),
      cmocka_unit_test(test_search_stated_error_holds_over_searches),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
