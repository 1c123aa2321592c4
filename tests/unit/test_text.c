/* print/text.h: sentences cut to their point, findings grouped, lines
 * wrapped to a width. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "base/term.h"
#include "model/finding.h"
#include "print/common.h"
#include "print/json_stream.h"
#include "print/text.h"

static void a_point_is_the_first_sentence(void **state)
{
  char buf[256];
  (void)state;
  assert_string_equal(gr_text_point("NCCL 2.23 does it. Then more.", 80, buf, sizeof(buf)), "NCCL 2.23 does it.");
  assert_string_equal(gr_text_point("Use e.g. PHB here. Then more.", 80, buf, sizeof(buf)), "Use e.g. PHB here.");
}

static void a_long_point_loses_parentheses_then_clauses(void **state)
{
  char buf[256];
  (void)state;
  /* the first clause of a parenthesis stays while that is enough */
  assert_string_equal(gr_text_point("Bounded by NVLink (150 GB/s per direction; NCCL runs one ring per link).", 50,
                                    buf, sizeof(buf)),
                      "Bounded by NVLink (150 GB/s per direction).");
  assert_string_equal(gr_text_point("Bounded by NVLink (150 GB/s per direction; NCCL runs one ring).", 30, buf,
                                    sizeof(buf)),
                      "Bounded by NVLink.");
  gr_text_point("GPU0 is slow, because its riser trains x8, which halves its link, and more words here.", 40, buf,
                sizeof(buf));
  assert_true(gr_text_columns(buf) <= 40);
  assert_string_equal(buf, "GPU0 is slow, because its riser..."); /* a clause too early to end on: the last word */
}

static void gpu_lists_and_rings_shorten(void **state)
{
  char buf[256];
  (void)state;
  assert_string_equal(gr_text_point("GPU0 GPU1 GPU2 GPU3 GPU5 cannot do P2P.", 80, buf, sizeof(buf)),
                      "GPU0-3 GPU5 cannot do P2P.");
  assert_string_equal(gr_text_point("Ring GPU0>GPU1>GPU2>GPU3>GPU4>GPU5 over PCIe, slow.", 40, buf, sizeof(buf)),
                      "Ring GPU0>GPU1>...>GPU5 over PCIe, slow.");
}

static void findings_that_say_the_same_are_one_group(void **state)
{
  struct gr_findings fs = {0};
  struct gr_finding_group *g;
  (void)state;
  for (int i = 0; i < 10; i++)
    gr_finding_add(&fs, GR_SEV_INFO, "pcie.slot-gen", "GPU%d is a Gen4 device on a Gen3 port (0000:%02x:00.0).", i,
                   i + 3);
  gr_finding_add(&fs, GR_SEV_WARN, "pcie.aer", "GPU3 has errors.");
  gr_finding_add(&fs, GR_SEV_INFO, "topo.hives", "GPU0 and GPU1 form a hive.");
  size_t n = gr_finding_groups(&fs, &g);
  assert_int_equal(n, 3);
  assert_string_equal(fs.v[g[0].first].id, "pcie.aer"); /* the worst first */
  assert_int_equal(g[1].n, 10);
  assert_string_equal(g[1].who, "GPU0-9");
  assert_string_equal(g[1].text, "each is a Gen4 device on a Gen3 port (0000:03:00.0).");
  assert_int_equal(g[2].n, 1);
  assert_string_equal(g[2].who, "");
  gr_finding_groups_free(g, n);
  gr_findings_free(&fs);
}

/* What the wrapping stream makes of text, at a width. */
static char *wrapped(const char *text, int width)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&buf, &len);
  struct gr_text_style st = {.width = width};
  FILE *w = gr_text_open(mem, &st);
  fputs(text, w);
  assert_int_equal(gr_text_close(w), 0);
  fclose(mem);
  return buf;
}

static void long_lines_wrap_under_their_text_and_tables_stay(void **state)
{
  (void)state;
  char *s = wrapped("  warn  one two three four five six seven\n", 30);
  assert_string_equal(s, "  warn  one two three four\n        five six seven\n");
  free(s);
  s = wrapped("GPU0    X       N 144.0 N 144.0 N 144.0\n", 20); /* a table row stays whole */
  assert_string_equal(s, "GPU0    X       N 144.0 N 144.0 N 144.0\n");
  free(s);
  s = wrapped("  NODE = Connection traversing PCIe as well\n", 30); /* a legend hangs under its meaning */
  assert_string_equal(s, "  NODE = Connection traversing\n         PCIe as well\n");
  free(s);
  s = wrapped("no newline at the end", 40);
  assert_string_equal(s, "no newline at the end");
  free(s);
}

/* The streamed JSON writer prints what gr_json_print prints for the same
 * tree, byte for byte: nesting, empty containers, escapes, reals, members
 * after a nested container. */
