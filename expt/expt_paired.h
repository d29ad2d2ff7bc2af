/*
 * expt_paired.h: the exact tests behind a study's "distinguishable" flag on paired runs (the
 * same seeds in a variant and its baseline): McNemar's exact test for yes/no outcomes, the
 * exact sign test for a difference of zero spread and for times censored at "never", the
 * paired t test otherwise, and Holm's step-down adjustment over a variant's metrics. Pure
 * functions of their arrays; NaN is "no value" (a censored time: never recovered).
 */
#ifndef EXPT_PAIRED_H
#define EXPT_PAIRED_H

#include <stdbool.h>
#include <stddef.h>

/* Which test decided a paired difference. */
typedef enum expt_paired_method {
  EXPT_PAIRED_T = 0,      /* paired t over the pairs where both have a value */
  EXPT_PAIRED_SIGN,       /* every pair differs by the same nonzero amount: exact sign test */
  EXPT_PAIRED_MCNEMAR,    /* yes/no: exact binomial test on the discordant pairs */
  EXPT_PAIRED_CENSORED    /* times with "never" (NaN = +infinity): sign test on ordered pairs */
} expt_paired_method;

/* Returns "t", "sign", "mcnemar" or "censored_sign" (static). */
const char *expt_paired_method_name(expt_paired_method m);

/* A test's counts and two-sided p-value. For McNemar, up/down are the pairs (a true, b false)
 * and (a false, b true); for the sign tests, the pairs with a > b and a < b, an a that never
 * came ordered above any b that did. ties: pairs equal (both censored included). */
typedef struct expt_paired_test {
  expt_paired_method method;
  size_t n_pairs;         /* pairs considered (both with a value, or ordered by censoring) */
  size_t up, down, ties;  /* as above */
  size_t one_censored;    /* pairs where exactly one side never came (censored method) */
  size_t both_censored;   /* pairs where neither came: counted, shown, not ordered */
  double p_value;         /* two-sided; NaN when there is nothing to test (t with n < 2) */
} expt_paired_test;

/* Two-sided exact binomial (sign) test: up of up + down at 1/2. 1 when both are 0. */
double expt_paired_sign_p(size_t up, size_t down);

/* McNemar's exact test of a[i] against b[i] (1 true, 0 false, NaN no value: left out). */
void expt_paired_mcnemar(const double *a, const double *b, size_t n, expt_paired_test *out);

/* The sign test of a[i] against b[i] where NaN is a time that never came (+infinity): pairs
 * with one side NaN are ordered, pairs with both NaN counted apart. */
void expt_paired_censored(const double *a, const double *b, size_t n, expt_paired_test *out);

/* The paired test of numbers a[i] - b[i] over the pairs where both are finite: the t test,
 * or, when every difference is the same and nonzero (no spread for a t), the sign test. */
void expt_paired_numbers(const double *a, const double *b, size_t n, expt_paired_test *out);

/* Holm's step-down adjustment at family error alpha over p[0..m) (NaN: not tested, never
 * rejected): reject[i] set for the hypotheses rejected. Returns 0, or -1 when out of memory
 * (then nothing is rejected). */
int expt_paired_holm(const double *p, size_t m, double alpha, bool *reject);

#endif /* EXPT_PAIRED_H */
