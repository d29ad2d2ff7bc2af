/*
 * expt_scenario_value.c: the scenario loader's context and its own typed values: durations,
 * rates, distributions, rate profiles, statuses, names and methods.
 *
 * Every reader here either fills its output from a valid value or records exactly one error
 * (the first) in the context, with the JSON path of the value and a message saying what was
 * wrong and what is allowed. The context, paths, messages and plain getters are libretry's
 * (retry/retry_json.h), shared with the service config loader; what is here is the format's own.
 */
#include "expt/expt_scenario_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* {==================================================================
 * The context
 * =================================================================== */

/* A context starts at the document's root with no error. Its strings are borrowed: the
 * caller keeps source, base_dir and variant alive for the context's life. In a variant every
 * message starts with `in variant "name": `: a user running twenty variants needs to know which
 * one is wrong, and the path alone cannot say it (every variant's document has the same paths).
 * The prefix lives in the context itself, which must therefore not be copied. */
void expt__scenario_ctx_init(scn_ctx *c, const char *source, const char *base_dir,
                             const char *variant) {
  memset(c, 0, sizeof *c);
  retry_json_ctx_init(&c->j, source);
  c->base_dir = base_dir;
  c->variant = variant;
  if (variant != NULL) {
    char name[SCN_NAME_MAX + 8];
    retry_json_printable(name, sizeof name, variant, SCN_NAME_MAX);
    snprintf(c->prefix, sizeof c->prefix, "in variant \"%s\": ", name);
    c->j.prefix = c->prefix;
  }
}

/* }================================================================== */

/* {==================================================================
 * Names and methods
 * =================================================================== */

/* Names end up in file names, CSV headers and command lines (--set services.NAME.workers),
 * hence the small alphabet: nothing a shell, a CSV reader or a path would need quoted, except
 * '.', which the PATH syntax handles with ["a.b"]. */
bool expt__scenario_name_is_valid(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n > SCN_NAME_MAX) return false;
  for (const char *p = s; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
          *p == '_' || *p == '.' || *p == '-'))
      return false;
  return true;
}

/* The shape gRPC gives a full method name on the wire (":path" = "/service/method"), which is
 * what retry_config_lookup splits and the idempotent allowlist compares. */
bool expt__scenario_method_is_valid(const char *s) {
  if (s[0] != '/') return false;
  const char *slash = strchr(s + 1, '/');
  /* A non-empty service, one '/', a non-empty method and no further '/'. */
  return slash != NULL && slash > s + 1 && slash[1] != '\0' && strchr(slash + 1, '/') == NULL;
}

/* A string that must be a full method name. The message quotes the value from the document,
 * not s, so describe shows it as written, quotes included. */
int expt__scenario_get_method(scn_ctx *c, json_t *obj, const char *key, const char **out) {
  const char *s = NULL;
  int rc = retry_json_get_string(&c->j, obj, key, &s);
  if (rc != 1) return rc;
  if (!expt__scenario_method_is_valid(s)) {
    char label[64];
    retry_json_quote(label, sizeof label, key);
    size_t mark = retry_json_path_push_key(&c->j, key);
    retry_json_fail_value(&c->j, label, "a full method name \"/package.Service/Method\"",
                          json_object_get(obj, key));
    retry_json_path_pop(&c->j, mark);
    return -1;
  }
  *out = s;
  return 1;
}

/* For "key ... is not allowed in an \"open\" arrival": the article follows the kind. */
void expt__scenario_kind_where(char *buf, size_t size, const char *kind, const char *what) {
  /* kind[0] != '\0' matters: strchr finds the terminator, so "" would count as a vowel. */
  bool vowel = strchr("aeiou", kind[0]) != NULL && kind[0] != '\0';
  snprintf(buf, size, "%s \"%s\" %s", vowel ? "an" : "a", kind, what);
}

/* The names the "space" key takes; retry_space has only the two values. */
const char *expt__scenario_space_name(retry_space sp) {
  return sp == RETRY_SPACE_HTTP ? "http" : "grpc";
}

/* }================================================================== */

/* {==================================================================
 * Durations and rates
 * =================================================================== */

/* A number where a duration belongs is the commonest slip ("timeout": 5), and guessing its
 * unit is how an outage scenario ends up a thousand times too fast; the message offers both
 * readings instead. */
