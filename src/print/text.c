/* Text for a screen; see text.h. */

#include "print/text.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/term.h"
#include "base/util.h"

struct gr_text_style gr_text_style_stdout(bool verbose)
{
  struct gr_text_style st = {.width = gr_term_width(STDOUT_FILENO),
                             .color = gr_term_color_ok(STDOUT_FILENO) != 0,
                             .verbose = verbose};
  return st;
}

size_t gr_text_columns(const char *s)
{
  size_t n = 0;
  for (; *s; s++)
    n += ((unsigned char)*s & 0xc0) != 0x80; /* continuation bytes take no column */
  return n;
}

/* ---- the wrapping stream ---- */

struct wrap {
  FILE *out;
  struct gr_text_style st;
  char *line;
  size_t len, cap;
};

/* The words a line may start with that say how good or bad it is, and
 * their colour (SGR). */
static const struct {
  const char *word, *sgr;
} tags[] = {
    {"fail", "\033[1;31m"}, {"poor", "\033[31m"},  {"warn", "\033[33m"},    {"fair", "\033[33m"},
    {"error", "\033[35m"},  {"good", "\033[32m"},  {"ok", "\033[32m"},      {"info", "\033[36m"},
    {"skipped", "\033[2m"},
};

/* Length of the tag word at s (followed by a space), and its colour. */
static size_t tag_at(const char *s, const char **sgr)
{
  for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++) {
    size_t n = strlen(tags[i].word);
    if (strncmp(s, tags[i].word, n) == 0 && s[n] == ' ') {
      *sgr = tags[i].sgr;
      return n;
    }
  }
  return 0;
}

/* Writes s[0..n) to out, the tag (at tag_off, tag_len long) in colour. */
static void put_colored(struct wrap *w, const char *s, size_t n, size_t tag_off, size_t tag_len, const char *sgr)
{
  if (!w->st.color || !tag_len) {
    fwrite(s, 1, n, w->out);
    return;
  }
  fwrite(s, 1, tag_off, w->out);
  gr_term_raw(w->out, sgr);
  fwrite(s + tag_off, 1, tag_len, w->out);
  gr_term_raw(w->out, "\033[0m");
  fwrite(s + tag_off + tag_len, 1, n - tag_off - tag_len, w->out);
}

/* Where the line's text starts after its indentation and tag (the column
 * continuation lines start at). */
static size_t hang_of(const char *s, size_t *tag_off, size_t *tag_len, const char **sgr)
{
  size_t i = 0;
  while (s[i] == ' ')
    i++;
  *tag_off = i;
  *tag_len = tag_at(s + i, sgr);
  const char *eq = strstr(s + i, " = ");
  if (!*tag_len && eq && eq - (s + i) <= 8 && !memchr(s + i, ' ', (size_t)(eq - (s + i)) - 1))
    return (size_t)(eq - s) + 3; /* a legend line ("NODE = ...") continues under its meaning */
  if (!*tag_len)
    return i;
  i += *tag_len;
  while (s[i] == ' ')
    i++;
  return i;
}

/* The byte offset where a line of at most `cols` columns starting at s
 * should end: after the last space that fits, else after the first word
 * (a word wider than the line is never split). */
static size_t break_at(const char *s, size_t cols)
{
  size_t col = 0, last_space = 0;
  for (size_t i = 0; s[i]; i++) {
    if (s[i] == ' ' && col <= cols) /* the text before this space fits */
      last_space = i;
    if (((unsigned char)s[i] & 0xc0) != 0x80)
      col++;
    if (col > cols)
      break;
  }
  if (gr_text_columns(s) <= cols)
    return strlen(s);
  if (last_space)
    return last_space;
  const char *sp = strchr(s, ' ');
  return sp ? (size_t)(sp - s) : strlen(s);
}

static void emit_line(struct wrap *w, char *s)
{
  size_t tag_off, tag_len;
  const char *sgr = NULL;
  size_t hang = hang_of(s, &tag_off, &tag_len, &sgr);
  size_t width = (size_t)w->st.width;
  bool table = strstr(s + hang, "  ") != NULL || strchr(s, '\t') != NULL;
  if (table || gr_text_columns(s) <= width || hang + 20 > width) {
    put_colored(w, s, strlen(s), tag_off, tag_len, sgr);
    fputc('\n', w->out);
    return;
  }
  size_t cut = hang + break_at(s + hang, width - hang);
  put_colored(w, s, cut, tag_off, tag_len, sgr);
  fputc('\n', w->out);
  for (const char *rest = s + cut; *rest;) {
    while (*rest == ' ')
      rest++;
    if (!*rest)
      break;
    size_t n = break_at(rest, width - hang);
    fprintf(w->out, "%*s%.*s\n", (int)hang, "", (int)n, rest);
    rest += n;
  }
}

