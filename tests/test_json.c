/*
 * test_json.c: retry_json.h on its own: paths built and popped, the first error winning, the
 * message prefix, the unknown-key message's fitting into 160 bytes and its cut, each getter's
 * 1 / 0 / -1 contract with null read as absent, the syntax-error report, reading a file
 * (regular files only, a size limit), a long source keeping its tail, and did-you-mean.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "retry/retry_json.h"

/* Parses text (a test's own literal: it must be valid JSON). Free with json_decref. */
static json_t *doc(const char *text) {
  json_error_t je;
  json_t *v = json_loads(text, JSON_DECODE_ANY, &je);
  if (v == NULL) fail_msg("bad test JSON: %s", je.text);
  return v;
}

static void test_json_ctx_starts_at_the_root_without_error(void **state) {
  (void)state;
  retry_json_ctx c;
  retry_json_ctx_init(&c, "f.json");
  assert_string_equal(c.path, "$");
  assert_int_equal(c.path_len, 1);
  assert_false(retry_json_failed(&c));
  assert_int_equal(c.e.line, -1);
  assert_int_equal(c.e.column, -1);
  assert_null(c.prefix);
}

static void test_json_path_pop_restores_what_push_added(void **state) {
  (void)state;
  retry_json_ctx c;
  retry_json_ctx_init(&c, NULL);
  size_t m0 = retry_json_path_push_key(&c, "methodConfig");
  size_t m1 = retry_json_path_push_index(&c, 12);
  assert_string_equal(c.path, "$.methodConfig[12]");
  size_t m2 = retry_json_path_push_key(&c, "checkout-api");
  assert_string_equal(c.path, "$.methodConfig[12][\"checkout-api\"]");
  retry_json_path_pop(&c, m2);
  retry_json_path_push_key(&c, "a\"b\\c\nd");
  assert_string_equal(c.path, "$.methodConfig[12][\"a\\\"b\\\\c?d\"]");
  retry_json_path_pop(&c, m2);
  retry_json_path_push_raw(&c, ".x[0]");
  assert_string_equal(c.path, "$.methodConfig[12].x[0]");
  retry_json_path_pop(&c, m1);
  assert_string_equal(c.path, "$.methodConfig");
  retry_json_path_pop(&c, m0);
  assert_string_equal(c.path, "$");
  assert_int_equal(c.path_len, strlen(c.path));
}

/* A path longer than the buffer is cut, never overflowed, and pops still restore it. */
static void test_json_long_path_is_cut_and_pops_still_restore(void **state) {
  (void)state;
  retry_json_ctx c;
  retry_json_ctx_init(&c, NULL);
  char key[300];
  memset(key, 'k', sizeof key - 1);
  key[sizeof key - 1] = '\0';
  size_t m = retry_json_path_push_key(&c, key);
  retry_json_path_push_key(&c, key);
  size_t m2 = retry_json_path_push_key(&c, "odd key");
  assert_true(c.path_len < sizeof c.path);
  assert_int_equal(c.path_len, strlen(c.path));
  retry_json_path_pop(&c, m2);
  retry_json_path_pop(&c, m);
  assert_string_equal(c.path, "$");
}

static void test_json_first_error_wins(void **state) {
  (void)state;
  retry_json_ctx c;
  retry_json_ctx_init(&c, "f.json");
  size_t m = retry_json_path_push_key(&c, "a");
  retry_json_fail(&c, RETRY_ECONFIG, "first %d", 1);
  retry_json_path_pop(&c, m);
  retry_json_path_push_key(&c, "b");
  retry_json_fail(&c, RETRY_EINVAL, "second");
  assert_int_equal(c.e.code, RETRY_ECONFIG);
  assert_string_equal(c.e.message, "first 1");
  assert_string_equal(c.e.path, "$.a");
  assert_string_equal(c.e.source, "f.json");
  assert_int_equal(c.e.line, -1);

  retry_error e;
  retry_error_clear(&e);
  retry_error_set(&e, RETRY_EIO, NULL, NULL, 3, 4, "x %s", "y");
  retry_error_set(&e, RETRY_ENOMEM, "s", "p", -1, -1, "z");
  assert_int_equal(e.code, RETRY_EIO);
  assert_string_equal(e.message, "x y");
  assert_string_equal(e.source, "");
  assert_int_equal(e.line, 3);
  assert_int_equal(e.column, 4);
  retry_error_set(NULL, RETRY_EIO, NULL, NULL, -1, -1, "no-op"); /* NULL is allowed */
}

