/*
 * expt_error.c: the one printer of a retry_error as the `retrysim: ` line (expt_error.h).
 */
#include "expt/expt_error.h"

void expt_error_print(FILE *f, const retry_error *e) {
  /* Room for the longest format: source (255), line and column, path (159) and message (159)
   * with their separators, well under 800, so no line is ever cut here. */
  char buf[800];
  retry_error_format(e, buf, sizeof buf);
  fprintf(f, "retrysim: %s\n", buf);
}