bool expt__scenario_duration_value(scn_ctx *c, json_t *v, const char *label, int64_t lo,
                                   bool lo_open, const char *what, int64_t *out) {
  /* Described once, first: the same "got" text serves every message below. */
  char got[64];
  retry_json_describe(v, got, sizeof got);
  if (json_is_number(v)) {
    retry_json_fail(&c->j, RETRY_ECONFIG,
                    "%s needs a unit, such as \"%ss\" or \"%sms\" (ns, us, ms, s, m, h), got %s",
                    label, got, got, got);
    return false;
  }
  int64_t ns = 0;
  int rc = json_is_string(v) ? expt_duration_parse(json_string_value(v), &ns) : RETRY_EINVAL;
  /* ERANGE: more than INT64_MAX ns, which is about 292 years. lo_open separates the "> 0"
   * limits (a deadline, a mean) from the ">= 0" ones (a delay, a start time). */
  if (rc == RETRY_ERANGE) {
    retry_json_fail(&c->j, RETRY_ECONFIG, "%s is out of range: at most about 292 years, got %s",
                    label, got);
    return false;
  }
  if (rc != RETRY_OK || (lo_open ? ns <= lo : ns < lo)) {
    retry_json_fail_value(&c->j, label, what, v);
    return false;
  }
  *out = ns;
  return true;
}

/* obj[key] as a duration, with the path at the key while it is read. */
int expt__scenario_get_duration(scn_ctx *c, json_t *obj, const char *key, int64_t lo, bool lo_open,
                                const char *what, int64_t *out) {
  json_t *v = retry_json_field(obj, key);
  if (v == NULL) return 0;
  char label[64];
  retry_json_quote(label, sizeof label, key);
  size_t mark = retry_json_path_push_key(&c->j, key);
  bool ok = expt__scenario_duration_value(c, v, label, lo, lo_open, what, out);
  retry_json_path_pop(&c->j, mark);
  return ok ? 1 : -1;
}

/* The units expt_rate_parse accepts, for messages. */
#define RATE_WHAT "a rate such as \"800/s\" (/s, /ms, /min, /h)"

/* Rates have the same rule as durations: a unit is required, because "800" per second and
 * per minute differ by 60x, and a bare number is refused with a message showing the fix. The
 * upper bound keeps the arrival process's per-event arithmetic far from overflow. */
static bool rate_value(scn_ctx *c, json_t *v, const char *label, double *out) {
  char got[64];
  retry_json_describe(v, got, sizeof got);
  if (json_is_number(v)) {
    retry_json_fail(&c->j, RETRY_ECONFIG,
                    "%s needs a unit, such as \"%s/s\" (/s, /ms, /min, /h), got %s", label, got,
                    got);
    return false;
  }
  double r = 0;
  int rc = json_is_string(v) ? expt_rate_parse(json_string_value(v), &r) : RETRY_EINVAL;
  if (rc == RETRY_EINVAL) {
    retry_json_fail_value(&c->j, label, RATE_WHAT, v);
    return false;
  }
  /* The parser's own ERANGE and a rate above the limit get the same message: either way the
   * fix is a smaller rate. */
  if (rc != RETRY_OK || r > SCN_MAX_RATE) {
    retry_json_fail(&c->j, RETRY_ECONFIG, "%s must be at most 1000000000/s, got %s", label, got);
    return false;
  }
  *out = r;
  return true;
}

/* }================================================================== */

/* {==================================================================
 * Distributions
 * =================================================================== */

/* Indexed like sim_dist_kind, so the index read from "dist" is the kind stored. dist_allowed
 * below follows the same order; weibull and pareto share their keys (shape and scale). */
static const char *const dist_names[] = {"constant", "exponential", "lognormal",
                                         "gamma",    "weibull",     "pareto",
                                         "uniform",  "mixture",     "empirical"};

/* The keys each kind allows, "dist" first. */
static const char *const keys_constant[] = {"dist", "value"};
static const char *const keys_exponential[] = {"dist", "mean"};
static const char *const keys_lognormal[] = {"dist", "median", "mean", "sigma"};
static const char *const keys_gamma[] = {"dist", "shape", "mean", "scale"};
static const char *const keys_shape_scale[] = {"dist", "shape", "scale"};
static const char *const keys_uniform[] = {"dist", "min", "max"};
static const char *const keys_mixture[] = {"dist", "parts"};
static const char *const keys_empirical[] = {"dist", "file"};
static const char *const keys_part[] = {"weight", "value"};

