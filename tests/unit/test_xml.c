/* The XML reader (base/xml.h): what it makes of a well-formed document, and
 * what it refuses, each at its line and column, leaving the document empty:
 * a truncated file, an entity (never declared, never expanded), nesting
 * deeper than the format allows (refused at the first element too deep,
 * whatever the depth of the input). */
#include "testutil.h"

#include "base/xml.h"

static const struct gr_xml_format fmt = {
    .what = "a test file", .root = "r", .root_hint = "<r>",
    .max_depth = 8, .max_elems = 100, .max_children = 10, .max_attrs = 4, .max_value = 16, .max_name = 16,
    .elems_note = " (the test's limit)", .depth_note = " (the test's limit)", .limit_note = " (the test's limit)"};

static int read_text(const char *text, struct gr_xml_doc *d, struct gr_err *err)
{
  return gr_xml_read("t.xml", text, strlen(text), &fmt, d, err);
}

/* Reads text, which the reader must refuse with msg; the document is left empty. */
static void expect_error(const char *text, const char *msg)
{
  struct gr_xml_doc d;
  struct gr_err err = {0};
  assert_int_equal(read_text(text, &d, &err), -1);
  assert_int_equal(err.code, GR_EXIT_FAIL);
  if (strcmp(err.msg, msg) != 0)
    fail_msg("got '%s', expected '%s'", err.msg, msg);
  assert_int_equal(d.nel, 0);
  assert_int_equal(d.nat, 0);
  gr_xml_free(&d);
}

static void well_formed(void **state)
{
  (void)state;
  const char *text = "\xef\xbb\xbf<?xml version=\"1.0\"?>\n"
                     "<!-- a comment -->\n"
                     "<r a=\"1\" b='two'>\n"
                     "  <e k=\"v\"/>\n"
                     "  <e><f x=\"\"/></e>\n"
                     "</r>\n";
  struct gr_xml_doc d;
  struct gr_err err = {0};
  assert_int_equal(read_text(text, &d, &err), 0);
  assert_int_equal(d.nel, 4);
  assert_int_equal(d.nat, 4);
  static const struct {
    const char *name;
    int parent;
    unsigned line, col, nattrs, nchildren;
  } want[] = {{"r", -1, 3, 1, 2, 2}, {"e", 0, 4, 3, 1, 0}, {"e", 0, 5, 3, 0, 1}, {"f", 2, 5, 6, 1, 0}};
  for (size_t i = 0; i < 4; i++) {
    const struct gr_xml_elem *e = &d.el[i];
    assert_true(gr_xml_name_is(e->name, e->nlen, want[i].name));
    assert_int_equal(e->parent, want[i].parent);
    assert_int_equal(e->line, want[i].line);
    assert_int_equal(e->col, want[i].col);
    assert_int_equal(e->nattrs, want[i].nattrs);
    assert_int_equal(e->nchildren, want[i].nchildren);
  }
  const struct gr_xml_attr *b = &d.at[d.el[0].attr0 + 1];
  assert_true(gr_xml_name_is(b->key, b->klen, "b"));
  assert_true(gr_xml_name_is(b->val, b->vlen, "two"));
  assert_int_equal(b->line, 3);
  assert_int_equal(b->col, 13);
  const struct gr_xml_attr *x = &d.at[d.el[3].attr0];
  assert_int_equal(x->vlen, 0);
  assert_true(x->val >= text && x->val <= text + strlen(text)); /* into the caller's bytes */
  gr_xml_free(&d);
  assert_null(d.el);
  gr_xml_free(&d); /* twice is harmless */
}