static void test_json_fail_error_copies_the_error_under_the_prefix(void **state) {
  (void)state;
  retry_json_ctx c;
  retry_json_ctx_init(&c, "s.json");
  c.prefix = "in variant \"v\": ";
  retry_error other;
  retry_error_clear(&other);
  retry_error_set(&other, RETRY_OK, "p.json", "$.x", 2, 5, "bad");
  retry_json_fail_error(&c, &other);
  assert_int_equal(c.e.code, RETRY_ECONFIG); /* an error without a code gets one */
  assert_string_equal(c.e.source, "p.json");
  assert_string_equal(c.e.path, "$.x");
  assert_int_equal(c.e.line, 2);
  assert_int_equal(c.e.column, 5);
  assert_string_equal(c.e.message, "in variant \"v\": bad");
}

/* The message is cut at retry_error.message, prefix included. */
static void test_json_failure_message_is_cut_to_fit_prefix_included(void **state) {
  (void)state;
  retry_json_ctx c;
  retry_json_ctx_init(&c, NULL);
  c.prefix = "P: ";
  char long_text[400];
  memset(long_text, 'x', sizeof long_text - 1);
  long_text[sizeof long_text - 1] = '\0';
  retry_json_fail(&c, RETRY_ECONFIG, "%s", long_text);
  assert_int_equal(strlen(c.e.message), sizeof c.e.message - 1);
  assert_memory_equal(c.e.message, "P: xxx", 6);
}

static void test_json_describe_shows_small_values_and_names_big_ones(void **state) {
  (void)state;
  static const struct {
    const char *json, *shown;
  } cases[] = {
      {"{}", "{}"},
      {"{\"a\": 1}", "an object"},
      {"[]", "[]"},
      {"[1]", "an array"},
      {"2", "2"},
      {"2.0", "2.0"},
      {"0.1", "0.1"},
      {"true", "true"},
      {"false", "false"},
      {"null", "null"},
      {"\"a\\nb\"", "\"a?b\""},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    json_t *v = doc(cases[i].json);
    char buf[64];
    retry_json_describe(v, buf, sizeof buf);
    assert_string_equal(buf, cases[i].shown);
    json_decref(v);
  }
  /* Strings are cut at 40 bytes, never inside a UTF-8 sequence. */
  char buf[64];
  retry_json_printable(buf, sizeof buf, "abcdefghij\xc3\xa9xyz", 11);
  assert_string_equal(buf, "abcdefghij...");
  /* The same when the buffer, not max, is what cuts: 15 bytes leave room for 11. */
  retry_json_printable(buf, 15, "abcdefghij\xc3\xa9xyz", 40);
  assert_string_equal(buf, "abcdefghij...");
  retry_json_quote(buf, sizeof buf, "key");
  assert_string_equal(buf, "\"key\"");
}

