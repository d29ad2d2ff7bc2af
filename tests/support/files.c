/*
 * files.c: the corpus readers of files.h.
 */
#include "tests/support/files.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *test_xrealloc(void *p, size_t size) {
  void *q = realloc(p, size);
  if (q == NULL) {
    free(p);
    abort();
  }
  return q;
}

char *test_slurp(const char *path, size_t *len_out) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  size_t cap = 4096, len = 0;
  char *buf = test_xrealloc(NULL, cap);
  for (;;) {
    if (len + 1 >= cap) buf = test_xrealloc(buf, cap *= 2);
    size_t got = fread(buf + len, 1, cap - len - 1, f);
    if (got == 0) break;
    len += got;
  }
  fclose(f);
  buf[len] = '\0';
  if (len_out != NULL) *len_out = len;
  return buf;
}

static int cmp_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

char **test_list_cases(const char *dir, size_t *n) {
  DIR *d = opendir(dir);
  *n = 0;
  if (d == NULL) return NULL;
  size_t cap = 16;
  char **names = test_xrealloc(NULL, cap * sizeof *names);
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (de->d_name[0] == '.') continue;
    if (*n == cap) names = test_xrealloc(names, (cap *= 2) * sizeof *names);
    names[*n] = strdup(de->d_name);
    if (names[*n] == NULL) abort();
    (*n)++;
  }
  closedir(d);
  qsort(names, *n, sizeof *names, cmp_names);
  return names;
}

void test_free_cases(char **names, size_t n) {
  for (size_t i = 0; i < n; i++)
    free(names[i]);
  free(names);
}

bool test_expected_error_read(const char *path, test_expected_error *out) {
  memset(out, 0, sizeof *out);
  char *want = test_slurp(path, NULL);
  if (want == NULL) {
    fprintf(stderr, "%s: no error file\n", path);
    return false;
  }
  int used = 0;
  char *l2 = strchr(want, '\n');
  if (l2 != NULL) *l2++ = '\0';
  if (sscanf(want, "%d %d%n", &out->line, &out->column, &used) != 2) {
    fprintf(stderr, "%s: bad error file\n", path);
    free(want);
    return false;
  }
  snprintf(out->path, sizeof out->path, "%s", want[used] == ' ' ? want + used + 1 : want + used);
  char *l3 = NULL, *l4 = NULL;
  if (l2 != NULL && (l3 = strchr(l2, '\n')) != NULL) *l3++ = '\0';
  if (l3 != NULL && (l4 = strchr(l3, '\n')) != NULL) *l4++ = '\0';
  if (l2 != NULL) snprintf(out->message, sizeof out->message, "%s", l2);
  char code_name[64] = "";
  if (l3 != NULL) sscanf(l3, "%63s", code_name);
  if (l4 != NULL) {
    char *nl = strchr(l4, '\n');
    if (nl != NULL) *nl = '\0';
    snprintf(out->source, sizeof out->source, "%s", l4);
  }
  out->code = out->line >= 0 ? RETRY_ESYNTAX : RETRY_ECONFIG;
  for (int c = 0; code_name[0] != '\0' && c >= -7; c--)
    if (strcmp(retry_err_name(c), code_name) == 0) out->code = c;
  free(want);
  return true;
}

bool test_expected_error_matches(const char *name, const test_expected_error *want,
                                 const char *source, const retry_error *got) {
  if (got->code == want->code && got->line == want->line && got->column == want->column &&
      strcmp(got->path, want->path) == 0 && strcmp(got->message, want->message) == 0 &&
      strcmp(got->source, source) == 0)
    return true;
  fprintf(stderr,
          "%s:\n  got  %s %d %d %s\n       %s\n       %s\n  want %s %d %d %s\n       %s\n"
          "       %s\n",
          name, retry_err_name(got->code), got->line, got->column, got->path, got->message,
          got->source, retry_err_name(want->code), want->line, want->column, want->path,
          want->message, source);
  return false;
}