/* The keys one kind allows; also used for the rate profiles' kinds. */
typedef struct dist_keys {
  const char *const *keys; /* the allowed key names, "dist" or "kind" first */
  size_t n;                /* entries in keys */
} dist_keys;

static const dist_keys dist_allowed[] = {
    {keys_constant, SCN_N_OF(keys_constant)},       {keys_exponential, SCN_N_OF(keys_exponential)},
    {keys_lognormal, SCN_N_OF(keys_lognormal)},     {keys_gamma, SCN_N_OF(keys_gamma)},
    {keys_shape_scale, SCN_N_OF(keys_shape_scale)}, {keys_shape_scale, SCN_N_OF(keys_shape_scale)},
    {keys_uniform, SCN_N_OF(keys_uniform)},         {keys_mixture, SCN_N_OF(keys_mixture)},
    {keys_empirical, SCN_N_OF(keys_empirical)},
};

/* The most parts one mixture may have: far more than a latency model needs (a few modes), and
 * small enough for the parts to live on the stack while the mixture is built. */
#define SCN_MAX_MIXTURE_PARTS 64

static bool dist_value(scn_ctx *c, json_t *v, const char *label, sim_dist *out);

/* A required duration parameter of a distribution. positive refuses 0: a mean or a scale of
 * 0 describes no distribution, whereas a constant or a uniform bound may well be 0. */
static bool dist_dur(scn_ctx *c, json_t *obj, const char *key, bool positive, int64_t *out) {
  const char *what = positive ? SCN_DUR_POS : SCN_DUR_NONNEG;
  return retry_json_require(&c->j, expt__scenario_get_duration(c, obj, key, 0, positive, what, out),
                            key, what) == 1;
}

/* A required shape-like parameter: a number > 0. */
static bool dist_pos(scn_ctx *c, json_t *obj, const char *key, double *out) {
  return retry_json_require(
             &c->j,
             retry_json_get_number(&c->j, obj, key, 0, true, HUGE_VAL, false, "a number > 0", out),
             key, "a number > 0") == 1;
}

/* Exactly one of two keys ("median" or "mean", "mean" or "scale"). Returns the one given, or
 * NULL after an error. */
static const char *one_of(scn_ctx *c, json_t *obj, const char *a, const char *b) {
  bool has_a = retry_json_field(obj, a) != NULL, has_b = retry_json_field(obj, b) != NULL;
  /* Both given: reported at the second key, the one to delete. */
  if (has_a && has_b) {
    size_t mark = retry_json_path_push_key(&c->j, b);
    retry_json_fail(&c->j, RETRY_ECONFIG, "give \"%s\" or \"%s\", not both", a, b);
    retry_json_path_pop(&c->j, mark);
    return NULL;
  }
  if (!has_a && !has_b) {
    size_t mark = retry_json_path_push_key(&c->j, a);
    retry_json_fail(&c->j, RETRY_ECONFIG, "\"%s\" is required: %s (or give \"%s\")", a, SCN_DUR_POS,
                    b);
    retry_json_path_pop(&c->j, mark);
    return NULL;
  }
  return has_a ? a : b;
}

/* {"dist": "mixture", "parts": [{"weight": w, "value": DIST}, ...]}: part i with probability
 * w_i / sum(w). A part's value is any distribution, a mixture included (to the kernel's
 * SIM_MIXTURE_MAX_DEPTH levels). The mixture is built by the kernel and kept by the loader
 * (expt__scenario_keep_mixture), which the config borrows it from. */