static ssize_t wrap_write(void *cookie, const char *buf, size_t n)
{
  struct wrap *w = cookie;
  const char *p = buf, *end = buf + n;
  while (p < end) { /* a run up to the next newline at a time: memchr, not a byte loop */
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t run = (size_t)((nl ? nl : end) - p);
    if (w->len + run + 2 > w->cap) {
      while (w->len + run + 2 > w->cap)
        w->cap = w->cap ? w->cap * 2 : 256;
      w->line = xrealloc(w->line, w->cap);
    }
    memcpy(w->line + w->len, p, run);
    w->len += run;
    p += run;
    if (nl) {
      w->line[w->len] = '\0';
      emit_line(w, w->line);
      w->len = 0;
      p++;
    }
  }
  return (ssize_t)n;
}

static int wrap_close(void *cookie)
{
  struct wrap *w = cookie;
  if (w->len) { /* a last line without its newline stays without one */
    w->line[w->len] = '\0';
    fputs(w->line, w->out);
  }
  int rc = fflush(w->out) == 0 && !ferror(w->out) ? 0 : -1;
  free(w->line);
  free(w);
  return rc;
}

FILE *gr_text_open(FILE *out, const struct gr_text_style *st)
{
  struct wrap *w = xcalloc(1, sizeof(*w));
  w->out = out;
  w->st = *st;
  w->cap = 256;
  w->line = xmalloc(w->cap);
  cookie_io_functions_t io = {.write = wrap_write, .close = wrap_close};
  FILE *f = fopencookie(w, "w", io);
  if (!f) {
    free(w->line);
    free(w);
  }
  return f;
}

int gr_text_close(FILE *wrapped)
{
  return fclose(wrapped) == 0 ? 0 : -1;
}

/* ---- the point of a sentence ---- */

/* End of the first sentence: a period (or ! ?) followed by a space or the
 * end, not one of "e.g." or "i.e." and not between digits ("2.23"). */
static size_t first_sentence(const char *s)
{
  for (size_t i = 0; s[i]; i++) {
    if (s[i] != '.' && s[i] != '!' && s[i] != '?')
      continue;
    if (s[i + 1] != ' ' && s[i + 1] != '\0')
      continue;
    if (i >= 3 && (strncmp(s + i - 3, "e.g", 3) == 0 || strncmp(s + i - 3, "i.e", 3) == 0))
      continue;
    if (i >= 2 && strncmp(s + i - 2, "vs", 2) == 0)
      continue;
    return i + 1;
  }
  return strlen(s);
}

/* Copies s without its parenthesised parts (and the space before each). */
static void drop_parentheses(char *s)
{
  size_t o = 0;
  int depth = 0;
  for (size_t i = 0; s[i]; i++) {
    if (s[i] == '(' && depth++ == 0) {
      while (o > 0 && s[o - 1] == ' ')
        o--;
      continue;
    }
    if (s[i] == ')' && depth > 0) {
      depth--;
      continue;
    }
    if (!depth)
      s[o++] = s[i];
  }
  s[o] = '\0';
}

/* Cuts s to at most max columns (max >= 8) after the last whole sentence
 * that fits, else after the last clause (", " "; " ": ") or word, ending
 * it "...". */
static void cut_clause(char *s, size_t max)
{
  if (gr_text_columns(s) <= max)
    return;
  size_t limit = 0, col = 0;
  for (; s[limit] && col < max - 3; limit++)
    col += ((unsigned char)s[limit] & 0xc0) != 0x80;
  while (limit > 0 && ((unsigned char)s[limit] & 0xc0) == 0x80)
    limit--; /* never inside a character */
  size_t best = 0, word = 0, sentence = 0;
  for (size_t i = 1; i + 1 < limit; i++) {
    if (s[i] == ' ' && strchr(",;:", s[i - 1]) && i - 1 > max / 3)
      best = i - 1;
    if (s[i] == ' ' && s[i - 1] == '.' && i > max / 3)
      sentence = i;
    if (s[i] == ' ')
      word = i;
  }
  if (sentence) { /* whole sentences that fit need no "..." */
    s[sentence] = '\0';
    return;
  }
  size_t end = best ? best : word ? word : limit;
  strcpy(s + end, "...");
}

