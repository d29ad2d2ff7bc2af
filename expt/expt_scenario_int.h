/*
 * expt_scenario_int.h: what the files of the scenario loader share; private to them (and to
 * tests/test_expt_scenario.c, which reaches the SHA-256 and the allocation hook through it).
 *
 *   expt_scenario.c         loading, policy files, --set, variants, expectations, provenance,
 *                          the accessors, SHA-256 (nettle)
 *   expt_scenario_parse.c   a document into a model_config: top level, services, calls, faults
 *   expt_scenario_client.c  clients: arrivals, methods, policies
 *   expt_scenario_value.c   the context and typed values (durations, distributions, ...)
 *   expt_scenario_path.c    the PATH syntax of --set, variants and expectations
 *   expt_scenario_units.c   expt_duration_parse, expt_rate_parse
 *   expt_scenario_study.c   the study keys "sweep" and "search"
 *
 * Errors follow expt_error.h: the checks and getters here (expt__scenario_*) return a bool (or
 * 1/0/-1 like retry_json.h's getters) because their scn_ctx already carries the retry_error,
 * c->j.e (first error wins, with the JSON path being read); the loader copies it out to its
 * caller's err. The functions without a context take a retry_error *err themselves.
 */
#ifndef EXPT_SCENARIO_INT_H
#define EXPT_SCENARIO_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "expt/expt_recovery.h"
#include "models/model_config.h"
#include "retry/retry.h"
#include "retry/retry_json.h"
#include "expt/expt_scenario.h"

#define SCN_N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* Limits of the format, each checked where the value is read. */
#define SCN_NAME_MAX 63           /* services, clients, variants, the scenario */
#define SCN_MAX_REPLICAS MODEL_MAX_REPLICAS /* the world's limit (models/model_config.h) */
#define SCN_MAX_WORKERS 1000000   /* per replica */
#define SCN_MAX_QUEUE 10000000    /* per replica */
#define SCN_MAX_CACHE 100000000   /* a cache's entries (about 3.6 GB) */
#define SCN_MAX_COUNT 100000000   /* clients in one population (the memory estimate bounds many) */
#define SCN_MAX_RATE 1e9          /* calls per second, any profile point */
#define SCN_MAX_BUCKETS 1000000   /* duration / bucket */
#define SCN_MAX_ATTEMPT_MASK 32   /* a fault's attempts are 1..32 */
#define SCN_MAX_USER_RETRIES 1000 /* closed loop "refresh button" */
#define SCN_MAX_FANOUT 1000       /* copies of one downstream call in a fan-out */

/* The "what" of messages shared by several files. */
#define SCN_DUR_POS "a duration > 0 such as \"10ms\" (ns, us, ms, s, m, h)"
#define SCN_DUR_NONNEG "a duration >= 0 such as \"10ms\" (ns, us, ms, s, m, h)"
#define SCN_NAME_WHAT "1 to 63 characters of A-Z, a-z, 0-9, '_', '.' and '-'"

/* {==================================================================
 * The conversion context
 * =================================================================== */

/* A service's name and its index in cfg->services, sorted by name so that a call's or a
 * client's reference is found in O(log n): a linear scan made a file of 100,000 services take
 * seconds (issue 10, defect 7). */
typedef struct scn_name_index {
  const char *name; /* borrowed from cfg->services[index].name */
  int index;
} scn_name_index;

/* The policy files read while loading one scenario, each once (by the path opened), in the
 * order first read; their documents are copied into the scenario's, where --set and variants
 * may patch them (expt_scenario.c). Owned by the expt_scenario. */
typedef struct scn_policy_file {
  char *path;       /* as opened: the scenario's directory joined with the name as written */
  char *name;       /* as written in the scenario (relative to its directory), for provenance */
  char sha256[65];  /* of the file's bytes as read */
  json_t *content;  /* the file's document as read, never patched */
  json_t *named_at; /* array of the JSON paths that named the file ("$.clients.web.policy") */
  json_t *origins;  /* a foreign format's provenance (expt_import.h), NULL for a service config */
  const char *format; /* that format's name ("envoy"), NULL for a service config */
} scn_policy_file;

/* A distribution file ({"dist": "empirical", "file": NAME}) read while loading: its samples
 * or histogram, built once and borrowed by every run's sim_dist that names it. */