static bool mixture_value(scn_ctx *c, json_t *v, sim_dist *out) {
  json_t *parts = retry_json_field(v, "parts");
  size_t mark = retry_json_path_push_key(&c->j, "parts");
  const char *what = "a non-empty array of at most 64 parts {\"weight\": w, \"value\": DIST}";
  if (parts == NULL || !json_is_array(parts) || json_array_size(parts) == 0 ||
      json_array_size(parts) > SCN_MAX_MIXTURE_PARTS) {
    if (parts == NULL)
      retry_json_fail(&c->j, RETRY_ECONFIG, "\"parts\" is required: %s", what);
    else
      retry_json_fail_value(&c->j, "\"parts\"", what, parts);
    return false;
  }
  size_t n = json_array_size(parts);
  double weights[SCN_MAX_MIXTURE_PARTS], sum = 0;
  sim_dist ds[SCN_MAX_MIXTURE_PARTS];
  for (size_t i = 0; i < n; i++) {
    json_t *p = json_array_get(parts, i);
    size_t m2 = retry_json_path_push_index(&c->j, i);
    if (!json_is_object(p)) {
      retry_json_fail_value(&c->j, "each part", "an object {\"weight\": w, \"value\": DIST}", p);
      return false;
    }
    if (!retry_json_check_keys(&c->j, p, keys_part, SCN_N_OF(keys_part), "a mixture's part") ||
        retry_json_require(&c->j,
                           retry_json_get_number(&c->j, p, "weight", 0, false, HUGE_VAL, false,
                                                 "a number >= 0", &weights[i]),
                           "weight", "a number >= 0 (relative: 99 and 1, or 0.99 and 0.01)") != 1)
      return false;
    json_t *pv = retry_json_field(p, "value");
    size_t m3 = retry_json_path_push_key(&c->j, "value");
    if (pv == NULL) {
      retry_json_fail(&c->j, RETRY_ECONFIG,
                      "\"value\" is required: a duration such as \"10ms\" or a distribution");
      return false;
    }
    if (!dist_value(c, pv, "\"value\"", &ds[i])) return false;
    retry_json_path_pop(&c->j, m3);
    retry_json_path_pop(&c->j, m2);
    sum += weights[i];
  }
  if (!(sum > 0) || !isfinite(sum)) {
    retry_json_fail(&c->j, RETRY_ECONFIG,
                    "the parts' weights must add up to a finite number > 0, got %g", sum);
    return false;
  }
  retry_error e;
  retry_error_clear(&e);
  sim_mixture *m = sim_mixture_create(n, weights, ds, expt__scenario_retry_alloc(), &e);
  if (m == NULL) {
    /* Too deep a nesting, or memory: the kernel's message, at the parts. */
    retry_json_fail(&c->j, e.code == RETRY_ENOMEM ? RETRY_ENOMEM : RETRY_ECONFIG, "%s",
                    e.code == RETRY_ENOMEM ? "out of memory loading the scenario" : e.message);
    return false;
  }
  if (!expt__scenario_keep_mixture(c, m)) return false;
  retry_json_path_pop(&c->j, mark);
  *out = sim_dist_of_mixture(m);
  return true;
}

/* {"dist": "empirical", "file": NAME}: the samples or histogram of a CSV file (docs/
 * simulator.md, "Empirical distributions from a file"), named relative to the scenario's
 * directory, read once per scenario and recorded in summary.json's inputs. */
static bool empirical_value(scn_ctx *c, json_t *v, sim_dist *out) {
  const char *name = NULL;
  const char *what = "the name of a CSV file of samples or a histogram, relative to the scenario";
  int rc = retry_json_get_string(&c->j, v, "file", &name);
  if (retry_json_require(&c->j, rc, "file", what) != 1) return false;
  size_t mark = retry_json_path_push_key(&c->j, "file");
  if (name[0] == '\0') {
    retry_json_fail_value(&c->j, "\"file\"", what, json_object_get(v, "file"));
    return false;
  }
  const sim_empirical *e = expt__scenario_data_file(c, name);
  if (e == NULL) return false;
  retry_json_path_pop(&c->j, mark);
  *out = sim_dist_of_empirical(e);
  return true;
}

/* The parameters go into sim_dist as model_config.h documents them, in ns as doubles; the
 * user-facing forms that GSL does not take directly are converted here: a lognormal given by
 * its mean (mu = ln(mean) - sigma^2 / 2) and a gamma given by its mean (scale = mean / k). */
