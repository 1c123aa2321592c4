#include "facts/data.h"

#include "base/file.h"

#include "facts/facts.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void gr_table_free(struct gr_table *t)
{
  if (!t)
    return;
  free(t->text);
  free(t->cols);
  free(t->cells);
  free(t->lines);
  free(t->name);
  memset(t, 0, sizeof(*t));
}

/* Cuts one line of the table's own copy in place into its tab-separated
 * fields (cap of them: fields_in counted them first), each trimmed of
 * trailing spaces and CRs and NUL-terminated (the byte after the line, its
 * newline or the copy's final NUL, ends the last), into f. */
static void cut_fields(char *line, size_t len, char **f, size_t cap)
{
  /* memchr to each tab: every table is parsed on every run that needs it,
   * and its source columns are long (a byte-by-byte scan was 4% of topo on a
   * DGX-2) */
  size_t k = 0, start = 0;
  while (k < cap && start <= len) {
    const char *tab = memchr(line + start, '\t', len - start);
    size_t i = tab ? (size_t)(tab - line) : len, e = i;
    while (e > start && (line[e - 1] == ' ' || line[e - 1] == '\r'))
      e--;
    line[e] = '\0';
    f[k++] = line + start;
    start = i + 1;
  }
}

/* Whether a line is blank or a comment. */
static bool skipped(const char *line, size_t len)
{
  size_t s = 0;
  while (s < len && (line[s] == ' ' || line[s] == '\r'))
    s++;
  return s == len || line[s] == '#';
}

static size_t fields_in(const char *line, size_t len)
{
  size_t tabs = 0;
  for (const char *p = line, *end = line + len; (p = memchr(p, '\t', (size_t)(end - p))); p++)
    tabs++;
  return tabs + 1;
}

/* One row line into t: its fields go straight into the cells. */
static int add_row(struct gr_table *t, char *line, size_t len, size_t lineno, size_t *cap_rows, struct gr_err *err)
{
  size_t n = fields_in(line, len);
  if (n != t->ncols)
    return gr_fail(err, GR_EXIT_FAIL, "%s:%zu: %zu fields, expected %zu (tab-separated, as in the header)", t->name,
                   lineno, n, t->ncols);
  if (t->nrows + 1 > *cap_rows) {
    *cap_rows = *cap_rows ? *cap_rows * 2 : 16;
    t->cells = xrealloc(t->cells, *cap_rows * t->ncols * sizeof(char *));
    t->lines = xrealloc(t->lines, *cap_rows * sizeof(size_t));
  }
  cut_fields(line, len, t->cells + t->nrows * t->ncols, t->ncols);
  t->lines[t->nrows++] = lineno;
  return 0;
}

int gr_table_parse(const char *name, const char *buf, size_t len, struct gr_table *t,
                   struct gr_err *err)
{
  size_t cap_rows = 0, lineno = 0, pos = 0, llen;
  memset(t, 0, sizeof(*t));
  t->name = xstrdup(name);
  t->text = xmalloc(len + 1);
  memcpy(t->text, buf, len);
  t->text[len] = '\0';
  char *line;
  while ((line = (char *)next_line(t->text, len, &pos, &llen))) {
    lineno++;
    if (memchr(line, '\0', llen)) {
      gr_fail(err, GR_EXIT_FAIL, "%s:%zu: binary data (NUL byte) in a text table", name, lineno);
      goto fail;
    }
    if (skipped(line, llen))
      continue;
    if (!t->cols) {
      t->ncols = fields_in(line, llen);
      t->cols = xcalloc(t->ncols, sizeof(char *));
      cut_fields(line, llen, t->cols, t->ncols);
    } else if (add_row(t, line, llen, lineno, &cap_rows, err) != 0) {
      goto fail;
    }
  }
  if (t->cols)
    return 0;
  gr_fail(err, GR_EXIT_FAIL, "%s:%zu: no header line (empty table)", name, lineno);
fail:
  gr_table_free(t);
  return -1;
}

int gr_table_load(const char *dir, const char *rel, struct gr_table *t, struct gr_err *err)
{
  char path[PATH_MAX];
  struct gr_file f;
  int rc = -1;
  memset(t, 0, sizeof(*t));
  int n = snprintf(path, sizeof(path), "%s/%s", dir, rel);
  if (n < 0 || (size_t)n >= sizeof(path))
    return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s: data path too long", rel);
  if (gr_file_read(path, 64u << 20, 0, &f, err) != 0) {
    if (err) { /* our own data is missing or broken: not the user's input */
      size_t used = strlen(err->msg);
      snprintf(err->msg + used, sizeof(err->msg) - used, " (set GPURIG_DATA to gpurig's data/ directory)");
      err->code = GR_EXIT_CANNOT_RUN;
    }
    return -1;
  }
  rc = gr_table_parse(path, f.data, f.len, t, err);
  if (rc != 0 && err)
    err->code = GR_EXIT_CANNOT_RUN;
  gr_file_free(&f);
  return rc;
}

int gr_table_col(const struct gr_table *t, const char *name)
{
  for (size_t i = 0; i < t->ncols; i++)
    if (strcmp(t->cols[i], name) == 0)
      return (int)i;
  return -1;
}

const char *gr_table_cell(const struct gr_table *t, size_t row, size_t col)
{
  return t->cells[row * t->ncols + col];
}

static bool is_dir(const char *p)
{
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

void gr_data_dir_find(char *dir, size_t cap)
{
  const char *env = getenv("GPURIG_DATA");
  if (env && *env) {
    snprintf(dir, cap, "%s", env);
    return;
  }
  /* The tool's own location, not the inspected machine's: no root prefix. */
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) {
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash) {
      *slash = '\0';
      const char *cands[] = {"%s/../share/gpurig", "%s/../data", "%s/data"};
      for (size_t i = 0; i < sizeof(cands) / sizeof(cands[0]); i++) {
        char p[PATH_MAX + 32];
        snprintf(p, sizeof(p), cands[i], exe);
        char probe[PATH_MAX + 64];
        snprintf(probe, sizeof(probe), "%s/pcie-links.tsv", p);
        char real[PATH_MAX];
        if (access(probe, R_OK) == 0 && realpath(p, real)) {
          snprintf(dir, cap, "%s", real);
          return;
        }
      }
    }
  }
  snprintf(dir, cap, "%s", is_dir(GPURIG_SOURCE_DATADIR) ? GPURIG_SOURCE_DATADIR : GPURIG_DATADIR);
}

char *gr_data_path(const char *rel, char *buf, size_t cap)
{
  int n = snprintf(buf, cap, "%s/%s", gr_data_dir(), rel);
  if (n < 0 || (size_t)n >= cap)
    return NULL;
  return buf;
}

int gr_data_list(const char *subdir, const char *suffix, char ***names, size_t *n, struct gr_err *err)
{
  char dir[PATH_MAX];
  struct dirent **ents;
  *names = NULL;
  *n = 0;
  if (!gr_data_path(subdir, dir, sizeof(dir)))
    return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s: data path too long", subdir);
  int count = scandir(dir, &ents, NULL, alphasort);
  if (count < 0)
    return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s: cannot list: %s", dir, strerror(errno));
  size_t slen = strlen(suffix);
  *names = xcalloc((size_t)count + 1, sizeof(char *));
  for (int i = 0; i < count; i++) {
    size_t len = strlen(ents[i]->d_name);
    if (len > slen && strcmp(ents[i]->d_name + len - slen, suffix) == 0)
      (*names)[(*n)++] = xstrndup(ents[i]->d_name, len - slen);
    free(ents[i]);
  }
  free(ents);
  return 0;
}
