/*
 * expt_report_search.c: the page and the picture of a search (the tipping point of each
 * variant), from its summary.json and search.csv.
 */
#include "expt/expt_report_int.h"

#include <stdio.h>
#include <string.h>

int expt_report_search_plots(const json_t *summary, const char *dir, const char *plots_dir,
                             FILE *log, retry_error *err) {
  const json_t *first = json_array_get(json_object_get(summary, "search"), 0);
  if (first == NULL) return 0;
  char set[64], title[200];
  snprintf(set, sizeof set, "p=%.10g", num_or_nan(first, "p"));
  const char *name = json_string_value(json_object_get(summary, "scenario"));
  snprintf(title, sizeof title, "%s", name != NULL ? name : "search");
  return expt_plot_render(plots_dir, "search", set, dir, "search.csv", "search", title, log, err);
}

/* A probed value as the search wrote it ("376/s"), "-" for none. */
static void probe_value(const json_t *v, char *buf, size_t size) {
  if (v == NULL || json_is_null(v))
    snprintf(buf, size, "-");
  else
    expt_output_value_text(v, buf, size);
}

static void search_body(expt_page *d, const json_t *summary, const char *command, bool pictures) {
  const char *name = json_string_value(json_object_get(summary, "scenario"));
  const json_t *search = json_object_get(summary, "search");
  const json_t *first = json_array_get(search, 0);
  expt__report_summary_intro(d, summary, name != NULL ? name : "search", name, command);
  expt_page_h(d, 2, "The search");
  expt_page_p(
      d,
      "For each variant, the bisection's bracket for the highest value of `%s` at which "
      "P(`%s`) stays at least %g: the highest probe that passed and the lowest that failed, "
      "each with its own interval below; the bracket is not an interval with a confidence. "
      "Each probe is a sequential test: after every batch it passes when the exact lower bound "
      "of its share is at least %g and fails when the exact upper bound is below it, the error "
      "split over its looks so that it is wrong with probability at most %g either way. A probe "
      "that has run all its replications undecided says so (*undecided*), and only its share "
      "k/n sides it. %zu runs in all.",
      json_string_value(json_object_get(first, "path")),
      json_string_value(json_object_get(first, "metric")), num_or_nan(first, "p"),
      num_or_nan(first, "p"), (1 - num_or_nan(first, "confidence")) / 2,
      json_array_size(json_object_get(summary, "runs")));
  static const char *const head[] = {"variant", "highest pass", "lowest fail",
                                     "outcome", "probes",         "replications"};
  expt_page_table(d, head, "lrrlrr");
  for (size_t v = 0; v < json_array_size(search); v++) {
    const json_t *s = json_array_get(search, v);
    const json_t *probes = json_object_get(s, "probes");
    char cells[16][128];
    snprintf(cells[0], 128, "%s", json_string_value(json_object_get(s, "variant")));
    probe_value(at(s, "boundary.pass"), cells[1], 128);
    probe_value(at(s, "boundary.fail"), cells[2], 128);
    const char *oc = json_string_value(json_object_get(s, "outcome"));
    /* An undecided probe is said in the headline, not only in the probe's row. */
    double undecided = num_or_nan(s, "n_undecided");
    char und[64] = "";
    if (undecided > 0) snprintf(und, sizeof und, "; %g probe(s) undecided", undecided);
    snprintf(cells[3], 128, "%s%s",
             oc == NULL                      ? "-"
             : strcmp(oc, "bracketed") == 0  ? "bracketed"
             : strcmp(oc, "from_fails") == 0 ? "below the range: `from` fails"
             : strcmp(oc, "to_passes") == 0  ? "above the range: `to` passes"
                                             : oc,
             und);
    double reps = 0;
    for (size_t i = 0; i < json_array_size(probes); i++)
      reps += num_or_nan(json_array_get(probes, i), "n");
    snprintf(cells[4], 128, "%zu", json_array_size(probes));
    snprintf(cells[5], 128, "%g", reps);
    expt_page_row(d, cells);
  }
  expt_page_table_end(d);
  if (pictures) {
    expt_page_img(d, "search.svg",
                  "Every probe: the share of its replications with the metric true and its "
                  "exact (Clopper-Pearson) bounds at the error split over the probe's looks "
                  "(Bonferroni), the bounds the decision used; filled when it passed; the dashed "
                  "line is p");
  }
  expt_page_h(d, 2, "Every probe");
  for (size_t v = 0; v < json_array_size(search); v++) {
    const json_t *s = json_array_get(search, v);
    expt_page_h(d, 3, "%s", json_string_value(json_object_get(s, "variant")));
    static const char *const ph[] = {"value", "n", "k", "P", "exact bounds", "decision"};
    expt_page_table(d, ph, "rrrrrl");
    const json_t *probes = json_object_get(s, "probes");
    for (size_t i = 0; i < json_array_size(probes); i++) {
      const json_t *pr = json_array_get(probes, i);
      char cells[16][128];
      probe_value(json_object_get(pr, "value"), cells[0], 128);
      snprintf(cells[1], 128, "%g", num_or_nan(pr, "n"));
      snprintf(cells[2], 128, "%g", num_or_nan(pr, "k"));
      snprintf(cells[3], 128, "%.3f", num_or_nan(pr, "p"));
      snprintf(cells[4], 128, "[%.3f, %.3f]", num_or_nan(pr, "lo"), num_or_nan(pr, "hi"));
      const char *verdict = json_string_value(json_object_get(pr, "verdict"));
      bool und_p = json_is_true(json_object_get(pr, "undecided"));
      snprintf(cells[5], 128, "%s%s%s", und_p ? "*undecided*" : verdict != NULL ? verdict : "-",
               und_p ? ": k/n leans " : "", und_p && verdict != NULL ? verdict : "");
      expt_page_row(d, cells);
    }
    expt_page_table_end(d);
  }
}

int expt_report_search_write(const json_t *summary, const char *dir, const char *command,
                             bool pictures, retry_error *err) {
  return expt__report_summary_pages(summary, dir, command, pictures, "search", search_body, err);
}
