/*
 * expt_scenario_origin.h: where a rule of a run's policy was written. A policy read from a
 * foreign format (Envoy, Istio, ...: expt_import.h) keeps the translation's table of where each
 * field came from; this finds, for one edge of one run and one field of its service config, the
 * file, the line and the field of the source, so that `retrysim explain` can name the line of
 * each rule it applies (docs/explain.md, "Where a rule was written").
 * Invariant: only reads the scenario; a field that an override changed after the file was read
 * is said to be overridden rather than credited to the file.
 */
#ifndef EXPT_SCENARIO_ORIGIN_H
#define EXPT_SCENARIO_ORIGIN_H

#include <stdbool.h>
#include <stddef.h>

#include "expt/expt_scenario.h"

/* One rule's source. Strings are borrowed from the scenario, valid while it lives. */
typedef struct expt_rule_source {
  const char *file;   /* the policy file as the scenario names it */
  const char *format; /* its format's name ("envoy", "istio", ...) */
  char field[160];    /* the field of the service config, "$.methodConfig[0].timeout" */
  const char *from;   /* the path in the file the value was read from; NULL: a default */
  const char *note;   /* what the translation says of it (a default's owner); may be NULL */
  int line, column;   /* in the file, 1-based; -1 when the format has no positions (JSON) */
  bool overridden;    /* an override (--set, a variant's set) changed the value since */
} expt_rule_source;

/* The source of field of the policy that the calls on edge from -> to run in run `run` (a
 * client's policy when top, else the calling service's "calls" entry for to). field is a path
 * in one method's config ("retryPolicy.maxAttempts", "timeout"), resolved against the
 * methodConfig entry that names method best, or a path from the top when it starts with "$."
 * ("$.retrysim.budget"). A field the translation recorded only in parts ("$.retrysim.budget"
 * as "$.retrysim.budget.type", ".budgetPercent") answers with its first part read from the
 * file, else its first part. Returns false when the policy was
 * not read from a foreign format or the translation has no such field. */
bool expt_scenario_rule_source(const expt_scenario *s, size_t run, bool top, const char *from,
                               const char *to, const char *method, const char *field,
                               expt_rule_source *out);

#endif /* EXPT_SCENARIO_ORIGIN_H */