static bool parse_dist_object(scn_ctx *c, json_t *v, int kind, sim_dist *out) {
  int64_t a = 0, b = 0;
  double k = 0;
  /* Built in a local and copied out only when complete, so *out keeps the caller's default
   * after any error. Durations arrive as int64 ns and are stored as doubles, sim_dist's
   * unit for every time parameter. */
  sim_dist d = {.kind = (sim_dist_kind)kind};
  const char *which;
  switch ((sim_dist_kind)kind) {
    case SIM_DIST_CONSTANT:
      if (!dist_dur(c, v, "value", false, &a)) return false;
      d.p1 = (double)a;
      break;
    case SIM_DIST_EXPONENTIAL:
      if (!dist_dur(c, v, "mean", true, &a)) return false;
      d.p1 = (double)a;
      break;
    case SIM_DIST_LOGNORMAL:
      if ((which = one_of(c, v, "median", "mean")) == NULL || !dist_dur(c, v, which, true, &a) ||
          !dist_pos(c, v, "sigma", &k))
        return false;
      /* p1 is mu, the mean of the log: a lognormal's median is e^mu, and its mean is
       * e^(mu + sigma^2 / 2), hence the correction only when the mean was given. */
      d.p1 = log((double)a) - (strcmp(which, "mean") == 0 ? k * k / 2 : 0);
      d.p2 = k;
      break;
    case SIM_DIST_GAMMA:
      if (!dist_pos(c, v, "shape", &k) || (which = one_of(c, v, "mean", "scale")) == NULL ||
          !dist_dur(c, v, which, true, &a))
        return false;
      d.p1 = k;
      /* The mean of a gamma is shape x scale. */
      d.p2 = strcmp(which, "mean") == 0 ? (double)a / k : (double)a;
      break;
    case SIM_DIST_WEIBULL:
    case SIM_DIST_PARETO:
      if (!dist_pos(c, v, "shape", &k) || !dist_dur(c, v, "scale", true, &a)) return false;
      d.p1 = k;
      d.p2 = (double)a;
      break;
    case SIM_DIST_UNIFORM:
      if (!dist_dur(c, v, "min", false, &a) || !dist_dur(c, v, "max", false, &b)) return false;
      /* min == max is allowed: a constant written as a range. */
      if (b < a) {
        retry_json_fail_field(&c->j, v, "max", ">= \"min\"");
        return false;
      }
      d.p1 = (double)a;
      d.p2 = (double)b;
      break;
    case SIM_DIST_MIXTURE: return mixture_value(c, v, out);
    case SIM_DIST_EMPIRICAL: return empirical_value(c, v, out);
  }
  *out = d;
  return true;
}

/* A distribution: a duration string is the constant shorthand (by far the commonest case),
 * an object names the kind in "dist" and may hold only that kind's keys; anything else,
 * including a bare number, is refused with a message asking for a unit or an object. */
static bool dist_value(scn_ctx *c, json_t *v, const char *label, sim_dist *out) {
  /* A number goes through duration_value too, only to get its "needs a unit" message. */
  if (json_is_string(v) || json_is_number(v)) {
    int64_t ns = 0;
    if (!expt__scenario_duration_value(c, v, label, 0, false, SCN_DUR_NONNEG, &ns)) return false;
    out->kind = SIM_DIST_CONSTANT;
    out->p1 = (double)ns;
    out->p2 = 0;
    return true;
  }
  if (!json_is_object(v)) {
    retry_json_fail_value(&c->j, label, "a duration such as \"10ms\" or an object {\"dist\": ...}",
                          v);
    return false;
  }
  int kind = 0;
  int rc = retry_json_get_enum(&c->j, v, "dist", dist_names, SCN_N_OF(dist_names), &kind);
  if (retry_json_require(&c->j, rc, "dist",
                         "\"constant\", \"exponential\", \"lognormal\", \"gamma\", "
                         "\"weibull\", \"pareto\", \"uniform\", \"mixture\" or "
                         "\"empirical\"") != 1)
    return false;
  char where[48];
  expt__scenario_kind_where(where, sizeof where, dist_names[kind], "distribution");
  if (!retry_json_check_keys(&c->j, v, dist_allowed[kind].keys, dist_allowed[kind].n, where))
    return false;
  return parse_dist_object(c, v, kind, out);
}

/* obj[key] as a distribution; absent leaves *out (the caller's default) alone. */
int expt__scenario_get_dist(scn_ctx *c, json_t *obj, const char *key, sim_dist *out) {
  json_t *v = retry_json_field(obj, key);
  if (v == NULL) return 0;
  char label[64];
  retry_json_quote(label, sizeof label, key);
  size_t mark = retry_json_path_push_key(&c->j, key);
  bool ok = dist_value(c, v, label, out);
  retry_json_path_pop(&c->j, mark);
  return ok ? 1 : -1;
}

