/* The edit distance and "did you mean" of base/suggest.h: the typos of the
 * UX review (issue 18) and what must not be suggested. */
#include "testutil.h"

#include "base/suggest.h"

static void distance_counts_edits_and_swaps(void **state)
{
  (void)state;
  assert_int_equal(gr_edit_distance("topo", "topo"), 0);
  assert_int_equal(gr_edit_distance("topoo", "topo"), 1);     /* one insertion */
  assert_int_equal(gr_edit_distance("tpo", "topo"), 1);       /* one deletion */
  assert_int_equal(gr_edit_distance("tapo", "topo"), 1);      /* one substitution */
  assert_int_equal(gr_edit_distance("worp", "wopr"), 1);      /* one swap of neighbours */
  assert_int_equal(gr_edit_distance("jsno", "json"), 1);
  assert_int_equal(gr_edit_distance("", "abc"), 3);
  assert_int_equal(gr_edit_distance("kitten", "sitting"), 3);
  assert_int_equal(gr_edit_distance("ca", "abc"), 3);         /* OSA: a swapped pair is not edited again */
  assert_int_equal(gr_edit_distance("lama-2-7b", "llama-2-7b"), 1);
}

static void distance_ignores_case_spaces_hyphens(void **state)
{
  (void)state;
  assert_int_equal(gr_edit_distance("RTX3090", "RTX 3090"), 0);
  assert_int_equal(gr_edit_distance("rtx-3090", "RTX 3090"), 0);
  assert_int_equal(gr_edit_distance("WOPR", "wopr"), 0);
  assert_true(gr_name_loose_eq("RTX3090", "RTX 3090"));
  assert_true(gr_name_loose_eq("llama_2_7b", "llama-2-7b"));
  assert_false(gr_name_loose_eq("RTX 3090", "RTX 3090 Ti"));
  assert_false(gr_name_loose_eq("-", " "));   /* nothing left is no name */
  assert_false(gr_name_loose_eq(NULL, "x"));
}

static void distance_refuses_long_names(void **state)
{
  (void)state;
  char big[GR_SUGGEST_MAX + 2];
  memset(big, 'a', sizeof(big) - 1);
  big[sizeof(big) - 1] = '\0';
  assert_int_equal(gr_edit_distance(big, "a"), SIZE_MAX);
  assert_int_equal(gr_edit_distance(NULL, "a"), SIZE_MAX);
  big[GR_SUGGEST_MAX] = '\0'; /* exactly the cap still counts */
  assert_int_equal(gr_edit_distance(big, ""), GR_SUGGEST_MAX);
}

static const char *best_of(const char *word, const char *const *names, size_t n)
{
  static struct gr_suggest s;
  gr_suggest_init(&s, word);
  for (size_t i = 0; i < n; i++)
    gr_suggest_offer(&s, names[i]);
  return gr_suggest_best(&s);
}

static void suggests_the_closest_or_nothing(void **state)
{
  (void)state;
  static const char *const cmds[] = {"report", "topo", "snapshot", "compare", "doctor", "gpus", "plan"};
  static const char *const rigs[] = {"asus-esc4000", "tyan-s8030", "wopr", "tinybox-green"};
  size_t nc = sizeof(cmds) / sizeof(cmds[0]), nr = sizeof(rigs) / sizeof(rigs[0]);
  assert_string_equal(best_of("topoo", cmds, nc), "topo");
  assert_string_equal(best_of("gpu", cmds, nc), "gpus");
  assert_string_equal(best_of("doctr", cmds, nc), "doctor");
  assert_string_equal(best_of("worp", rigs, nr), "wopr");
  assert_string_equal(best_of("tyan", rigs, nr), "tyan-s8030"); /* the word begins the name */
  assert_null(best_of("xyzzy", cmds, nc));
  assert_null(best_of("ab", rigs, nr));       /* too short to begin anything */
  assert_null(best_of("blah", cmds, nc));     /* 2 edits from plan: too far for 4 letters */
  assert_null(best_of(NULL, cmds, nc));
  char buf[64];
  struct gr_suggest s;
  gr_suggest_init(&s, "compar");
  gr_suggest_offer(&s, "compare");
  assert_string_equal(gr_suggest_text(&s, buf, sizeof(buf)), "; did you mean 'compare'?");
  gr_suggest_init(&s, "zzz");
  gr_suggest_offer(&s, "compare");
  assert_string_equal(gr_suggest_text(&s, buf, sizeof(buf)), "");
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(distance_counts_edits_and_swaps),
      cmocka_unit_test(distance_ignores_case_spaces_hyphens),
      cmocka_unit_test(distance_refuses_long_names),
      cmocka_unit_test(suggests_the_closest_or_nothing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
