/*
 * expt_csv.h: writing CSV fields as every CSV file of the program writes them (RFC 4180).
 */
#ifndef EXPT_CSV_H
#define EXPT_CSV_H

#include <stdio.h>

/* Writes s as one CSV field, quoted (RFC 4180: a quote doubled) only when it holds a comma, a
 * quote or a line break. Names the loader accepts never need quotes; this guards column names
 * and any later rule. */
void expt_csv_text(FILE *f, const char *s);

#endif /* EXPT_CSV_H */