static void streamed_json_is_the_tree_dumped(void **state)
{
  (void)state;
  char *a = NULL, *b = NULL;
  size_t alen = 0, blen = 0;
  json_t *tree = json_pack("{s:s, s:{s:[], s:{}, s:[[i, f], [s]]}, s:[{s:n, s:b}], s:f, s:[]}", "text",
                           "a \"quote\"\n\ttab \x01 and \xc3\xa9", "outer", "none", "empty", "rows", 1, 2.5, "x", "list",
                           "k", "t", 1, "real", 480.1, "last");
  assert_non_null(tree);
  FILE *f = open_memstream(&a, &alen);
  gr_json_print(f, tree);
  fclose(f);
  f = open_memstream(&b, &blen);
  struct gr_jw w;
  gr_jw_begin(&w, f);
  gr_jw_put(&w, "text", json_incref(json_object_get(tree, "text")));
  gr_jw_object(&w, "outer");
  gr_jw_array(&w, "none");
  gr_jw_close(&w);
  gr_jw_put(&w, "empty", json_object());
  gr_jw_array(&w, "rows");
  gr_jw_put(&w, NULL, json_pack("[i, f]", 1, 2.5));
  gr_jw_put(&w, NULL, json_pack("[s]", "x"));
  gr_jw_close(&w);
  gr_jw_close(&w);
  gr_jw_array(&w, "list");
  gr_jw_object(&w, NULL);
  gr_jw_put(&w, "k", json_null());
  gr_jw_put(&w, "t", json_true());
  gr_jw_close(&w);
  gr_jw_close(&w);
  gr_jw_put(&w, "real", json_real(480.1));
  gr_jw_array(&w, "last");
  gr_jw_close(&w);
  gr_jw_end(&w);
  fclose(f);
  assert_string_equal(b, a);
  free(a);
  free(b);
  json_decref(tree);
}

/* The scalar writers (gr_jw_str, _int, _bool, _null, _positive) write what
 * gr_jw_put of the jansson value writes: rounded reals at 10 digits (whole
 * numbers, one and two decimals, large, tiny, zero after rounding, not
 * finite), escapes, text that is not UTF-8, a key too long for one piece,
 * negative and extreme integers, inside nested containers. */
static void streamed_scalars_are_jansson_values(void **state)
{
  (void)state;
  static const double reals[] = {450.0, 370.8, 31.51, 0.01, 0.004, 0.005, 12345678.91, 99999999.995, 1e8, 3.3e12,
                                 2.675, 1.005, 1e-7, 0, -1, INFINITY, NAN, 63.015385, 7.999999};
  static const long long ints[] = {0, 7, -42, 9223372036854775807LL, -9223372036854775807LL - 1};
  static const char *const texts[] = {"PIX", "X", "a \"q\" \\ b", "tab\there", "\xc3\xa9t\xc3\xa9", "bad \xff", NULL, ""};
  char longkey[300];
  memset(longkey, 'k', sizeof(longkey) - 1);
  longkey[sizeof(longkey) - 1] = '\0';
  char *a = NULL, *b = NULL;
  size_t alen = 0, blen = 0;
  FILE *fa = open_memstream(&a, &alen), *fb = open_memstream(&b, &blen);
  struct gr_jw wa, wb;
  gr_jw_begin(&wa, fa);
  gr_jw_begin(&wb, fb);
  for (int d = 0; d <= 3; d++) {
    gr_jw_array(&wa, d % 2 ? "reals" : longkey);
    gr_jw_array(&wb, d % 2 ? "reals" : longkey);
    for (size_t i = 0; i < sizeof(reals) / sizeof(reals[0]); i++) {
      gr_jw_put(&wa, NULL, gr_json_positive(reals[i], d));
      gr_jw_positive(&wb, NULL, reals[i], d);
    }
    gr_jw_close(&wa);
    gr_jw_close(&wb);
  }
  gr_jw_object(&wa, "scalars");
  gr_jw_object(&wb, "scalars");
  for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
    gr_jw_put(&wa, i % 2 ? "i" : longkey, json_integer(ints[i]));
    gr_jw_int(&wb, i % 2 ? "i" : longkey, ints[i]);
  }
  for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
    gr_jw_put(&wa, "s\"", texts[i] ? json_string(texts[i]) : NULL);
    gr_jw_str(&wb, "s\"", texts[i]);
  }
  gr_jw_put(&wa, "t", json_true());
  gr_jw_bool(&wb, "t", true);
  gr_jw_put(&wa, "f", json_false());
  gr_jw_bool(&wb, "f", false);
  gr_jw_put(&wa, "n", json_null());
  gr_jw_null(&wb, "n");
  gr_jw_put(&wa, "bad key \xff", json_null());
  gr_jw_null(&wb, "bad key \xff");
  gr_jw_close(&wa);
  gr_jw_close(&wb);
  gr_jw_end(&wa);
  gr_jw_end(&wb);
  fclose(fa);
  fclose(fb);
  assert_string_equal(b, a);
  assert_non_null(strstr(a, "370.8,"));   /* the writers were not both silent */
  assert_non_null(strstr(a, "\"i\": 7,")); /* and the keys and values are there */
  free(a);
  free(b);
}

