/*
 * expt_csv.c: CSV fields (expt_csv.h). Invariant: a field written here reads back, by any RFC
 * 4180 reader, as the text given.
 */
#include "expt/expt_csv.h"

#include <string.h>

void expt_csv_text(FILE *f, const char *s) {
  if (strpbrk(s, ",\"\r\n") == NULL) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}
