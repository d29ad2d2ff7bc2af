/*
 * expt_import_aws.c: the AWS shared config file (~/.aws/config, INI) read verbatim: a profile's
 * retry_mode (legacy, standard, adaptive) and max_attempts, as botocore reads them, translated
 * into an HTTP policy with the AWS retry quota and adaptive mode of the "retrysim" block.
 * Semantics from the SDKs and Tools reference and botocore, as /work/research/policy-formats.md
 * section 5 records them (docs/policy-formats.md, "AWS").
 * Invariant: the policy is one profile's, [default] when the file has one, else the first.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expt/expt_import_int.h"
#include "retry/retry_json.h"

/* Whether line (without its newline) is a section header, and its name into name. */
static bool section(const char *line, size_t len, char *name, size_t size) {
  while (len > 0 && isspace((unsigned char)line[len - 1])) len--;
  while (len > 0 && isspace((unsigned char)*line)) line++, len--;
  if (len < 2 || line[0] != '[' || line[len - 1] != ']') return false;
  snprintf(name, size, "%.*s", (int)(len - 2), line + 1);
  return true;
}

bool expt__import_is_aws(const char *text, size_t len) {
  for (size_t i = 0; i < len;) {
    size_t e = i;
    while (e < len && text[e] != '\n') e++;
    size_t b = i;
    while (b < e && isspace((unsigned char)text[b])) b++;
    if (b < e && text[b] != '#' && text[b] != ';') {
      char name[128];
      return section(text + b, e - b, name, sizeof name) &&
             (strcmp(name, "default") == 0 || strncmp(name, "profile ", 8) == 0 ||
              strncmp(name, "sso-session ", 12) == 0 || strncmp(name, "services ", 9) == 0);
    }
    i = e + 1;
  }
  return false;
}

/* The file as {"SECTION": {"key": "value"}} with positions ("$.SECTION.key"); a line that is
 * neither a section, a key = value, a comment nor blank is an error. Indented lines continue a
 * nested value (s3 = ...) and are skipped. */
int expt__import_aws_parse(imp_ctx *c, const char *text, size_t len, json_t *doc, json_t *pos) {
  json_t *cur = NULL;
  char sec[128] = "", path[IMP_PATH], key[IMP_PATH + 8];
  int line = 0;
  for (size_t i = 0; i < len; line++) {
    size_t e = i;
    while (e < len && text[e] != '\n') e++;
    const char *l = text + i;
    size_t n = e - i;
    i = e + 1;
    size_t b = 0;
    while (b < n && isspace((unsigned char)l[b])) b++;
    if (b == n || l[b] == '#' || l[b] == ';') continue;
    if (b > 0 && cur != NULL) continue; /* a nested value's line */
    if (section(l, n, sec, sizeof sec)) {
      cur = json_object();
      if (cur == NULL || json_object_set_new(doc, sec, cur) != 0) return imp_oom(c);
      snprintf(key, sizeof key, "0$.%s", sec);
      json_object_set_new(pos, key, json_pack("[i, i]", line + 1, (int)b + 1));
      continue;
    }
    const char *eq = memchr(l, '=', n);
    if (eq == NULL || cur == NULL) {
      retry_error_set(c->err, RETRY_ECONFIG, c->source, "$", line + 1, (int)b + 1,
                      "not a [section] or a key = value line of an AWS config file");
      return -1;
    }
    size_t ke = (size_t)(eq - l);
    while (ke > b && isspace((unsigned char)l[ke - 1])) ke--;
    size_t vb = (size_t)(eq - l) + 1, ve = n;
    while (vb < n && isspace((unsigned char)l[vb])) vb++;
    while (ve > vb && isspace((unsigned char)l[ve - 1])) ve--;
    char k[96];
    snprintf(k, sizeof k, "%.*s", (int)(ke - b), l + b);
    json_object_set_new(cur, k, json_stringn(l + vb, ve - vb));
    snprintf(path, sizeof path, "$.%s.%s", sec, k);
    snprintf(key, sizeof key, "0%s", path);
    json_object_set_new(pos, key, json_pack("[i, i]", line + 1, (int)vb + 1));
  }
  return 0;
}