static void truncated(void **state)
{
  (void)state;
  expect_error("<r><e>", "t.xml:1:4: <e> is never closed (the file ends first)");
  expect_error("<r><e a=\"1", "t.xml:1:9: unterminated attribute value (no closing \")");
  expect_error("<r><e", "t.xml:1:4: unterminated tag <e> (the file ends first)");
  expect_error("<r>\n<!-- x", "t.xml:2:1: comment never closed with \"-->\" (the file ends first)");
  expect_error("<r></", "t.xml:1:4: expected an element name after '</'");
  expect_error("", "t.xml:1:1: no <r> element: not a test file");
  struct gr_xml_doc d;
  struct gr_err err = {0};
  assert_int_equal(gr_xml_read("t.xml", "<r>\n<e>\0</e></r>", 15, &fmt, &d, &err), -1);
  assert_string_equal(err.msg, "t.xml:2:4: binary data (NUL byte): not a test file");
  assert_int_equal(d.nel, 0);
}

static void entities(void **state)
{
  (void)state;
  /* where an entity would be declared: refused, so none ever is */
  expect_error("<!DOCTYPE r [<!ENTITY a \"aaaa\">]><r/>",
               "t.xml:1:1: document type declarations are not part of a test file");
  expect_error("<r><![CDATA[&a;]]></r>", "t.xml:1:4: CDATA sections are not part of a test file");
  expect_error("<r>&a;</r>", "t.xml:1:4: text outside a tag (a test file holds only elements)");
  /* inside a value a reference is not expanded: the bytes as written */
  struct gr_xml_doc d;
  struct gr_err err = {0};
  assert_int_equal(read_text("<r a=\"&amp;&lol9;\"/>", &d, &err), 0);
  assert_true(gr_xml_name_is(d.at[0].val, d.at[0].vlen, "&amp;&lol9;"));
  gr_xml_free(&d);
}

static void nesting_bounded(void **state)
{
  (void)state;
  /* 8 levels are read; the ninth is refused at its '<', however deep the
   * input goes on (100,000 levels here) */
  char *ok = xstrdup("<r><a><a><a><a><a><a><a></a></a></a></a></a></a></a></r>");
  struct gr_xml_doc d;
  struct gr_err err = {0};
  assert_int_equal(read_text(ok, &d, &err), 0);
  assert_int_equal(d.nel, 8);
  assert_int_equal(d.el[7].parent, 6);
  gr_xml_free(&d);
  free(ok);
  size_t levels = 100000, len = 3 + levels * 3;
  char *deep = xcalloc(len + 1, 1);
  memcpy(deep, "<r>", 3);
  for (size_t i = 0; i < levels; i++)
    memcpy(deep + 3 + i * 3, "<a>", 3);
  expect_error(deep, "t.xml:1:25: elements nested more than 8 levels deep (the test's limit)");
  free(deep);
}

static void other_limits(void **state)
{
  (void)state;
  expect_error("<r><e/><e/><e/><e/><e/><e/><e/><e/><e/><e/><e/></r>",
               "t.xml:1:44: more than 10 elements inside one <r> (the test's limit)");
  expect_error("<r a=\"1\" b=\"1\" c=\"1\" d=\"1\" e=\"1\"/>", "t.xml:1:28: more than 4 attributes in one element");
  expect_error("<r a=\"12345678901234567\"/>", "t.xml:1:7: attribute value longer than 16 bytes (the test's limit)");
  expect_error("<r a=\"1\" a=\"2\"/>", "t.xml:1:10: attribute a given twice");
  expect_error("<r/><r/>", "t.xml:1:5: a second top-level element <r> after </r>");
  expect_error("<s/>", "t.xml:1:1: expected <r> (a test file), got <s>");
  expect_error("<r></s>", "t.xml:1:4: closing tag </s> does not match <r> (line 1, column 1)");
  expect_error("<r a=\"\x01\"/>", "t.xml:1:7: byte 0x01 inside an attribute value (a test file is plain ASCII)");
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(well_formed),     cmocka_unit_test(truncated),    cmocka_unit_test(entities),
      cmocka_unit_test(nesting_bounded), cmocka_unit_test(other_limits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