typedef struct scn_data_file {
  char *path;          /* as opened (the scenario's directory joined with the name) */
  char *name;          /* as written in the scenario, for provenance */
  char sha256[65];     /* of the file's bytes as read */
  sim_empirical *dist; /* owned, unless borrowed */
  bool borrowed;       /* dist is the base scenario's (expt_scenario_derive): not freed here */
  json_t *named_at;    /* array of the JSON paths that named it */
} scn_data_file;

/* What the loader read and built that the runs' configs borrow: the policy files (copied into
 * the document), the distribution files and every mixture a conversion built (a sim_dist
 * borrows its table, so these live as long as the expt_scenario, not as one config). */
typedef struct scn_files {
  scn_policy_file *files;
  size_t n, cap;
  scn_data_file *data;
  size_t n_data, cap_data;
  sim_mixture **mixtures;
  size_t n_mixtures, cap_mixtures;
} scn_files;

/* The state of one conversion, on the caller's stack. The retry_json context (source, JSON
 * path, first error) is embedded as the first member rather than pointed to: it lives exactly
 * as long as the conversion, a pointer could dangle or be shared by mistake, and &c->j is all
 * the shared getters take. Its invariants are retry_json_ctx's: once j.e.code is set nothing
 * else is validated. j.prefix points into prefix, so a scn_ctx is never copied. */
typedef struct scn_ctx {
  retry_json_ctx j;               /* source ("<string>", "<command line>"), path, first error */
  const char *base_dir;           /* directory of relative policy files; "" for the current one */
  const char *variant;            /* the variant whose document is converted, NULL for the base */
  char prefix[SCN_NAME_MAX + 32]; /* `in variant "name": `, every message's start in a variant */
  model_config *cfg;              /* being filled (owned by the caller of expt__scenario_build) */
  expt_recovery_cfg recovery;     /* the document's "recovery", with its defaults */
  scn_files *files;               /* the policy files read so far; NULL: none known */
  scn_name_index *by_name;        /* cfg's services sorted by name, NULL until they are read */
} scn_ctx;

/* Starts a context at path "$" with no error; in a variant, messages get its prefix. */
void expt__scenario_ctx_init(scn_ctx *c, const char *source, const char *base_dir,
                             const char *variant);

/* }================================================================== */

/* {==================================================================
 * expt_scenario_value.c: the format's own typed values
 *
 * The plain getters are retry_json.h's (retry_json_get_int(&c->j, ...)); the ones here follow
 * the same contract: 1 and *out set when the key is present and valid, 0 when it is absent
 * (JSON null counts as absent), -1 after recording an error, *out untouched unless valid. The
 * *_value forms read a value whose path the caller already pushed; label is how messages name
 * it ("\"rate\"", "each time").
 * =================================================================== */

/* A duration string (expt_duration_parse) of at least lo (or more than lo when lo_open). A
 * JSON number is refused with a message asking for a unit. */
bool expt__scenario_duration_value(scn_ctx *c, json_t *v, const char *label, int64_t lo,
                                   bool lo_open, const char *what, int64_t *out);
/* obj[key] as a rate > 0 ("100/s"); 1, 0 when absent, -1 on error. */
int expt__scenario_get_rate(scn_ctx *c, json_t *obj, const char *key, double *out);
int expt__scenario_get_duration(scn_ctx *c, json_t *obj, const char *key, int64_t lo, bool lo_open,
                                const char *what, int64_t *out);
int expt__scenario_get_dist(scn_ctx *c, json_t *obj, const char *key, sim_dist *out);
/* A rate profile: "800/s" or {"kind": constant|step|ramp|spike|points, ...}. */
bool expt__scenario_profile_value(scn_ctx *c, json_t *v, const char *label, sim_rate_profile *out);
/* A status of a space: a gRPC code name or 0..16, or an HTTP integer 100..599. allow_ok:
 * whether success (OK, 2xx) is acceptable. */
bool expt__scenario_status_value(scn_ctx *c, json_t *v, const char *label, retry_space space,
                                 bool allow_ok, int32_t *out);
int expt__scenario_get_status(scn_ctx *c, json_t *obj, const char *key, retry_space space,
                              bool allow_ok, int32_t *out);