/* The JSON-lines writer (watch --json) prints what jansson's compact dump
 * at 15 digits prints: reals (".0", exponents), escapes, text that is not
 * UTF-8 (gr_json_text's '?'), null, nesting. */
static void json_lines_are_jansson_compact(void **state)
{
  (void)state;
  static const double reals[] = {0.1, 1e20, 1e-5, 123.0, 39.707, -2.5e-7, 1795802657.688, 0};
  static const char *const texts[] = {"plain", "q\"b\\s\n\t\x01\x1f", "caf\xc3\xa9", "bad \xff\xc3 byte", ""};
  char *a = NULL, *b = NULL;
  size_t alen = 0, blen = 0;
  json_t *tree = json_object(), *arr = json_array();
  FILE *f = open_memstream(&b, &blen);
  struct gr_jl l;
  gr_jl_begin(&l, f);
  gr_jl_array(&l, "reals");
  for (size_t i = 0; i < sizeof(reals) / sizeof(reals[0]); i++) {
    json_array_append_new(arr, json_real(reals[i]));
    gr_jl_real(&l, NULL, reals[i]);
  }
  gr_jl_close(&l);
  json_object_set_new(tree, "reals", arr);
  gr_jl_object(&l, "texts");
  json_t *o = json_object();
  for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
    char key[8];
    snprintf(key, sizeof(key), "t%zu", i);
    json_object_set_new(o, key, gr_json_text(texts[i]));
    gr_jl_text(&l, key, texts[i]);
  }
  gr_jl_close(&l);
  json_object_set_new(tree, "texts", o);
  gr_jl_int(&l, "n", -42);
  gr_jl_null(&l, "none");
  gr_jl_bool(&l, "yes", true);
  gr_jl_array(&l, "empty");
  gr_jl_close(&l);
  gr_jl_end(&l);
  fclose(f);
  json_object_set_new(tree, "n", json_integer(-42));
  json_object_set_new(tree, "none", json_null());
  json_object_set_new(tree, "yes", json_true());
  json_object_set_new(tree, "empty", json_array());
  f = open_memstream(&a, &alen);
  json_dumpf(tree, f, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
  fputc('\n', f);
  fclose(f);
  assert_string_equal(b, a);
  free(a);
  free(b);
  json_decref(tree);
}

/* The escape rule one byte at a time, as the filter wrote it before it
 * tested a word at a time: what gr_term_escape must still produce. */
static size_t escape_slow(const unsigned char *src, size_t n, char *dst)
{
  size_t out = 0;
  int lead = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = src[i];
    if (lead) {
      lead = 0;
      if (ch >= 0x80 && ch <= 0x9f) {
        out += (size_t)sprintf(dst + out, "\\u%04x", ch);
        continue;
      }
      dst[out++] = (char)0xc2;
    }
    if (ch == 0xc2)
      lead = 1;
    else if (ch == 0x7f)
      out += (size_t)sprintf(dst + out, "\\u%04x", ch);
    else if (ch < 0x20 && ch != '\n' && ch != '\t')
      out += (size_t)sprintf(dst + out, "\\x%02x", ch);
    else
      dst[out++] = (char)ch;
  }
  if (lead)
    dst[out++] = (char)0xc2;
  return out;
}

/* Every byte value at every offset of a word (and a C1 control split across
 * two calls) escapes as the byte-at-a-time rule says: the word test may not
 * let one through. */
static void term_escape_matches_the_byte_rule(void **state)
{
  (void)state;
  unsigned char src[64];
  char fast[64 * 6 + 8], slow[64 * 6 + 8];
  for (int v = 0; v < 256; v++)
    for (size_t at = 0; at < 40; at++) {
      memset(src, 'a', sizeof(src));
      src[at] = (unsigned char)v;
      src[at + 1] = 0x9b; /* after a 0xC2: the C1 control CSI */
      src[(at * 7) % 64] = (unsigned char)(v ^ 0x80);
      int lead = 0;
      size_t half = (at * 13) % 64, m = gr_term_escape((const char *)src, half, fast, sizeof(fast), &lead);
      m += gr_term_escape((const char *)src + half, sizeof(src) - half, fast + m, sizeof(fast) - m, &lead);
      if (lead)
        fast[m++] = (char)0xc2;
      size_t k = escape_slow(src, sizeof(src), slow);
      assert_int_equal(m, k);
      assert_memory_equal(fast, slow, k);
    }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_point_is_the_first_sentence),
      cmocka_unit_test(a_long_point_loses_parentheses_then_clauses),
      cmocka_unit_test(gpu_lists_and_rings_shorten),
      cmocka_unit_test(findings_that_say_the_same_are_one_group),
      cmocka_unit_test(long_lines_wrap_under_their_text_and_tables_stay),
      cmocka_unit_test(streamed_json_is_the_tree_dumped),
      cmocka_unit_test(streamed_scalars_are_jansson_values),
      cmocka_unit_test(json_lines_are_jansson_compact),
      cmocka_unit_test(term_escape_matches_the_byte_rule),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
