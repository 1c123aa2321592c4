/* NCCL's INFO log: its channel lines, read into one line per connection. */
#include "backends/ccl/nccl_log.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LINKS 128

struct link {
  int from, to;
  char via[48];
};

static int link_cmp(const void *a, const void *b)
{
  const struct link *x = a, *y = b;
  if (x->from != y->from)
    return x->from < y->from ? -1 : 1;
  if (x->to != y->to)
    return x->to < y->to ? -1 : 1;
  return strcmp(x->via, y->via);
}

/* One log line: "... NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC",
 * "Channel 01 : 1[2000] -> 2[3000] via SHM/direct/direct", "Ring 00 : ..."
 * (NCCL 2.6 and before), or with " [send]"/" [receive]" before "via" (NET).
 * 0 when it is one. */
static int link_parse(const char *line, struct link *l)
{
  const char *p = strstr(line, " NCCL INFO Channel "), *via = strstr(line, " via ");
  int used = 0;
  if (!p)
    p = strstr(line, " NCCL INFO Ring ");
  if (!p || !via || !(p = strstr(p, " : ")) || p > via)
    return -1;
  if (sscanf(p + 3, "%d[%*[^]]] -> %d[%*[^]]]%n", &l->from, &l->to, &used) != 2 || used == 0 || l->from < 0 ||
      l->to < 0)
    return -1;
  via += 5;
  size_t n = strcspn(via, "\r\n");
  while (n > 0 && via[n - 1] == ' ')
    n--;
  if (n == 0)
    return -1;
  snprintf(l->via, sizeof(l->via), "%.*s", (int)(n < sizeof(l->via) ? n : sizeof(l->via) - 1), via);
  return 0;
}

int gr_nccl_log_links(FILE *f, char *out, size_t cap)
{
  struct link links[MAX_LINKS], l;
  int nl = 0;
  bool over = false;
  char line[512];
  if (cap)
    out[0] = '\0';
  while (fgets(line, sizeof(line), f)) {
    size_t len = strlen(line);
    bool whole = len > 0 && line[len - 1] == '\n';
    int c = 0;
    if (link_parse(line, &l) == 0) {
      bool seen = false;
      for (int k = 0; k < nl && !seen; k++)
        seen = link_cmp(&links[k], &l) == 0;
      if (!seen && nl == MAX_LINKS)
        over = true;
      else if (!seen)
        links[nl++] = l;
    }
    while (!whole && (c = fgetc(f)) != EOF && c != '\n') /* the rest of an overlong line */
      ;
  }
  qsort(links, (size_t)nl, sizeof(links[0]), link_cmp);
  size_t off = 0;
  for (int k = 0; k < nl; k++) {
    int w = snprintf(out + off, cap > off ? cap - off : 0, "%d -> %d %s\n", links[k].from, links[k].to, links[k].via);
    if (w < 0 || off + (size_t)w >= cap) {
      over = true;
      break;
    }
    off += (size_t)w;
  }
  if (over && cap)
    out[0] = '\0';
  return over ? -1 : nl;
}
