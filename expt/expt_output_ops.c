/*
 * expt_output_ops.c: operators and herds in a run's summary. summary.json's "operators" lists
 * every rule and scheduled action in the scenario's order (rules first) with the times it
 * fired; "herds" has the counters of each population some action restarts or pauses. The
 * run pictures draw the firings as vertical marks (expt_plot.c).
 */
#include "expt/expt_output_ops.h"

#include "expt/expt_json.h"
#include "expt/expt_output.h"

static json_t *operator_json(const model_operator_stats *s, bool *ok) {
  json_t *o = json_object();
  expt_json_put(o, "name", json_string(s->name), ok);
  expt_json_put(o, "kind", json_string(s->rule ? "rule" : "event"), ok);
  expt_json_put(o, "action", json_string(s->action), ok);
  expt_json_put(o, "fired", json_integer((json_int_t)s->n_fired), ok);
  expt_json_put(o, "first_fired_s",
                s->n_fired > 0 ? json_real(expt_output_round((double)s->fired_at_ns[0] / 1e9))
                               : json_null(),
                ok);
  json_t *at = json_array();
  for (int64_t i = 0; i < s->n_fired; i++)
    if (json_array_append_new(at, json_real(expt_output_round((double)s->fired_at_ns[i] / 1e9))) != 0)
      *ok = false;
  expt_json_put(o, "fired_at_s", at, ok);
  return o;
}

static json_t *herd_json(const model_herd_stats *h, bool *ok) {
  json_t *o = json_object();
  expt_json_put(o, "population", json_string(h->population), ok);
  expt_json_put(o, "restarts", json_integer((json_int_t)h->restarts), ok);
  expt_json_put(o, "inits", json_integer((json_int_t)h->inits), ok);
  expt_json_put(o, "inits_ok", json_integer((json_int_t)h->inits_ok), ok);
  expt_json_put(o, "inits_failed", json_integer((json_int_t)h->inits_failed), ok);
  expt_json_put(o, "calls_down", json_integer((json_int_t)h->calls_down), ok);
  expt_json_put(o, "clients_up", json_integer((json_int_t)h->clients_up), ok);
  return o;
}

void expt_output_ops_put(json_t *o, const model_results *r, bool *ok) {
  if (r->n_operators == 0) return;
  json_t *ops = json_array();
  for (size_t i = 0; i < r->n_operators; i++)
    if (json_array_append_new(ops, operator_json(&r->operators[i], ok)) != 0) *ok = false;
  expt_json_put(o, "operators", ops, ok);
  if (r->n_herds == 0) return;
  json_t *herds = json_array();
  for (size_t i = 0; i < r->n_herds; i++)
    if (json_array_append_new(herds, herd_json(&r->herds[i], ok)) != 0) *ok = false;
  expt_json_put(o, "herds", herds, ok);
}

void expt_output_ops_text(const json_t *run, FILE *f) {
  const json_t *ops = json_object_get(run, "operators");
  size_t i;
  const json_t *v;
  json_array_foreach(ops, i, v) {
    const json_t *at = json_object_get(v, "fired_at_s");
    fprintf(f, "%-13s %s \"%s\" (%s): fired %lld time%s", i == 0 ? "operators" : "",
            json_string_value(json_object_get(v, "kind")),
            json_string_value(json_object_get(v, "name")),
            json_string_value(json_object_get(v, "action")),
            (long long)json_integer_value(json_object_get(v, "fired")),
            json_integer_value(json_object_get(v, "fired")) == 1 ? "" : "s");
    size_t j;
    const json_t *t;
    json_array_foreach(at, j, t) {
      if (j == 8) {
        fprintf(f, " ...");
        break;
      }
      fprintf(f, "%s%g s", j == 0 ? " at " : ", ", json_number_value(t));
    }
    fputc('\n', f);
  }
  json_array_foreach(json_object_get(run, "herds"), i, v) {
    fprintf(f,
            "%-13s %s: restarts %lld, init calls %lld (ok %lld, failed %lld), calls while down "
            "%lld, clients up at the end %lld\n",
            i == 0 ? "herds" : "", json_string_value(json_object_get(v, "population")),
            (long long)json_integer_value(json_object_get(v, "restarts")),
            (long long)json_integer_value(json_object_get(v, "inits")),
            (long long)json_integer_value(json_object_get(v, "inits_ok")),
            (long long)json_integer_value(json_object_get(v, "inits_failed")),
            (long long)json_integer_value(json_object_get(v, "calls_down")),
            (long long)json_integer_value(json_object_get(v, "clients_up")));
  }
}

bool expt_output_ops_marks(const json_t *run, char *buf, size_t size) {
  size_t i, j, n = 0, len = 0;
  const json_t *v, *t;
  buf[0] = '\0';
  json_array_foreach(json_object_get(run, "operators"), i, v) {
    json_array_foreach(json_object_get(v, "fired_at_s"), j, t) {
      if (n == 64 || len + 32 >= size) break;
      int w = snprintf(buf + len, size - len, "%s%.12g", n == 0 ? "marks='" : " ",
                       json_number_value(t));
      if (w < 0) return false;
      len += (size_t)w;
      n++;
    }
  }
  if (n == 0) return false;
  snprintf(buf + len, size - len, "'");
  return true;
}