/* Keeps only the first clause of each parenthesis: "(150 GB/s per
 * direction; NCCL runs one ring per link)" -> "(150 GB/s per direction)". */
static void trim_parentheses(char *s)
{
  size_t o = 0;
  int depth = 0;
  bool skipping = false;
  for (size_t i = 0; s[i]; i++) {
    if (s[i] == '(')
      depth++;
    if (s[i] == ')' && depth > 0 && --depth == 0)
      skipping = false;
    if (s[i] == ';' && depth == 1)
      skipping = true;
    if (!skipping)
      s[o++] = s[i];
  }
  s[o] = '\0';
}

/* A ring written out ("GPU0>GPU1>GPU2>GPU3>GPU4") keeps its ends
 * ("GPU0>GPU1>...>GPU4"). */
static void shorten_rings(char *s)
{
  for (char *p = s; (p = strstr(p, "GPU")) != NULL;) {
    char *hop[4] = {p, NULL, NULL, NULL}, *q = p, *last = p;
    size_t hops = 0;
    for (;;) {
      for (q += 3; isdigit((unsigned char)*q); q++) {}
      if (strncmp(q, ">GPU", 4) != 0 || !isdigit((unsigned char)q[4]))
        break;
      if (++hops < 3)
        hop[hops] = q + 1;
      last = ++q;
    }
    if (hops < 3) {
      p = q;
      continue;
    }
    char *keep = hop[2]; /* after "GPUa>GPUb>" */
    memmove(keep + 4, last, strlen(last) + 1);
    memcpy(keep, "...>", 4);
    p = keep + 4;
  }
}

/* A list of three or more GPUs in a row ("GPU0 GPU1 GPU2 GPU3") becomes
 * their range ("GPU0-3"). */
static void shorten_lists(char *s)
{
  for (char *p = s; (p = strstr(p, "GPU")) != NULL;) {
    char *q = p + 3, *end;
    long first = strtol(q, &end, 10), last = first;
    size_t n = 1;
    if (end == q) {
      p = q;
      continue;
    }
    char *after = end; /* just after the last GPU of the run */
    while (strncmp(after, " GPU", 4) == 0 && isdigit((unsigned char)after[4])) {
      long next = strtol(after + 4, &end, 10);
      if (next != last + 1)
        break;
      last = next;
      after = end;
      n++;
    }
    if (n < 3) {
      p = q;
      continue;
    }
    char range[48];
    int len = snprintf(range, sizeof(range), "GPU%ld-%ld", first, last);
    memmove(p + len, after, strlen(after) + 1);
    memcpy(p, range, (size_t)len);
    p += len;
  }
}

static const char *fit(const char *s, size_t n, size_t max, char *buf, size_t cap);

const char *gr_text_point(const char *s, size_t max, char *buf, size_t cap)
{
  return fit(s, first_sentence(s), max, buf, cap);
}

const char *gr_text_fit(const char *s, size_t max, char *buf, size_t cap)
{
  return fit(s, strlen(s), max, buf, cap);
}

/* s[0..n) in at most max columns: see gr_text_point. */
static const char *fit(const char *s, size_t n, size_t max, char *buf, size_t cap)
{
  if (n >= cap)
    n = cap - 1;
  memcpy(buf, s, n);
  buf[n] = '\0';
  shorten_lists(buf);
  if (max < 8 || gr_text_columns(buf) <= max)
    return buf;
  shorten_rings(buf);
  if (gr_text_columns(buf) <= max)
    return buf;
  trim_parentheses(buf);
  if (gr_text_columns(buf) <= max)
    return buf;
  drop_parentheses(buf);
  if (cap > 4)
    cut_clause(buf, max < cap - 4 ? max : cap - 4);
  return buf;
}

const char *gr_verdict_point(const char *reasons)
{
  static const char *const headline[] = {"Predicted all-reduce bus bandwidth", "With NCCL_P2P_LEVEL="};
  static const char *const lead[] = {"Each GPU runs its own job; ", "Each GPU runs its own job. "};
  const char *s = reasons;
  for (bool again = true; again;) {
    again = false;
    for (size_t i = 0; i < sizeof(headline) / sizeof(headline[0]); i++) {
      size_t end = first_sentence(s);
      if (strncmp(s, headline[i], strlen(headline[i])) == 0 && s[end] == ' ' && s[end + 1]) {
        s += end + 1;
        again = true;
      }
    }
  }
  const char *colon = strchr(s, ':');
  if (strncmp(s, "Best group of ", 14) == 0 && colon && colon[1] == ' ')
    return colon + 2;
  for (size_t i = 0; i < sizeof(lead) / sizeof(lead[0]); i++)
    if (strncmp(s, lead[i], strlen(lead[i])) == 0)
      return s + strlen(lead[i]);
  return s;
}