/* }================================================================== */

/* {==================================================================
 * Rate profiles
 * =================================================================== */

static const char *const profile_kinds[] = {"constant", "step", "ramp", "spike", "points"};
/* Mirrors profile_kinds. There is no model enum to follow: every shape is stored as points. */
enum { PROF_CONSTANT, PROF_STEP, PROF_RAMP, PROF_SPIKE, PROF_POINTS };

static const char *const keys_p_constant[] = {"kind", "rate"};
static const char *const keys_p_step[] = {"kind", "from", "to", "at"};
static const char *const keys_p_ramp[] = {"kind", "from", "to", "start", "end"};
static const char *const keys_p_spike[] = {"kind", "base", "peak", "start", "end"};
static const char *const keys_p_points[] = {"kind", "points"};

static const dist_keys profile_allowed[] = {
    {keys_p_constant, SCN_N_OF(keys_p_constant)}, {keys_p_step, SCN_N_OF(keys_p_step)},
    {keys_p_ramp, SCN_N_OF(keys_p_ramp)},         {keys_p_spike, SCN_N_OF(keys_p_spike)},
    {keys_p_points, SCN_N_OF(keys_p_points)},
};

/* obj[key] as a rate > 0 (calls or tokens a second), with the path at the key while it is
 * read. Returns 1, 0 when absent, -1 on error. */
int expt__scenario_get_rate(scn_ctx *c, json_t *obj, const char *key, double *out) {
  json_t *v = retry_json_field(obj, key);
  if (v == NULL) return 0;
  char label[64];
  retry_json_quote(label, sizeof label, key);
  size_t mark = retry_json_path_push_key(&c->j, key);
  double r = 0;
  bool ok = rate_value(c, v, label, &r);
  if (ok && r <= 0) {
    retry_json_fail_value(&c->j, label, "a rate > 0 such as \"800/s\" (/s, /ms, /min, /h)", v);
    ok = false;
  }
  if (ok) {
    retry_json_path_pop(&c->j, mark);
    *out = r;
  }
  return ok ? 1 : -1;
}

/* A required rate field. */
static bool prof_rate(scn_ctx *c, json_t *obj, const char *key, double *out) {
  /* Presence is checked with the field itself: the rate getter has no "absent" result. */
  json_t *v = retry_json_field(obj, key);
  if (retry_json_require(&c->j, v != NULL, key, RATE_WHAT) != 1) return false;
  char label[64];
  retry_json_quote(label, sizeof label, key);
  size_t mark = retry_json_path_push_key(&c->j, key);
  bool ok = rate_value(c, v, label, out);
  retry_json_path_pop(&c->j, mark);
  return ok;
}

/* A required time of a shape, >= 0: a step or a ramp may well start at 0. */
static bool prof_time(scn_ctx *c, json_t *obj, const char *key, int64_t *out) {
  return retry_json_require(&c->j,
                            expt__scenario_get_duration(c, obj, key, 0, false, SCN_DUR_NONNEG, out),
                            key, SCN_DUR_NONNEG) == 1;
}

/* Callers never exceed SIM_PROFILE_MAX_POINTS: the shapes add at most 4 points and
 * "points" is checked for at most 32 before any is added. */
static void add_point(sim_rate_profile *p, int64_t t_ns, double rate) {
  p->t_ns[p->n_points] = t_ns;
  p->rate[p->n_points] = rate;
  p->n_points++;
}

/* "points": [[time, rate], ...], 1 to SIM_PROFILE_MAX_POINTS of them, times non-decreasing
 * (two equal times make a step). */
