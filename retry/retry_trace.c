/*
 * retry_trace.c: formats the engine's decision records as one-line JSON, for logs and for
 * teaching ("why was this call retried, and when?").
 */
#include "retry_int.h"

#include <inttypes.h>
#include <stdio.h>

const char *retry_delay_source_name(retry_delay_source s) {
  switch (s) {
    case RETRY_DELAY_NONE: return "none";
    case RETRY_DELAY_BACKOFF: return "backoff";
    case RETRY_DELAY_PUSHBACK: return "pushback";
    case RETRY_DELAY_RETRY_AFTER: return "retry_after";
  }
  return "unknown";
}

const char *retry_trace_event_name(retry_trace_event e) {
  switch (e) {
    case RETRY_TRACE_START: return "start";
    case RETRY_TRACE_OUTCOME: return "outcome";
    case RETRY_TRACE_WAKE: return "wake";
    case RETRY_TRACE_HEADERS: return "headers";
    case RETRY_TRACE_CANCEL: return "cancel";
  }
  return "unknown";
}

/* Appends to buf at *len like snprintf, keeping the would-be length. */
static void append(char *buf, size_t size, int *len, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static void append(char *buf, size_t size, int *len, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  size_t off = (size_t)*len;
  int n = vsnprintf(off < size ? buf + off : NULL, off < size ? size - off : 0, fmt, ap);
  va_end(ap);
  if (n > 0) *len += n;
}

/* Appends v as a JSON string: a value received from the network may hold anything. */
static void append_string(char *buf, size_t size, int *len, const char *v) {
  append(buf, size, len, "\"");
  for (const unsigned char *p = (const unsigned char *)v; *p != '\0'; p++) {
    if (*p == '"' || *p == '\\')
      append(buf, size, len, "\\%c", *p);
    else if (*p < 0x20 || *p == 0x7f)
      append(buf, size, len, "\\u%04x", *p);
    else
      append(buf, size, len, "%c", *p);
  }
  append(buf, size, len, "\"");
}

/* The parts of a target's state that it has, as one JSON object. */
static void append_stats(char *buf, size_t size, int *len, const char *key,
                         const retry_target_stats *st) {
  append(buf, size, len, ",\"%s\":{\"breaker\":\"%s\"", key, retry_breaker_state_name(st->breaker));
  if (st->throttle_milli_tokens >= 0)
    append(buf, size, len, ",\"throttle_milli_tokens\":%" PRId64, st->throttle_milli_tokens);
  if (st->budget_available >= 0)
    append(buf, size, len, ",\"budget_available\":%" PRId64, st->budget_available);
  if (st->adaptive_reject_p >= 0)
    append(buf, size, len, ",\"adaptive_reject_p\":%.6g", st->adaptive_reject_p);
  append(buf, size, len, ",\"in_flight\":%" PRId64 "}", st->in_flight);
}

int retry_trace_format(const retry_trace_rec *rec, char *buf, size_t size) {
  int len = 0;
  if (size > 0) buf[0] = '\0';
  append(buf, size, &len, "{\"call\":%" PRIu64 ",\"event\":\"%s\",\"t_ns\":%" PRId64, rec->call_id,
         retry_trace_event_name(rec->event), rec->now_ns);
  if (rec->attempt > 0) append(buf, size, &len, ",\"attempt\":%d", (int)rec->attempt);
  if (rec->status >= 0) append(buf, size, &len, ",\"status\":%d", (int)rec->status);
  if (rec->pushback != RETRY_PUSHBACK_NONE) {
    append(buf, size, &len, ",\"pushback\":\"%s\"", retry_pushback_kind_name(rec->pushback));
    if (rec->pushback == RETRY_PUSHBACK_DELAY)
      append(buf, size, &len, ",\"pushback_ns\":%" PRId64, rec->pushback_ns);
  }
  if (rec->backoff_ns >= 0) {
    append(buf, size, &len, ",\"backoff_ns\":%" PRId64 ",\"delay_source\":\"%s\"", rec->backoff_ns,
           retry_delay_source_name(rec->delay_source));
    if (rec->backoff_nominal_ns >= 0)
      append(buf, size, &len, ",\"backoff_nominal_ns\":%" PRId64, rec->backoff_nominal_ns);
  }
  if (rec->throttle_milli_tokens >= 0)
    append(buf, size, &len, ",\"throttle_milli_tokens\":%" PRId64, rec->throttle_milli_tokens);
  if (rec->n_pushback_values > 0 && rec->pushback_values != NULL) {
    append(buf, size, &len, ",\"pushback_raw\":[");
    for (size_t i = 0; i < rec->n_pushback_values; i++) {
      if (i > 0) append(buf, size, &len, ",");
      append_string(buf, size, &len,
                    rec->pushback_values[i] != NULL ? rec->pushback_values[i] : "");
    }
    append(buf, size, &len, "]");
  }
  if (rec->retry_after != NULL) {
    append(buf, size, &len, ",\"retry_after_raw\":");
    append_string(buf, size, &len, rec->retry_after);
  }
  if (rec->has_target) {
    append_stats(buf, size, &len, "before", &rec->before);
    append_stats(buf, size, &len, "after", &rec->after);
  }
  const retry_decision *d = rec->decision;
  if (d != NULL) {
    append(buf, size, &len, ",\"decision\":\"%s\"", retry_action_name(d->action));
    switch (d->action) {
      case RETRY_ACTION_SEND:
        append(buf, size, &len, ",\"send_attempt\":%d", (int)d->attempt);
        if (d->attempt_deadline_ns != RETRY_NEVER)
          append(buf, size, &len, ",\"attempt_deadline_ns\":%" PRId64, d->attempt_deadline_ns);
        break;
      case RETRY_ACTION_WAIT: break;
      case RETRY_ACTION_DONE:
        append(buf, size, &len, ",\"final_status\":%d,\"reason\":\"%s\",\"done_ns\":%" PRId64,
               (int)d->status, retry_stop_name(d->reason), d->done_ns);
        break;
    }
    if (d->action != RETRY_ACTION_DONE && d->wake_ns != RETRY_NEVER)
      append(buf, size, &len, ",\"wake_ns\":%" PRId64, d->wake_ns);
    if (d->cancel_others) append(buf, size, &len, ",\"cancel_others\":true");
  }
  append(buf, size, &len, "}");
  return len;
}