/* ---- GPU ranges ---- */

const char *gr_index_ranges(const char *prefix, const int *v, size_t n, char *buf, size_t cap)
{
  size_t off = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < n && off < cap; i++) {
    size_t end = i;
    while (end + 1 < n && v[end + 1] == v[end] + 1)
      end++;
    const char *sep = i ? "," : prefix;
    if (end > i)
      off += (size_t)snprintf(buf + off, cap - off, "%s%d-%d", sep, v[i], v[end]);
    else
      off += (size_t)snprintf(buf + off, cap - off, "%s%d", sep, v[i]);
    i = end;
  }
  return buf;
}

const char *gr_gpu_ranges(const bool *in, size_t n, char *buf, size_t cap)
{
  int *v = xcalloc(n + 1, sizeof(int));
  size_t k = 0;
  for (size_t g = 0; g < n; g++)
    if (in[g])
      v[k++] = (int)g;
  if (k)
    gr_index_ranges("GPU", v, k, buf, cap);
  else
    snprintf(buf, cap, "GPU");
  free(v);
  return buf;
}

/* ---- grouped findings ---- */

/* The GPU number of the first "GPUn" word in s (-1 none) and where it is. */
static int first_gpu(const char *s, const char **at)
{
  for (const char *p = s; (p = strstr(p, "GPU")) != NULL; p += 3) {
    if (p > s && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))
      continue;
    if (!isdigit((unsigned char)p[3]))
      continue;
    *at = p;
    return atoi(p + 3);
  }
  return -1;
}

/* s with every "GPUn" made "GPU#" and every hex run made "#" (PCI
 * addresses, bus numbers): the shape two findings share when they say the
 * same of different devices. Caller frees. */
static char *shape_of(const char *s)
{
  char *out = xmalloc(strlen(s ? s : "") + 1);
  size_t o = 0;
  for (const char *p = s ? s : ""; *p;) {
    if (strncmp(p, "GPU", 3) == 0 && isdigit((unsigned char)p[3])) {
      memcpy(out + o, "GPU#", 4);
      o += 4;
      for (p += 3; isdigit((unsigned char)*p); p++) {}
    } else if (isxdigit((unsigned char)*p) && (p == s || !isalpha((unsigned char)p[-1]))) {
      const char *q = p;
      while (isxdigit((unsigned char)*q) || *q == ':' || *q == '.')
        q++;
      if (q - p >= 2 && !isalpha((unsigned char)*q)) {
        out[o++] = '#';
        p = q;
      } else {
        out[o++] = *p++;
      }
    } else {
      out[o++] = *p++;
    }
  }
  out[o] = '\0';
  return out;
}

static int sev_rank(enum gr_sev s)
{
  static const int rank[GR_SEV_COUNT] = {[GR_SEV_FAIL] = 5, [GR_SEV_WARN] = 4, [GR_SEV_ERROR] = 3,
                                          [GR_SEV_INFO] = 2, [GR_SEV_SKIPPED] = 1, [GR_SEV_OK] = 0};
  return rank[s];
}

/* The group's sentence: the first finding's, its leading "GPUn" made
 * "each" (the group's GPUs are named before it). */
static char *group_text(const struct gr_finding *f, bool gpus)
{
  const char *at = NULL;
  if (gpus && first_gpu(f->text, &at) >= 0 && at == f->text) {
    const char *rest = at + 3;
    while (isdigit((unsigned char)*rest))
      rest++;
    return xasprintf("each%s", rest);
  }
  return xstrdup(f->text);
}

static void fill_group(struct gr_finding_group *g, const struct gr_findings *fs, const bool *member)
{
  size_t n = 0;
  bool all_gpus = true;
  int max_gpu = -1;
  for (size_t i = 0; i < fs->n; i++) {
    const char *at;
    if (!member[i])
      continue;
    int gpu = first_gpu(fs->v[i].subject ? fs->v[i].subject : fs->v[i].text, &at);
    all_gpus &= gpu >= 0;
    max_gpu = gpu > max_gpu ? gpu : max_gpu;
    n++;
  }
  g->n = n;
  g->who[0] = '\0';
  if (n > 1 && all_gpus && max_gpu < 4096) {
    bool *in = xcalloc((size_t)max_gpu + 1, sizeof(bool));
    for (size_t i = 0; i < fs->n; i++) {
      const char *at;
      if (member[i])
        in[first_gpu(fs->v[i].subject ? fs->v[i].subject : fs->v[i].text, &at)] = true;
    }
    gr_gpu_ranges(in, (size_t)max_gpu + 1, g->who, sizeof(g->who));
    free(in);
  }
  const struct gr_finding *f = &fs->v[g->first];
  g->text = n > 1 ? group_text(f, g->who[0] != 0) : xstrdup(f->text);
}