static bool parse_points(scn_ctx *c, json_t *obj, sim_rate_profile *p) {
  json_t *pts = retry_json_field(obj, "points");
  const char *what = "an array of 1 to 32 [time, rate] pairs such as [\"10s\", \"300/s\"]";
  if (retry_json_require(&c->j, pts != NULL, "points", what) != 1) return false;
  size_t mark = retry_json_path_push_key(&c->j, "points");
  if (!json_is_array(pts) || json_array_size(pts) == 0 ||
      json_array_size(pts) > SIM_PROFILE_MAX_POINTS) {
    retry_json_fail_value(&c->j, "\"points\"", what, pts);
    return false;
  }
  for (size_t i = 0; i < json_array_size(pts); i++) {
    json_t *pair = json_array_get(pts, i);
    size_t mi = retry_json_path_push_index(&c->j, i);
    if (!json_is_array(pair) || json_array_size(pair) != 2) {
      retry_json_fail_value(&c->j, "each point", "a [time, rate] pair such as [\"10s\", \"300/s\"]",
                            pair);
      return false;
    }
    int64_t t = 0;
    double r = 0;
    size_t m0 = retry_json_path_push_index(&c->j, 0);
    if (!expt__scenario_duration_value(c, json_array_get(pair, 0), "a point's time", 0, false,
                                       SCN_DUR_NONNEG, &t))
      return false;
    /* The time is judged against the previous point before the rate is read, so errors come
     * in the order of the pair. Paths: [i][0] for the time, [i][1] for the rate; the pop to
     * mi after the rate removes both levels. */
    if (p->n_points > 0 && t < p->t_ns[p->n_points - 1]) {
      char got[64], prev[64];
      retry_json_describe(json_array_get(pair, 0), got, sizeof got);
      retry_json_describe(json_array_get(json_array_get(pts, i - 1), 0), prev, sizeof prev);
      retry_json_fail(&c->j, RETRY_ECONFIG, "point times must not decrease: %s comes after %s", got,
                      prev);
      return false;
    }
    retry_json_path_pop(&c->j, m0);
    retry_json_path_push_index(&c->j, 1);
    if (!rate_value(c, json_array_get(pair, 1), "a point's rate", &r)) return false;
    retry_json_path_pop(&c->j, mi);
    add_point(p, t, r);
  }
  retry_json_path_pop(&c->j, mark);
  return true;
}

/* A start/end pair of a ramp or spike: end after start. */
static bool start_end(scn_ctx *c, json_t *obj, int64_t *start, int64_t *end) {
  if (!prof_time(c, obj, "start", start) || !prof_time(c, obj, "end", end)) return false;
  if (*end <= *start) {
    retry_json_fail_field(&c->j, obj, "end", "after \"start\"");
    return false;
  }
  return true;
}

/* Every shape becomes points, which is all sim_rate_profile knows: the world interpolates
 * between them and holds the first and last rate outside. A step is two points at one time,
 * so it is exact whatever the interpolation does between them. */
static bool parse_profile_object(scn_ctx *c, json_t *v, int kind, sim_rate_profile *p) {
  double a = 0, b = 0;
  int64_t t0 = 0, t1 = 0;
  switch (kind) {
    case PROF_CONSTANT:
      if (!prof_rate(c, v, "rate", &a)) return false;
      add_point(p, 0, a);
      return true;
    case PROF_STEP:
      if (!prof_rate(c, v, "from", &a) || !prof_rate(c, v, "to", &b) || !prof_time(c, v, "at", &t0))
        return false;
      add_point(p, t0, a);
      add_point(p, t0, b);
      return true;
    case PROF_RAMP:
      if (!prof_rate(c, v, "from", &a) || !prof_rate(c, v, "to", &b) || !start_end(c, v, &t0, &t1))
        return false;
      add_point(p, t0, a);
      add_point(p, t1, b);
      return true;
    case PROF_SPIKE:
      /* Base before and after, peak inside: a step up at start and a step down at end. */
      if (!prof_rate(c, v, "base", &a) || !prof_rate(c, v, "peak", &b) ||
          !start_end(c, v, &t0, &t1))
        return false;
      add_point(p, t0, a);
      add_point(p, t0, b);
      add_point(p, t1, b);
      add_point(p, t1, a);
      return true;
    /* PROF_POINTS: kind came from get_enum, so no other value reaches here. */
    default: return parse_points(c, v, p);
  }
}

/* A profile that is 0 everywhere is refused: it describes a population that never calls,
 * which is never the intent and would make every rate-based statistic divide by zero. */