/* One downstream call object of caller's handler into call (expt_scenario_parse.c). */
bool expt__scenario_call(scn_ctx *c, json_t *v, model_call_cfg *call,
                         const model_service_cfg *caller);
/* expt_scenario_failure.c: the calls' "on_failure". The fallbacks among calls (an array):
 * each takes a place after the listed calls. */
size_t expt__scenario_count_fallbacks(json_t *calls);
/* The on_failure v of call j of svc; its fallback, if any, goes into svc->calls[*next_slot],
 * which then moves on. */
bool expt__scenario_parse_on_failure(scn_ctx *c, json_t *v, model_service_cfg *svc, size_t j,
                                     size_t *next_slot);
/* A client population's "on_failure" (expt_scenario_failure.c): the same object as a call's,
 * in the target's status space, without "invalidate". */
bool expt__scenario_client_on_failure(scn_ctx *c, json_t *v, model_client_cfg *cl);
/* Once every service is read: each "invalidate" calls a service with a cache. */
bool expt__scenario_check_on_failure(scn_ctx *c);
/* expt_scenario_work.c: a service's "work" (its path pushed). */
bool expt__scenario_parse_work(scn_ctx *c, json_t *v, model_service_cfg *svc);
/* A full method name "/pkg.Service/Method": '/', two non-empty parts without '/'. */
int expt__scenario_get_method(scn_ctx *c, json_t *obj, const char *key, const char **out);
bool expt__scenario_method_is_valid(const char *s);
/* 1..63 bytes of [A-Za-z0-9_.-]. */
bool expt__scenario_name_is_valid(const char *s);
/* `a "kind" what` or `an "kind" what` (what: "fault", "distribution", ...) into buf. */
void expt__scenario_kind_where(char *buf, size_t size, const char *kind, const char *what);
/* "grpc" or "http". */
const char *expt__scenario_space_name(retry_space sp);

/* }================================================================== */

/* {==================================================================
 * expt_scenario_parse.c and expt_scenario_client.c: a document into a model_config
 * =================================================================== */

/* Validates doc completely and converts it. Returns a new config (free with
 * model_config_destroy) or NULL with c->e set. default_name is the name used when the document
 * has none. */
model_config *expt__scenario_build(scn_ctx *c, json_t *doc, const char *default_name);

/* Index of the service called name, or -1. */
int expt__scenario_service_index(const scn_ctx *c, const char *name);

/* A required key (a call's "service", a client's "target") naming a service; *out receives
 * its index. */
bool expt__scenario_service_ref(scn_ctx *c, json_t *obj, const char *key, int *out);
/* "stream": "unary", "client", "server" or "bidi". */
int expt__scenario_get_stream(scn_ctx *c, json_t *obj, retry_stream_kind *out);
/* A service, client or variant name at the current path: 1..63 bytes of [A-Za-z0-9_.-].
 * kind ("service", "client", "variant") is for the message. */
bool expt__scenario_check_name(scn_ctx *c, const char *kind, const char *name);

/* The "clients" object into c->cfg->clients (services already converted). */
bool expt__scenario_parse_clients(scn_ctx *c, json_t *clients);
/* The top-level "operators" and "events" (expt_scenario_ops.c), after the clients: fills
 * c->cfg->ops (left NULL without either key). */
bool expt__scenario_parse_ops(scn_ctx *c, json_t *doc);
/* expt_scenario_inert.c, once services, clients and operators are read: a call's
 * "when_method" that no request of the service can match, a scale event to the count in
 * force. doc is the document being built (for the paths). */
bool expt__scenario_check_inert(scn_ctx *c, json_t *doc);
/* expt_scenario_ctl.c: a service's "outlier_detection", "health_check", "self_eject",
 * "autoscaler" and "scale" (after its calls and faults: svc->ctl, NULL when none). */
bool expt__scenario_parse_ctl(scn_ctx *c, json_t *v, model_service_cfg *svc);

/* A POLICY value (the path is at it, v is not null): a service config object, loaded with
 * retry_config_load_string. A file's name was replaced by the file's document when the
 * scenario was loaded (expt__scenario_expand_policies); an error in a policy equal to a file's
 * document as read names that file and the path in it. *out receives a new config (free with
 * retry_config_destroy), NULL after an error. */