/* The profile the policy is: [default], else the first section that is a profile. */
static const char *pick_profile(json_t *doc, json_t **prof) {
  if ((*prof = json_object_get(doc, "default")) != NULL) return "default";
  const char *k;
  json_t *v;
  json_object_foreach(doc, k, v) if (strncmp(k, "profile ", 8) == 0) return *prof = v, k;
  return NULL;
}

/* retrysim's own key in a profile: which SDK behaviour to run, "2026" (the default) or
 * "before-2026" (what an SDK released before the change, or AWS_NEW_RETRIES_2026=false during
 * the opt-in, does), so that before and after can be compared. */
#define BEHAVIOR_KEY "retrysim_retry_behavior"

static void put(imp_ctx *c, json_t *obj, const char *out, const char *key, json_t *v,
                const char *src, const char *note) {
  char p[IMP_PATH];
  if (v == NULL || json_object_set_new(obj, key, v) != 0) {
    imp_oom(c);
    return;
  }
  imp_origin(c, imp_path_key(p, out, key), src, note);
}

int expt__import_aws(imp_ctx *c, json_t *doc, json_t *config) {
  json_t *prof;
  const char *name = pick_profile(doc, &prof);
  if (name == NULL) return imp_fail(c, "$", "no [default] or [profile NAME] section");
  char src[IMP_PATH], mp[IMP_PATH] = "", ap[IMP_PATH] = "";
  snprintf(src, sizeof src, "$.%s", name);
  static const char *const retry_keys[] = {"retry_mode", "max_attempts", BEHAVIOR_KEY};
  const char *k;
  json_t *v;
  json_object_foreach(prof, k, v) {
    const char *near = retry_json_suggest(k, retry_keys, 3, NULL);
    if (near != NULL && strcmp(near, k) != 0)
      imp_warn(c, imp_path_key(mp, src, k), "unknown field \"%s\" ignored; did you mean \"%s\"?", k, near);
  }
  mp[0] = '\0';
  const char *mode = json_string_value(json_object_get(prof, "retry_mode"));
  if (mode != NULL) imp_path_key(mp, src, "retry_mode");
  else mode = "standard";
  bool legacy = strcmp(mode, "legacy") == 0, adaptive = strcmp(mode, "adaptive") == 0;
  if (!legacy && !adaptive && strcmp(mode, "standard") != 0)
    return imp_fail(c, mp, "retry_mode is standard, adaptive or legacy, not \"%s\"", mode);
  /* Which SDK behaviour: the 2026 one, the SDKs' default since 2026-11-10, unless the profile
   * asks for the one before (retrysim's own key; SDKs ignore keys they do not know). */
  char bp[IMP_PATH] = "";
  const char *behavior = json_string_value(json_object_get(prof, BEHAVIOR_KEY));
  if (behavior != NULL) imp_path_key(bp, src, BEHAVIOR_KEY);
  if (behavior != NULL && strcmp(behavior, "2026") != 0 && strcmp(behavior, "before-2026") != 0)
    return imp_fail(c, bp, BEHAVIOR_KEY " is 2026 or before-2026, not \"%s\"", behavior);
  bool v2026 = !legacy && (behavior == NULL || strcmp(behavior, "2026") == 0);
  long long attempts = legacy ? 5 : 3;
  const char *ma = json_string_value(json_object_get(prof, "max_attempts"));
  if (ma != NULL) {
    char *end;
    imp_path_key(ap, src, "max_attempts");
    attempts = strtoll(ma, &end, 10);
    if (*end != '\0' || end == ma || attempts < 1 || attempts > 1000)
      return imp_fail(c, ap, "max_attempts is an integer >= 1 (attempts, the first included)");
  }
  json_t *entries = json_array(), *entry = json_object(), *top = json_object();
  if (entries == NULL || entry == NULL || top == NULL ||
      json_array_append_new(entries, entry) != 0 || json_object_set_new(config, "methodConfig", entries) != 0 ||
      json_object_set_new(config, "retrysim", top) != 0)
    return json_decref(entries), json_decref(top), imp_oom(c);
  const char *out = "$.methodConfig[0]";
  put(c, entry, out, "name", json_pack("[{}]"), NULL, "every method: a profile applies to every call");
  const char *mode_note = mp[0] ? NULL : "the SDKs' default mode, standard (botocore's since its 2026 change)";
  if (attempts > 1) {
    json_t *rp = json_object(), *ext = json_object();
    json_object_set_new(entry, "retryPolicy", rp);
    json_object_set_new(entry, "retrysim", ext);
    const char *p = "$.methodConfig[0].retryPolicy", *q = "$.methodConfig[0].retrysim";
    put(c, rp, p, "maxAttempts", json_integer(attempts), ap[0] ? ap : NULL,
        ap[0] ? NULL : legacy ? "botocore legacy's default, 5 attempts" : "the standard default, 3 attempts");
    const char *why = bp[0] ? bp : NULL;
    if (v2026) {
      put(c, rp, p, "initialBackoff", json_string("0.05s"), why,
          "the 2026 behaviour: U[0,1) x min(50 ms x 2^(n-1), 20 s) after a transient error "
          "(DynamoDB's 25 ms is not modelled)");
      put(c, ext, q, "throttleInitialBackoff", json_string("1s"), why,
          "the 2026 behaviour: 1 s base after a throttle (429 here)");
    } else {
      put(c, rp, p, "initialBackoff", json_string("1s"), why,
          legacy ? "botocore legacy: U[0,1) x 2^(n-1) s"
                 : "botocore standard before its 2026 change: U[0,1) x min(2^(n-1), 20) s, one "
                   "base for every failure");
    }
    /* Legacy has no cap: the largest delay the attempts reach leaves it unused. */
    char d[40];
    imp_duration_format(legacy ? (1LL << (attempts - 2 < 30 ? attempts - 2 : 30)) * 1000000000LL
                               : 20000000000LL, d, sizeof d);
    put(c, rp, p, "maxBackoff", json_string(d), NULL,
        legacy ? "legacy has no cap: the largest delay these attempts reach" : "standard's cap, 20 s");
    put(c, rp, p, "backoffMultiplier", json_integer(2), NULL, "the delay doubles per attempt");
    json_t *codes = legacy ? json_pack("[i,i,i,i,i,i]", 500, 502, 503, 504, 509, 429)
                           : json_pack("[i,i,i,i,i]", 500, 502, 503, 504, 429);
    put(c, rp, p, "retryableStatusCodes", codes, NULL,
        "transient 500, 502, 503, 504 (and connection errors: a down replica's 503), throttling "
        "as 429; legacy also 509");
    put(c, ext, q, "statusSpace", json_string("http"), NULL, "AWS services answer HTTP");
    put(c, ext, q, "jitter", json_string("full"), NULL, "U[0,1) x the delay: full jitter");
    put(c, ext, q, "honorRetryAfter", json_false(), NULL, "the SDKs do not read Retry-After");
  } else {
    imp_origin(c, "$.methodConfig[0].retryPolicy", ap, "max_attempts 1: no retries");
  }
  if (!legacy && v2026) {
    json_t *b = json_pack("{s:s, s:i, s:i, s:i}", "type", "aws", "retryCost", 14, "timeoutCost",
                          14, "throttleCost", 5);
    put(c, top, "$.retrysim", "budget", b, mp[0] ? mp : NULL,
        "the retry quota of the 2026 behaviour: 500, a transient failure or a timeout costs 14, "
        "a throttle 5 (x-amz-retry-after and the long-polling operations' sleep are not "
        "modelled)");
  } else if (!legacy) {
    json_t *b = json_pack("{s:s}", "type", "aws");
    put(c, top, "$.retrysim", "budget", b, mp[0] ? mp : NULL,
        mp[0] ? "the retry quota of standard and adaptive before 2026: 500, a retry costs 5, a "
                "timeout 10"
              : mode_note);
  }
  if (adaptive) put(c, top, "$.retrysim", "retryMode", json_string("adaptive"), mp, NULL);
  return c->err->code == RETRY_OK ? 0 : -1;
}