bool expt__scenario_profile_value(scn_ctx *c, json_t *v, const char *label, sim_rate_profile *out) {
  /* Built in a local, like a distribution: *out is written only once the profile is valid. */
  sim_rate_profile p;
  memset(&p, 0, sizeof p);
  if (json_is_string(v) || json_is_number(v)) {
    double r = 0;
    if (!rate_value(c, v, label, &r)) return false;
    add_point(&p, 0, r);
  } else if (!json_is_object(v)) {
    retry_json_fail_value(&c->j, label, "a rate such as \"800/s\" or an object {\"kind\": ...}", v);
    return false;
  } else {
    int kind = 0;
    int rc = retry_json_get_enum(&c->j, v, "kind", profile_kinds, SCN_N_OF(profile_kinds), &kind);
    if (retry_json_require(&c->j, rc, "kind",
                           "\"constant\", \"step\", \"ramp\", \"spike\" or \"points\"") != 1)
      return false;
    char where[48];
    expt__scenario_kind_where(where, sizeof where, profile_kinds[kind], "rate");
    if (!retry_json_check_keys(&c->j, v, profile_allowed[kind].keys, profile_allowed[kind].n,
                               where) ||
        !parse_profile_object(c, v, kind, &p))
      return false;
  }
  double max = 0;
  for (int i = 0; i < p.n_points; i++)
    if (p.rate[i] > max) max = p.rate[i];
  /* Written as !(max > 0) rather than max <= 0 so that a NaN would be refused too, although
   * the rate parser never yields one. */
  if (!(max > 0)) {
    retry_json_fail(&c->j, RETRY_ECONFIG, "%s is 0 everywhere: some rate must be > 0", label);
    return false;
  }
  *out = p;
  return true;
}

/* }================================================================== */

/* {==================================================================
 * Statuses
 * =================================================================== */

/* A status in the space of the service that sends it. gRPC takes the upper-case code names
 * the service config uses (retry_grpc_code_parse) or the numbers; HTTP takes numbers only, as
 * a status line has them. */
bool expt__scenario_status_value(scn_ctx *c, json_t *v, const char *label, retry_space space,
                                 bool allow_ok, int32_t *out) {
  /* code stays -1 when nothing matched; each space then gets one message listing what it
   * accepts, so a gRPC name given to an HTTP service reads "an HTTP status, ...". */
  int code = -1;
  if (space == RETRY_SPACE_GRPC) {
    if (json_is_string(v)) {
      if (retry_grpc_code_parse(json_string_value(v), &code) != RETRY_OK) code = -1;
    } else if (json_is_integer(v) && json_integer_value(v) >= 0 &&
               json_integer_value(v) < RETRY_GRPC_N_CODES) {
      /* Numbers as grpc-status carries them on the wire; names as the service config
       * writes them. Both read the same in the summary, which prints names. */
      code = (int)json_integer_value(v);
    }
    if (code < 0) {
      retry_json_fail_value(&c->j, label,
                            "a gRPC status: a code name such as \"UNAVAILABLE\" or 0..16", v);
      return false;
    }
  } else {
    /* An integer only: "503" as a string is refused here, although a map key has to be one
     * (JSON keys are strings); a value has no such constraint, so it takes the plain form. */
    if (json_is_integer(v) && json_integer_value(v) >= 100 && json_integer_value(v) <= 599)
      code = (int)json_integer_value(v);
    if (code < 0) {
      retry_json_fail_value(&c->j, label, "an HTTP status, an integer 100..599", v);
      return false;
    }
  }
  /* A fault's status or a full queue's reply must be a failure: one that answered OK would
   * inject nothing. Map values pass allow_ok, since a gateway may turn a failure into OK. */
  if (!allow_ok && retry_status_is_ok(space, code)) {
    char got[64];
    retry_json_describe(v, got, sizeof got);
    retry_json_fail(&c->j, RETRY_ECONFIG, "%s must be a failure status, not a success, got %s",
                    label, got);
    return false;
  }
  *out = code;
  return true;
}

/* obj[key] as a status of the given space. */
int expt__scenario_get_status(scn_ctx *c, json_t *obj, const char *key, retry_space space,
                              bool allow_ok, int32_t *out) {
  json_t *v = retry_json_field(obj, key);
  if (v == NULL) return 0;
  char label[64];
  retry_json_quote(label, sizeof label, key);
  size_t mark = retry_json_path_push_key(&c->j, key);
  bool ok = expt__scenario_status_value(c, v, label, space, allow_ok, out);
  retry_json_path_pop(&c->j, mark);
  return ok ? 1 : -1;
}

/* }================================================================== */