static void test_json_unknown_key_names_the_first_and_lists_the_allowed(void **state) {
  (void)state;
  static const char *const allowed[] = {"a", "bb", "ccc"};
  retry_json_ctx c;
  retry_json_ctx_init(&c, NULL);
  json_t *obj = doc("{\"a\": 1, \"zz\": 2, \"yy\": 3}");
  assert_false(retry_json_check_keys(&c, obj, allowed, 3, NULL));
  assert_string_equal(c.e.message, "unknown key \"zz\"; allowed: a, bb, ccc");
  assert_string_equal(c.e.path, "$.zz");
  assert_string_equal(c.path, "$"); /* check_keys pops what it pushed */

  retry_json_ctx_init(&c, NULL);
  assert_false(retry_json_check_keys(&c, obj, allowed, 3, "a \"fail\" fault"));
  assert_string_equal(c.e.message,
                      "key \"zz\" is not allowed in a \"fail\" fault; allowed: a, bb, ccc");

  static const char *const all[] = {"a", "zz", "yy"};
  retry_json_ctx_init(&c, NULL);
  assert_true(retry_json_check_keys(&c, obj, all, 3, NULL));
  assert_false(retry_json_failed(&c));
  json_decref(obj);
}

/* Too long with the key: the list alone, the path naming the key. Too long even so: the list
 * cut at a key with ", ...". Either way the message fits. */
static void test_json_unknown_key_message_always_fits(void **state) {
  (void)state;
  static const char *const mid[] = {"permittedNumberOfCallsInHalfOpenState", "failureRateThreshold",
                                    "waitDurationInOpenState", "slidingWindowSize",
                                    "minimumNumberOfCalls"};
  retry_json_ctx c;
  retry_json_ctx_init(&c, NULL);
  retry_json_fail_unknown_key(&c, "aVeryLongMisspelledKeyNameThatIsLong", mid, 5, NULL);
  assert_string_equal(c.e.message,
                      "key not one of: permittedNumberOfCallsInHalfOpenState, "
                      "failureRateThreshold, waitDurationInOpenState, slidingWindowSize, "
                      "minimumNumberOfCalls");

  static const char *const many[] = {"alpha00000000000", "bravo00000000000", "charlie000000000",
                                     "delta00000000000", "echo000000000000", "foxtrot000000000",
                                     "golf000000000000", "hotel00000000000", "india00000000000",
                                     "juliet0000000000"};
  retry_json_ctx_init(&c, NULL);
  retry_json_fail_unknown_key(&c, "k", many, 10, NULL);
  const char *msg = c.e.message;
  assert_true(strlen(msg) < sizeof c.e.message);
  assert_memory_equal(msg, "unknown key \"k\"; allowed: alpha00000000000, ", 44);
  assert_string_equal(msg + strlen(msg) - 5, ", ...");
  assert_null(strstr(msg, "juliet"));

  /* With a prefix (a variant's name) the room is smaller: the list is still cut at a key and
   * ends with ", ...", never mid-word by the error's size. */
  retry_json_ctx_init(&c, NULL);
  c.prefix = "in variant \"a-rather-long-variant-name\": ";
  retry_json_fail_unknown_key(&c, "worker", mid, 5, NULL);
  msg = c.e.message;
  assert_true(strlen(msg) < sizeof c.e.message - 1);
  assert_memory_equal(msg, "in variant \"a-rather-long-variant-name\": unknown key \"worker\"", 58);
  assert_string_equal(msg + strlen(msg) - 5, ", ...");
  /* A message that says where the key is not allowed keeps that sentence and cuts the list. */
  retry_json_ctx_init(&c, NULL);
  retry_json_fail_unknown_key(&c, "probability", many, 10, "a \"fail\" fault");
  msg = c.e.message;
  assert_memory_equal(msg, "key \"probability\" is not allowed in a \"fail\" fault; allowed: ", 61);
  assert_string_equal(msg + strlen(msg) - 5, ", ...");

  /* A key with control bytes is shown printable and cut at 32 bytes. */
  static const char *const one[] = {"a"};
  retry_json_ctx_init(&c, NULL);
  retry_json_fail_unknown_key(&c, "x\x1b[2Jyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy", one, 1, NULL);
  assert_string_equal(c.e.message,
                      "unknown key \"x?[2Jyyyyyyyyyyyyyyyyyyyyyyyyyyy...\"; allowed: a");
}

static void test_json_field_null_is_absent(void **state) {
  (void)state;
  json_t *obj = doc("{\"a\": null, \"b\": 0}");
  assert_null(retry_json_field(obj, "a"));
  assert_null(retry_json_field(obj, "missing"));
  assert_non_null(retry_json_field(obj, "b"));
  json_decref(obj);
}