size_t gr_finding_groups(const struct gr_findings *fs, struct gr_finding_group **out)
{
  char **shapes = xcalloc(fs->n + 1, sizeof(char *));
  bool *taken = xcalloc(fs->n + 1, sizeof(bool)), *member = xcalloc(fs->n + 1, sizeof(bool));
  struct gr_finding_group *g = xcalloc(fs->n + 1, sizeof(*g));
  size_t ng = 0;
  for (size_t i = 0; i < fs->n; i++) {
    char *subj = shape_of(fs->v[i].subject), *text = shape_of(fs->v[i].text);
    shapes[i] = xasprintf("%s|%s|%s", fs->v[i].id, subj, text);
    free(subj);
    free(text);
  }
  for (int rank = 5; rank >= 0; rank--) {
    for (size_t i = 0; i < fs->n; i++) {
      if (taken[i] || sev_rank(fs->v[i].sev) != rank)
        continue;
      memset(member, 0, fs->n * sizeof(bool));
      for (size_t j = i; j < fs->n; j++)
        if (!taken[j] && fs->v[j].sev == fs->v[i].sev && strcmp(shapes[j], shapes[i]) == 0)
          member[j] = taken[j] = true;
      g[ng].first = i;
      fill_group(&g[ng++], fs, member);
    }
  }
  for (size_t i = 0; i < fs->n; i++)
    free(shapes[i]);
  free(shapes);
  free(taken);
  free(member);
  *out = g;
  return ng;
}

void gr_finding_groups_free(struct gr_finding_group *g, size_t n)
{
  for (size_t i = 0; g && i < n; i++)
    free(g[i].text);
  free(g);
}

/* "GPU0-9: " or "GPU1 0000:02:00.0: " or "4x: " before a group's text. */
static void group_who(const struct gr_finding_group *g, const struct gr_finding *f, char *buf, size_t cap)
{
  if (g->who[0])
    snprintf(buf, cap, "%s: ", g->who);
  else if (g->n > 1)
    snprintf(buf, cap, "%zux: ", g->n);
  else if (f->subject)
    snprintf(buf, cap, "%s: ", f->subject);
  else
    buf[0] = '\0';
}

static size_t print_group(FILE *out, const struct gr_finding_group *g, const struct gr_finding *f,
                          const struct gr_text_style *st)
{
  char who[160], point[1024];
  size_t lines = 1;
  group_who(g, f, who, sizeof(who));
  size_t room = (size_t)st->width > 8 + gr_text_columns(who) + 20 ? (size_t)st->width - 8 - gr_text_columns(who) : 20;
  fprintf(out, "  %-4s  %s%s\n", gr_sev_name(f->sev), who,
          st->verbose ? g->text : gr_text_point(g->text, room, point, sizeof(point)));
  if (f->fix && (f->sev == GR_SEV_WARN || f->sev == GR_SEV_FAIL)) {
    room = (size_t)st->width > 13 + 20 ? (size_t)st->width - 13 : 20;
    fprintf(out, "        fix: %s\n", st->verbose ? f->fix : gr_text_fit(f->fix, room * 2, point, sizeof(point)));
    lines++;
  }
  return lines;
}

size_t gr_print_finding_groups(FILE *out, const struct gr_findings *fs, const struct gr_text_style *st, size_t max,
                               enum gr_sev min, const char *hint)
{
  struct gr_finding_group *g;
  size_t ng = gr_finding_groups(fs, &g), shown = 0, lines = 0, rest = 0;
  for (size_t i = 0; i < ng; i++) {
    const struct gr_finding *f = &fs->v[g[i].first];
    if (sev_rank(f->sev) < sev_rank(min) || (max && shown >= max)) {
      rest += g[i].n;
      continue;
    }
    lines += print_group(out, &g[i], f, st);
    shown++;
  }
  if (rest && hint) {
    fprintf(out, "  +%zu more (%s)\n", rest, hint);
    lines++;
  }
  gr_finding_groups_free(g, ng);
  return lines;
}