bool expt__scenario_policy_value(scn_ctx *c, json_t *v, retry_config **out);
/* Checks that each of methods[0..n) whose policy retries or hedges uses the status space of
 * service target. policy may be NULL (nothing to check). */
bool expt__scenario_policy_check_space(scn_ctx *c, const retry_config *policy,
                                       const char *const *methods, size_t n, int target);

/* Replaces every POLICY value of doc that names a file (clients.NAME.policy,
 * services.NAME.calls[i].policy) by a copy of the file's document, reading each file once into
 * c->files (with its SHA-256) and noting the JSON path that named it. Values of the wrong
 * shape are left for the conversion to report. quiet: a file that cannot be read or parsed is
 * left as its name, without an error (the pass before --set, which may still replace it).
 * Returns false with the error in c->j (never when quiet, except out of memory). */
bool expt__scenario_expand_policies(scn_ctx *c, json_t *doc, bool quiet);

/* The empirical distribution of the file named name (relative to c->base_dir unless absolute)
 * at the current path: read, hashed and parsed once per scenario into c->files, the path noted
 * in its named_at. Returns it (borrowed, valid until the scenario is destroyed), or NULL after
 * an error in c->j: an I/O error at the current path, an error in the file naming the file and
 * its line. */
const sim_empirical *expt__scenario_data_file(scn_ctx *c, const char *name);
/* Hands m to c->files, which frees it with the scenario. Returns false (m freed, out of memory
 * recorded in c->j) when it cannot be kept. */
bool expt__scenario_keep_mixture(scn_ctx *c, sim_mixture *m);

/* "variants" and "expect" of the base document: shapes only (expt_scenario.c). */
bool expt__scenario_check_variants(scn_ctx *c, json_t *variants);
bool expt__scenario_check_expect(scn_ctx *c, json_t *expect);

/* "sweep" and "search" (expt_scenario_study.c): shapes, with every document; the pair rule
 * (not both); and, once every run is built, that their paths reach a value in every run's
 * document (0, or RETRY_ECONFIG with err filled). */
/* retry_json_check_keys with a more useful message for the first key of obj not in allowed:
 * `unknown key "sweeps"; did you mean "sweep"?` when one is close (retry_json_suggest; with
 * " (keys are case-sensitive)" when only the case differs), else the allowed keys, all of them
 * whenever they fit in a message (space-separated when the comma-separated list does not fit).
 * where as retry_json_check_keys's. Returns true when every key is allowed. */
bool expt__scenario_check_keys(scn_ctx *c, json_t *obj, const char *const *allowed, size_t n,
                               const char *where);
bool expt__scenario_check_sweep(scn_ctx *c, json_t *sweep);
bool expt__scenario_check_search(scn_ctx *c, json_t *search);
/* "recovery.windows" (expt_scenario_windows.c), the path at it: into c->recovery's windows. */
bool expt__scenario_parse_windows(scn_ctx *c, json_t *v);
bool expt__scenario_check_study_pair(scn_ctx *c, json_t *doc);
int expt__scenario_check_axes(const expt_scenario *s, retry_error *err);

/* A sweep axis's "label" and linked "paths" (expt_scenario_linked.c). check_axis_label: the
 * label, when there is one, is 1 to EXPT_AXIS_MAX_LABEL plain characters. check_linked_paths:
 * "paths" (without "path") is 2 to EXPT_AXIS_MAX_LINKED distinct strings, each passing
 * check_one. check_swept_twice: no path of axis i is a path of an earlier axis. Each returns
 * true, or false with the error in c at the axis's JSON path. */
bool expt__scenario_check_axis_label(scn_ctx *c, json_t *ax);
bool expt__scenario_check_linked_paths(scn_ctx *c, json_t *ax,
                                       bool (*check_one)(scn_ctx *c, const char *path));
bool expt__scenario_check_swept_twice(scn_ctx *c, json_t *sweep, size_t i);

/* }================================================================== */

/* {==================================================================
 * expt_scenario_path.c: PATH syntax
 * =================================================================== */

/* Checks the syntax of path. allow_match: whether [key=value] selectors are allowed (expect
 * paths). Returns 0, or RETRY_EINVAL with the reason alone in err's message ("an index has a
 * leading zero"; no source, no path: callers quote the path); err may be NULL. */