static void test_json_require_fails_only_on_absent(void **state) {
  (void)state;
  retry_json_ctx c;
  retry_json_ctx_init(&c, NULL);
  assert_int_equal(retry_json_require(&c, 1, "k", "x"), 1);
  assert_int_equal(retry_json_require(&c, -1, "k", "x"), -1);
  assert_false(retry_json_failed(&c)); /* a getter's -1 has its own error */
  assert_int_equal(retry_json_require(&c, 0, "k", "an integer"), -1);
  assert_string_equal(c.e.message, "\"k\" is required: an integer");
  assert_string_equal(c.e.path, "$.k");
  assert_string_equal(c.path, "$");
}

/* Runs one getter through present / absent / null / bad, via a function pointer so that each
 * getter's three results are checked the same way. */
typedef int (*getter)(retry_json_ctx *c, json_t *obj, const char *key);

static int get_bool(retry_json_ctx *c, json_t *o, const char *k) {
  bool b = false;
  return retry_json_get_bool(c, o, k, &b);
}
static int get_int(retry_json_ctx *c, json_t *o, const char *k) {
  int64_t v = 0;
  return retry_json_get_int(c, o, k, 0, 10, "an integer in [0, 10]", &v);
}
static int get_int32(retry_json_ctx *c, json_t *o, const char *k) {
  int32_t v = 0;
  return retry_json_get_int32(c, o, k, 1, INT32_MAX, "an integer >= 1", &v);
}
static int get_number(retry_json_ctx *c, json_t *o, const char *k) {
  double v = 0;
  return retry_json_get_number(c, o, k, 0, true, 1, false, "a number in (0, 1]", &v);
}
static int get_string(retry_json_ctx *c, json_t *o, const char *k) {
  const char *s = NULL;
  return retry_json_get_string(c, o, k, &s);
}
static int get_enum(retry_json_ctx *c, json_t *o, const char *k) {
  static const char *const names[] = {"fifo", "lifo", "random"};
  int i = -1;
  return retry_json_get_enum(c, o, k, names, 3, &i);
}
static int get_duration(retry_json_ctx *c, json_t *o, const char *k) {
  int64_t ns = 0;
  return retry_json_get_duration(c, o, k, 0, true, INT64_MAX, "a duration > 0", &ns);
}

static void check_getter(getter g, const char *good, const char *bad, const char *message) {
  char text[256];
  snprintf(text, sizeof text, "{\"good\": %s, \"bad\": %s, \"nul\": null}", good, bad);
  json_t *obj = doc(text);
  retry_json_ctx c;
  retry_json_ctx_init(&c, NULL);
  assert_int_equal(g(&c, obj, "good"), 1);
  assert_int_equal(g(&c, obj, "absent"), 0);
  assert_int_equal(g(&c, obj, "nul"), 0);
  assert_false(retry_json_failed(&c));
  assert_int_equal(g(&c, obj, "bad"), -1);
  assert_string_equal(c.e.message, message);
  assert_string_equal(c.e.path, "$.bad");
  assert_string_equal(c.path, "$");
  /* Once failed, nothing more is read: even a good value answers -1. */
  assert_int_equal(g(&c, obj, "good"), -1);
  assert_string_equal(c.e.message, message);
  json_decref(obj);
}

