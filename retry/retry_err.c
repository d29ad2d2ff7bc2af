/*
 * retry_err.c: error codes, error details and allocation helpers of libretry.
 *
 * The error table is generated from RETRY_ERRNO_MAP, so a code, its name and its text cannot
 * drift apart. A retry_error keeps the first error reported into it (retry_error_set).
 */
#include "retry_int.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *retry_err_name(int code) {
  switch (code) {
#define GEN(name, val, msg) \
  case (val): return "RETRY_" #name;
    RETRY_ERRNO_MAP(GEN)
#undef GEN
    default: return "RETRY_UNKNOWN";
  }
}

const char *retry_strerror(int code) {
  switch (code) {
#define GEN(name, val, msg) \
  case (val): return msg;
    RETRY_ERRNO_MAP(GEN)
#undef GEN
    default: return "unknown error";
  }
}

void retry_error_clear(retry_error *e) {
  if (e == NULL) return;
  memset(e, 0, sizeof *e);
  e->code = RETRY_OK;
  e->line = -1;
  e->column = -1;
}

/* Copies src into a fixed buffer, truncating; dst is always NUL-terminated. */
static void copy_field(char *dst, size_t size, const char *src) {
  if (src == NULL) src = "";
  size_t n = strlen(src);
  if (n >= size) n = size - 1;
  memcpy(dst, src, n);
  dst[n] = '\0';
}

/* Copies src into a fixed buffer, keeping its end when it does not fit: "..." and the last
 * bytes, the cut moved forward to the start of a UTF-8 character. For file names, whose end
 * (the file's own name) says more than their start. dst is always NUL-terminated. */
static void copy_tail(char *dst, size_t size, const char *src) {
  if (src == NULL) src = "";
  size_t n = strlen(src);
  if (n < size) {
    memcpy(dst, src, n + 1);
    return;
  }
  const char *tail = src + n - (size - 4); /* room for "...", the tail and the NUL */
  while (((unsigned char)*tail & 0xC0) == 0x80)
    tail++;
  memcpy(dst, "...", 3);
  memcpy(dst + 3, tail, strlen(tail) + 1);
}

/* The one implementation of "the first error wins" (retry.h): the engine's validators,
 * both JSON loaders and the simulator's outputs all end here. It lives in this file, which
 * needs libc only, so that an engine-only client linking it does not pull in jansson. */
void retry_error_vset(retry_error *e, int code, const char *source, const char *path, int line,
                      int column, const char *fmt, va_list ap) {
  /* A later, derived error (out of memory while unwinding, say) must not hide the cause. */
  if (e == NULL || e->code != RETRY_OK) return;
  e->code = code;
  copy_tail(e->source, sizeof e->source, source);
  copy_field(e->path, sizeof e->path, path);
  e->line = line;
  e->column = column;
  vsnprintf(e->message, sizeof e->message, fmt, ap);
}

void retry_error_set(retry_error *e, int code, const char *source, const char *path, int line,
                     int column, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  retry_error_vset(e, code, source, path, line, column, fmt, ap);
  va_end(ap);
}

int retry_error_format(const retry_error *e, char *buf, size_t size) {
  char where[64] = "";
  if (e->line >= 0 && e->column >= 0)
    snprintf(where, sizeof where, ":%d:%d", e->line, e->column);
  else if (e->line >= 0)
    snprintf(where, sizeof where, ":%d", e->line);
  const char *src = e->source[0] ? e->source : "<input>";
  if (e->path[0]) return snprintf(buf, size, "%s%s: %s: %s", src, where, e->path, e->message);
  return snprintf(buf, size, "%s%s: %s", src, where, e->message);
}

static void *libc_malloc(size_t size, void *ctx) {
  (void)ctx;
  return malloc(size);
}
static void *libc_realloc(void *ptr, size_t size, void *ctx) {
  (void)ctx;
  return realloc(ptr, size);
}
static void libc_free(void *ptr, void *ctx) {
  (void)ctx;
  free(ptr);
}

void retry_allocator_resolve(const retry_allocator *a, retry_allocator *out) {
  assert(out != NULL);
  *out = a != NULL ? *a : (retry_allocator){NULL, NULL, NULL, NULL};
  if (out->malloc_fn == NULL) out->malloc_fn = libc_malloc;
  if (out->realloc_fn == NULL) out->realloc_fn = libc_realloc;
  if (out->free_fn == NULL) out->free_fn = libc_free;
}

void *retry__malloc(const retry_allocator *a, size_t size) {
  if (a != NULL && a->malloc_fn != NULL) return a->malloc_fn(size, a->ctx);
  return malloc(size);
}

void *retry__realloc(const retry_allocator *a, void *ptr, size_t size) {
  if (a != NULL && a->realloc_fn != NULL) return a->realloc_fn(ptr, size, a->ctx);
  return realloc(ptr, size);
}

void retry__free(const retry_allocator *a, void *ptr) {
  if (ptr == NULL) return;
  if (a != NULL && a->free_fn != NULL) {
    a->free_fn(ptr, a->ctx);
    return;
  }
  free(ptr);
}
