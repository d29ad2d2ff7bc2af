/*
 * world.c: the world-building helpers of world.h, over the scenario loader and the kernel.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "tests/support/world.h"

expt_scenario *test_load(const char *text) {
  char *json = strdup(text);
  assert_non_null(json);
  for (char *p = json; *p; p++)
    if (*p == '\'') *p = '"';
  retry_error err;
  retry_error_clear(&err);
  expt_scenario *s = expt_scenario_load_string(json, "<test>", NULL, 0, &err);
  free(json);
  if (s == NULL) {
    char buf[700];
    retry_error_format(&err, buf, sizeof buf);
    fail_msg("scenario failed to load: %s", buf);
  }
  return s;
}

void test_run_loaded(test_run *x, size_t i, uint64_t seed) {
  retry_error err;
  retry_error_clear(&err);
  x->k = sim_kernel_create(0, NULL);
  assert_non_null(x->k);
  x->w = model_world_create(expt_scenario_config(x->s, i), x->k, seed, &err);
  assert_non_null(x->w);
  assert_int_equal(model_world_run(x->w, NULL, NULL, &err), 0);
  x->r = model_world_results(x->w);
}

void test_run_text(test_run *x, const char *text, uint64_t seed) {
  memset(x, 0, sizeof *x);
  x->s = test_load(text);
  test_run_loaded(x, 0, seed);
}

void test_run_close(test_run *x) {
  model_world_destroy(x->w);
  sim_kernel_destroy(x->k);
  x->w = NULL;
  x->k = NULL;
}

void test_run_free(test_run *x) {
  test_run_close(x);
  expt_scenario_destroy(x->s);
}

const model_service_stats *test_svc(const model_results *r, const char *name) {
  for (size_t i = 0; i < r->n_services; i++)
    if (strcmp(r->services[i].name, name) == 0) return &r->services[i];
  fail_msg("no service %s", name);
  return NULL;
}

const model_edge_stats *test_edge(const model_results *r, const char *from, const char *to) {
  for (size_t i = 0; i < r->n_edges; i++)
    if (strcmp(r->edges[i].from, from) == 0 && strcmp(r->edges[i].to, to) == 0) return &r->edges[i];
  fail_msg("no edge %s -> %s", from, to);
  return NULL;
}

int test_ts_col(const model_timeseries *ts, const char *name) {
  for (size_t c = 0; c < ts->n_columns; c++)
    if (strcmp(ts->names[c], name) == 0) return (int)c;
  return -1;
}

double test_ts_total(const model_timeseries *ts, const char *name) {
  int c = test_ts_col(ts, name);
  assert_true(c >= 0);
  double sum = 0;
  for (size_t b = 0; b < ts->n_buckets; b++)
    sum += ts->values[b * ts->n_columns + (size_t)c];
  return sum * (double)ts->bucket_ns / 1e9;
}