static void test_json_getters_read_present_skip_absent_or_null_refuse_bad(void **state) {
  (void)state;
  check_getter(get_bool, "true", "1", "\"bad\" must be true or false, got 1");
  check_getter(get_int, "10", "2.0", "\"bad\" must be an integer in [0, 10], got 2.0");
  check_getter(get_int, "0", "11", "\"bad\" must be an integer in [0, 10], got 11");
  check_getter(get_int32, "2147483647", "0", "\"bad\" must be an integer >= 1, got 0");
  check_getter(get_int32, "1", "2147483648", "\"bad\" must be at most 2147483647, got 2147483648");
  check_getter(get_number, "1", "0", "\"bad\" must be a number in (0, 1], got 0");
  check_getter(get_number, "0.5", "\"0.5\"", "\"bad\" must be a number in (0, 1], got \"0.5\"");
  check_getter(get_string, "\"\"", "[]", "\"bad\" must be a string, got []");
  check_getter(get_enum, "\"lifo\"", "\"LIFO\"",
               "\"bad\" must be \"fifo\", \"lifo\" or \"random\", got \"LIFO\"");
  check_getter(get_duration, "\"0.5s\"", "0.5", "\"bad\" must be a duration > 0, got 0.5");
  check_getter(get_duration, "\"1s\"", "\"0s\"", "\"bad\" must be a duration > 0, got \"0s\"");
  check_getter(get_duration, "\"1s\"", "\"315576000000s\"",
               "\"bad\" is out of range: at most about 292 years, got \"315576000000s\"");
}

/* A getter leaves *out alone unless the value is valid. */
static void test_json_getter_leaves_out_alone_unless_valid(void **state) {
  (void)state;
  json_t *obj = doc("{\"n\": -1, \"t\": 7}");
  retry_json_ctx c;
  retry_json_ctx_init(&c, NULL);
  int64_t v = 42;
  assert_int_equal(retry_json_get_int(&c, obj, "missing", 0, 10, "x", &v), 0);
  assert_int_equal(v, 42);
  assert_int_equal(retry_json_get_int(&c, obj, "n", 0, 10, "x", &v), -1);
  assert_int_equal(v, 42);
  retry_json_ctx_init(&c, NULL);
  assert_int_equal(retry_json_get_int(&c, obj, "t", 0, 10, "x", &v), 1);
  assert_int_equal(v, 7);
  json_decref(obj);
}

static void test_json_syntax_error_has_position_or_is_out_of_memory(void **state) {
  (void)state;
  json_error_t je;
  assert_null(json_loads("{\"a\": 1,\n}", 0, &je));
  retry_error e;
  retry_error_clear(&e);
  retry_json_error_syntax(&e, "f.json", &je);
  assert_int_equal(e.code, RETRY_ESYNTAX);
  assert_int_equal(e.line, 2);
  assert_true(e.column >= 1);
  assert_memory_equal(e.message, "invalid JSON: ", 14);
  assert_string_equal(e.source, "f.json");

  memset(&je, 0, sizeof je); /* what jansson leaves when its lexer's set-up fails */
  retry_error_clear(&e);
  retry_json_error_syntax(&e, "f.json", &je);
  assert_int_equal(e.code, RETRY_ENOMEM);
  assert_string_equal(e.message, "out of memory parsing JSON");
}

/* A file is read whole, bytes as they are; a missing file and a directory are RETRY_EIO with
 * the file named and the reason given, and nothing is allocated for them. */
static void test_json_read_file_reads_whole_files_and_names_failures(void **state) {
  (void)state;
  char dir[] = "/tmp/test_json.XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[64];
  snprintf(path, sizeof path, "%s/doc.json", dir);
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  /* Larger than the first 4096-byte block, with a NUL inside: the length is what counts. */
  for (int i = 0; i < 5000; i++)
    fputc(i == 10 ? 0 : 'a' + i % 26, f);
  fclose(f);
  char *buf = NULL;
  size_t len = 0;
  retry_error e;
  retry_error_clear(&e);
  assert_int_equal(retry_json_read_file(path, NULL, &buf, &len, &e), RETRY_OK);
  assert_int_equal(len, 5000);
  assert_true(buf[10] == 0 && buf[4999] == 'a' + 4999 % 26);
  free(buf);
  char missing[80];
  snprintf(missing, sizeof missing, "%s/missing.json", dir);
  buf = NULL;
  assert_int_equal(retry_json_read_file(missing, NULL, &buf, &len, &e), RETRY_EIO);
  assert_null(buf);
  assert_string_equal(e.source, missing);
  assert_non_null(strstr(e.message, "cannot open the file"));
  retry_error_clear(&e);
  assert_int_equal(retry_json_read_file(dir, NULL, &buf, &len, &e), RETRY_EIO);
  assert_null(buf);
  assert_non_null(strstr(e.message, "cannot read the file"));
  unlink(path);
  rmdir(dir);
}

