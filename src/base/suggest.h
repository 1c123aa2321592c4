/* "Did you mean": the one edit distance gpurig uses to find the name a user
 * meant (commands, options, rigs, models, GPUs), and the loose comparison of
 * names that differ only in case, spaces, hyphens and underscores
 * ("RTX3090" is "RTX 3090", "llama_2_7b" is "llama-2-7b"). */
#ifndef GPURIG_SUGGEST_H
#define GPURIG_SUGGEST_H

#include <stdbool.h>
#include <stddef.h>

/* Names longer than this get no suggestion (the distance is quadratic). */
#define GR_SUGGEST_MAX 64

/* The optimal string alignment distance (Levenshtein plus the swap of two
 * neighbours: "worp" -> "wopr" is 1) between a and b after the loose
 * normalisation (case, ' ', '-', '_' ignored). SIZE_MAX when either is NULL
 * or longer than GR_SUGGEST_MAX. */
size_t gr_edit_distance(const char *a, const char *b);

/* a and b are the same name but for case, spaces, hyphens and underscores;
 * false when either is NULL or normalises to nothing. */
bool gr_name_loose_eq(const char *a, const char *b);

/* Collects the closest candidate to a word, one offer at a time:
 *   struct gr_suggest s; gr_suggest_init(&s, word);
 *   for (...) gr_suggest_offer(&s, name);
 *   const char *m = gr_suggest_best(&s);   // NULL: nothing close enough
 * The best is copied into s (a candidate need not outlive the offer). */
struct gr_suggest {
  const char *word;    /* not copied: it must outlive s */
  char best[128];      /* "" none yet */
  size_t dist;
};
void gr_suggest_init(struct gr_suggest *s, const char *word);
void gr_suggest_offer(struct gr_suggest *s, const char *candidate);
/* The best candidate, or NULL when none is close enough (valid while s is).
 * Close enough: a distance of at most a third of the word's length (at
 * least 1), or the word (3 characters or more) begins the candidate. The
 * first of equally close candidates wins. */
const char *gr_suggest_best(const struct gr_suggest *s);

/* Writes "; did you mean 'NAME'?" into buf when s has a best, else "". */
const char *gr_suggest_text(const struct gr_suggest *s, char *buf, size_t cap);

#endif