int expt__scenario_path_check(const char *path, bool allow_match, retry_error *err);
/* The first key of path ("services" for "services.api.workers"), into buf. False when path
 * does not start with a key. */
bool expt__scenario_path_head(const char *path, char *buf, size_t size);
/* Sets path in root to value (taken: always released), creating missing objects; a null
 * value deletes. Returns RETRY_OK, RETRY_EINVAL with the reason in err (as
 * expt__scenario_path_check's), or RETRY_ENOMEM (err left alone). err may be NULL. */
int expt__scenario_path_set(json_t *root, const char *path, json_t *value, retry_error *err);

/* }================================================================== */

/* {==================================================================
 * Allocation (every allocation of the loader goes through these) and SHA-256
 * =================================================================== */

void *expt__scenario_malloc(size_t size);
void *expt__scenario_calloc(size_t n, size_t size);
char *expt__scenario_strdup(const char *s);
/* The allocator handed to retry_config loads: NULL unless a fail hook is set. */
const retry_allocator *expt__scenario_retry_alloc(void);
/* Tests only: when set, every allocation of the loader first asks fail(ctx) and returns NULL
 * when it answers true. Memory is still malloc's, so model_config_destroy frees it. NULL
 * removes the hook. Not thread-safe. */
void expt__scenario_set_fail_hook(bool (*fail)(void *ctx), void *ctx);

/* Lower-case hex SHA-256 (FIPS 180-4, computed by nettle) of data[0..len) into hex (64
 * digits and a NUL). */
void expt__scenario_sha256(const void *data, size_t len, char hex[65]);

/* }================================================================== */

/* The --set overrides sets[0..n_sets) as provenance: [{"path", "value"}] (the value as
 * given, a string or null). New reference, NULL when out of memory. */
json_t *expt__scenario_overrides_json(const expt_set *sets, size_t n_sets);

/* Applies sets[0..n_sets) to doc in order (label, "--set" or the variant's, names them in a
 * message). With files not NULL, a policy file that an override names is read into doc before
 * the next override, so that a later path can patch inside it (expt__scenario_read_named).
 * Returns true, or false with err filled (source "<command line>"). */
bool expt__scenario_apply_sets(json_t *doc, const expt_set *sets, size_t n_sets, const char *label,
                               const char *base_dir, scn_files *files, retry_error *err);

/* Reads into doc the policy files its policies name (expt__scenario_expand_policies), with a
 * context of its own at "$" so that the paths noted are the document's: what an override or a
 * variant's "set" does after each path that may name a file (quiet), and, when a later path
 * finds a name in its way, to report why that file could not be read (not quiet). Returns
 * false with err filled (when quiet, only out of memory). */
bool expt__scenario_read_named(json_t *doc, const char *source, const char *base_dir,
                               scn_files *files, bool quiet, retry_error *err);

/* The scenario itself: every expt_scenario_*.c file of the loader shares it. */
/* One run: the base document, or one variant of it. In a scenario abandoned half-way any
 * member may still be NULL; expt_scenario_destroy relies on every release call accepting that. */
typedef struct scn_run {
  char *name;                 /* the variant's name, or the scenario's */
  model_config *cfg;          /* converted from doc */
  expt_recovery_cfg recovery; /* how its recovery is judged */
  json_t *doc;                /* the resolved document */
  json_t *expect;             /* merged expectations, NULL when none */
  size_t variant;             /* its index in "variants" (0 without variants) */
} scn_run;

struct expt_scenario {
  char *name;         /* the base document's name */
  char sha256[65];    /* of the bytes as read */
  json_t *doc;        /* the document after --set */
  scn_files files;    /* the policy files read into it */
  json_t *inputs;     /* provenance: the files read (expt_scenario_inputs) */
  json_t *overrides;  /* provenance: the --set overrides as given */
  char *source;       /* the scenario file as named, for messages */
  char *base_dir;     /* the directory of relative policy and data files, kept for derive */
  char *default_name; /* the name used when the document has none, kept for derive */
  bool has_variants;  /* "variants" was present: the runs are the variants */
  scn_run *runs;      /* n_runs entries, zeroed until each is built */
  size_t n_runs;      /* 1 without variants; set only once runs exists */
};

#endif /* EXPT_SCENARIO_INT_H */