/* Only regular files are read: a device would be read until memory ran out, a FIFO would
 * block. Each is refused at once, with a message saying what it is. */
static void test_read_file_refuses_dev_zero(void **state) {
  (void)state;
  static const char *const devices[] = {"/dev/zero", "/dev/urandom", "/dev/null"};
  for (size_t i = 0; i < sizeof devices / sizeof devices[0]; i++) {
    char *buf = NULL;
    size_t len = 0;
    retry_error e;
    retry_error_clear(&e);
    assert_int_equal(retry_json_read_file(devices[i], NULL, &buf, &len, &e), RETRY_EIO);
    assert_null(buf);
    assert_string_equal(e.source, devices[i]);
    assert_string_equal(e.message,
                        "cannot read the file: it is a character device, not a regular file");
  }
}

static void test_read_file_refuses_fifo_and_directory(void **state) {
  (void)state;
  char dir[] = "/tmp/test_json.XXXXXX";
  assert_non_null(mkdtemp(dir));
  char fifo[64];
  snprintf(fifo, sizeof fifo, "%s/pipe.json", dir);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  char *buf = NULL;
  size_t len = 0;
  retry_error e;
  retry_error_clear(&e);
  /* No writer: a blocking open would hang here. */
  assert_int_equal(retry_json_read_file(fifo, NULL, &buf, &len, &e), RETRY_EIO);
  assert_null(buf);
  assert_string_equal(e.source, fifo);
  assert_string_equal(e.message,
                      "cannot read the file: it is a FIFO (named pipe), not a regular file");
  retry_error_clear(&e);
  assert_int_equal(retry_json_read_file(dir, NULL, &buf, &len, &e), RETRY_EIO);
  assert_string_equal(e.source, dir);
  assert_string_equal(e.message, "cannot read the file: Is a directory");
  unlink(fifo);
  rmdir(dir);
}

/* A file past RETRY_JSON_MAX_FILE_BYTES is refused before a byte is read (the test's file is
 * sparse: it takes no room on disk). */
static void test_read_file_size_limit(void **state) {
  (void)state;
  char path[] = "/tmp/test_json_big.XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(ftruncate(fd, (off_t)RETRY_JSON_MAX_FILE_BYTES + 1), 0);
  close(fd);
  char *buf = NULL;
  size_t len = 0;
  retry_error e;
  retry_error_clear(&e);
  assert_int_equal(retry_json_read_file(path, NULL, &buf, &len, &e), RETRY_EIO);
  assert_null(buf);
  assert_string_equal(e.source, path);
  assert_string_equal(e.message,
                      "the file is too large: 67108865 bytes, at most 64 MiB "
                      "(67108864 bytes) are read");
  /* A file that fits is read: the limit is not a cap on every file. */
  fd = open(path, O_WRONLY | O_TRUNC);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, "{}", 2), 2);
  close(fd);
  retry_error_clear(&e);
  assert_int_equal(retry_json_read_file(path, NULL, &buf, &len, &e), RETRY_OK);
  assert_int_equal(len, 2);
  free(buf);
  unlink(path);
}

/* retry_error.source keeps the end of a name too long for it: "..." and the tail, never a
 * split UTF-8 character. */
static void test_error_source_keeps_its_tail(void **state) {
  (void)state;
  char name[400];
  memset(name, 'a', sizeof name);
  /* "é" (2 bytes) straddling the place where a plain byte cut would fall. */
  size_t tail_start = 400 - 1 - (sizeof((retry_error *)0)->source - 4);
  memcpy(name + tail_start - 1, "\xC3\xA9", 2);
  name[399] = '\0';
  memcpy(name + 399 - 12, "/policy.json", 12);
  retry_error e;
  retry_error_clear(&e);
  retry_error_set(&e, RETRY_EIO, name, "", -1, -1, "x");
  size_t n = strlen(e.source);
  assert_true(n < sizeof e.source);
  assert_true(strncmp(e.source, "...", 3) == 0);
  assert_string_equal(e.source + n - 12, "/policy.json");
  /* The cut moved past the continuation byte rather than keep half a character. */
  assert_true(((unsigned char)e.source[3] & 0xC0) != 0x80);
  assert_string_equal(e.source + 3, name + strlen(name) - (n - 3));
  /* A name that fits is kept whole. */
  retry_error_clear(&e);
  retry_error_set(&e, RETRY_EIO, "short.json", "", -1, -1, "x");
  assert_string_equal(e.source, "short.json");
}

static void test_json_suggest_finds_near_names_and_case_only(void **state) {
  (void)state;
  static const char *const names[] = {"methodConfig", "retryThrottling", "retrysim"};
  bool case_only = true;
  assert_string_equal(retry_json_suggest("methodConfigs", names, 3, &case_only), "methodConfig");
  assert_false(case_only);
  assert_string_equal(retry_json_suggest("MethodConfig", names, 3, &case_only), "methodConfig");
  assert_true(case_only);
  assert_string_equal(retry_json_suggest("retryThrotling", names, 3, &case_only),
                      "retryThrottling");
  assert_string_equal(retry_json_suggest("retrysym", names, 3, NULL), "retrysim");
  /* Nothing close enough: no guess. */
  assert_null(retry_json_suggest("services", names, 3, &case_only));
  assert_false(case_only);
  assert_null(retry_json_suggest("x", names, 3, NULL));
  static const char *const policy[] = {"maxAttempts", "initialBackoff", "maxBackoff"};
  assert_string_equal(retry_json_suggest("maxBackof", policy, 3, NULL), "maxBackoff");
  assert_string_equal(retry_json_suggest("MAXATTEMPTS", policy, 3, &case_only), "maxAttempts");
  assert_true(case_only);
  /* Long keys are compared for case only. */
  char longkey[100];
  memset(longkey, 'm', sizeof longkey - 1);
  longkey[99] = '\0';
  assert_null(retry_json_suggest(longkey, policy, 3, NULL));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_json_ctx_starts_at_the_root_without_error),
      cmocka_unit_test(test_json_path_pop_restores_what_push_added),
      cmocka_unit_test(test_json_long_path_is_cut_and_pops_still_restore),
      cmocka_unit_test(test_json_first_error_wins),
      cmocka_unit_test(test_json_fail_error_copies_the_error_under_the_prefix),
      cmocka_unit_test(test_json_failure_message_is_cut_to_fit_prefix_included),
      cmocka_unit_test(test_json_describe_shows_small_values_and_names_big_ones),
      cmocka_unit_test(test_json_unknown_key_names_the_first_and_lists_the_allowed),
      cmocka_unit_test(test_json_unknown_key_message_always_fits),
      cmocka_unit_test(test_json_field_null_is_absent),
      cmocka_unit_test(test_json_require_fails_only_on_absent),
      cmocka_unit_test(test_json_getters_read_present_skip_absent_or_null_refuse_bad),
      cmocka_unit_test(test_json_getter_leaves_out_alone_unless_valid),
      cmocka_unit_test(test_json_syntax_error_has_position_or_is_out_of_memory),
      cmocka_unit_test(test_json_read_file_reads_whole_files_and_names_failures),
      cmocka_unit_test(test_read_file_refuses_dev_zero),
      cmocka_unit_test(test_read_file_refuses_fifo_and_directory),
      cmocka_unit_test(test_read_file_size_limit),
      cmocka_unit_test(test_error_source_keeps_its_tail),
      cmocka_unit_test(test_json_suggest_finds_near_names_and_case_only),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
