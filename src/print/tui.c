/* The terminal view of gpurig watch; see tui.h. */
#include "print/tui.h"

#include <curses.h>
#include <stddef.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/dl.h"
#include "base/util.h"
#include "print/monitor.h"

/* ncurses is opened at run time, by this view alone: linked, its two
 * libraries cost every gpurig command about 140 us of start-up (loading
 * and relocating them), more than topo's margin against lstopo on a
 * DGX-2. Types and constants come from <curses.h>, and each pointer has
 * the header's own prototype (__typeof__), so a wrong one cannot compile.
 * The macros this file uses are redefined below to go through them. */
static struct {
  __typeof__(&newterm) p_newterm;
  __typeof__(&endwin) p_endwin;
  __typeof__(&delscreen) p_delscreen;
  __typeof__(&cbreak) p_cbreak;
  __typeof__(&noecho) p_noecho;
  __typeof__(&keypad) p_keypad;
  __typeof__(&curs_set) p_curs_set;
  __typeof__(&clearok) p_clearok;
  __typeof__(&wtimeout) p_wtimeout;
  __typeof__(&wgetch) p_wgetch;
  __typeof__(&wattron) p_wattron;
  __typeof__(&wattroff) p_wattroff;
  __typeof__(&mvwaddnstr) p_mvwaddnstr;
  __typeof__(&werase) p_werase;
  __typeof__(&wrefresh) p_wrefresh;
  WINDOW **p_stdscr, **p_curscr;
  int *p_lines, *p_cols;
} nc;

#define NC_SONAME "libncursesw.so.6"

/* Opens ncurses once; false (said on stderr) where it cannot be. */
static bool nc_load(void)
{
  static int state; /* 0 not tried, 1 loaded, -1 failed */
  char why[512] = "";
  if (state)
    return state > 0;
  const struct gr_dl_sym syms[] = {
      {(void **)&nc.p_newterm, {"newterm"}, true},     {(void **)&nc.p_endwin, {"endwin"}, true},
      {(void **)&nc.p_delscreen, {"delscreen"}, true}, {(void **)&nc.p_cbreak, {"cbreak"}, true},
      {(void **)&nc.p_noecho, {"noecho"}, true},       {(void **)&nc.p_keypad, {"keypad"}, true},
      {(void **)&nc.p_curs_set, {"curs_set"}, true},   {(void **)&nc.p_clearok, {"clearok"}, true},
      {(void **)&nc.p_wtimeout, {"wtimeout"}, true},   {(void **)&nc.p_wgetch, {"wgetch"}, true},
      {(void **)&nc.p_wattron, {"wattron"}, true},     {(void **)&nc.p_wattroff, {"wattroff"}, true},
      {(void **)&nc.p_mvwaddnstr, {"mvwaddnstr"}, true}, {(void **)&nc.p_werase, {"werase"}, true},
      {(void **)&nc.p_wrefresh, {"wrefresh"}, true},   {(void **)&nc.p_stdscr, {"stdscr"}, true},
      {(void **)&nc.p_curscr, {"curscr"}, true},       {(void **)&nc.p_lines, {"LINES"}, true},
      {(void **)&nc.p_cols, {"COLS"}, true},
  };
  void *h = gr_dl_open_system(NC_SONAME, why, sizeof(why));
  state = h && gr_dl_bind(h, NC_SONAME, syms, sizeof(syms) / sizeof(syms[0]), why, sizeof(why)) == 0 ? 1 : -1;
  if (state < 0) {
    gr_diag("gpurig: watch: %s (install libncursesw6 for the terminal view)\n", why);
    gr_dl_close(h);
  }
  return state > 0;
}

#undef stdscr
#undef curscr
#undef attron
#undef attroff
#undef mvaddnstr
#undef erase
#undef refresh
#undef getch
#undef timeout
#define stdscr (*nc.p_stdscr)
#define curscr (*nc.p_curscr)
#define LINES (*nc.p_lines)
#define COLS (*nc.p_cols)
#define newterm nc.p_newterm
#define endwin nc.p_endwin
#define delscreen nc.p_delscreen
#define cbreak nc.p_cbreak
#define noecho nc.p_noecho
#define keypad nc.p_keypad
#define curs_set nc.p_curs_set
#define clearok nc.p_clearok
#define attron(a) nc.p_wattron(stdscr, (a))
#define attroff(a) nc.p_wattroff(stdscr, (a))
#define mvaddnstr(y, x, str, n) nc.p_mvwaddnstr(stdscr, (y), (x), (str), (n))
#define erase() nc.p_werase(stdscr)
#define refresh() nc.p_wrefresh(stdscr)
#define getch() nc.p_wgetch(stdscr)
#define timeout(ms) nc.p_wtimeout(stdscr, (ms))

struct gr_tui {
  SCREEN *scr;
  FILE *out, *in; /* the terminal itself: stdout is behind gpurig's control-character filter */
};

static volatile sig_atomic_t tui_active;

static void restore_terminal(void)
{
  if (tui_active) {
    tui_active = 0;
    endwin();
  }
}

/* A crash must not leave the terminal in raw mode: restore, then die as
 * the signal asks. */
static void on_fatal(int sig)
{
  restore_terminal();
  signal(sig, SIG_DFL);
  raise(sig);
}

struct gr_tui *gr_tui_open(void)
{
  static bool hooked;
  const char *term = getenv("TERM");
  if (!term || !*term || !nc_load())
    return NULL;
  int ofd = dup(STDOUT_FILENO), ifd = dup(STDIN_FILENO);
  FILE *out = ofd >= 0 ? fdopen(ofd, "w") : NULL, *in = ifd >= 0 ? fdopen(ifd, "r") : NULL;
  SCREEN *scr = out && in ? newterm(NULL, out, in) : NULL;
  if (!scr) {
    if (out)
      fclose(out);
    else if (ofd >= 0)
      close(ofd);
    if (in)
      fclose(in);
    else if (ifd >= 0)
      close(ifd);
    return NULL;
  }
  struct gr_tui *t = xcalloc(1, sizeof(*t));
  t->scr = scr;
  t->out = out;
  t->in = in;
  tui_active = 1;
  if (!hooked) {
    hooked = true;
    atexit(restore_terminal);
    int fatal[] = {SIGSEGV, SIGABRT, SIGBUS, SIGFPE};
    for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
      signal(fatal[i], on_fatal);
  }
  cbreak();
  noecho();
  keypad(stdscr, TRUE);
  curs_set(0);
  return t;
}

void gr_tui_close(struct gr_tui *t)
{
  restore_terminal();
  if (t) {
    delscreen(t->scr);
    fclose(t->out);
    fclose(t->in);
    free(t);
  }
}

int gr_tui_key(struct gr_tui *t, int timeout_ms)
{
  (void)t;
  timeout(timeout_ms);
  int k = getch();
  if (k == KEY_RESIZE) /* the next draw repaints every cell: nothing of the old size stays */
    clearok(curscr, TRUE);
  return k == ERR ? -1 : k;
}

const char *gr_tui_sort_name(enum gr_tui_sort s)
{
  static const char *const names[] = {"index", "utilisation", "temperature", "power"};
  return s < GR_SORT_COUNT ? names[s] : "index";
}

/* ------------------------------------------------------------ drawing */

struct sort_ctx {
  const struct gr_sample *x;
  enum gr_tui_sort by;
};
static struct sort_ctx sort_ctx; /* qsort has no context argument; the view draws on one thread */

static double sort_key(unsigned i)
{
  const struct gr_gpu_dynamic *d = &sort_ctx.x->gpu[i];
  struct gr_metric m = sort_ctx.by == GR_SORT_UTIL ? d->util_gpu_pct : sort_ctx.by == GR_SORT_TEMP ? d->temp_c : d->power_w;
  return m.ok ? m.v : -1;
}

static int cmp_gpu(const void *pa, const void *pb)
{
  unsigned a = *(const unsigned *)pa, b = *(const unsigned *)pb;
  if (sort_ctx.by != GR_SORT_INDEX) {
    double ka = sort_key(a), kb = sort_key(b);
    if (ka != kb)
      return ka < kb ? 1 : -1;
  }
  return a < b ? -1 : a > b;
}

/* The last width samples of one GPU's utilisation as an ASCII ramp, the
 * newest at the right; ' ' where unknown. */
static void sparkline(const struct gr_sampler *s, unsigned gpu, char *out, int width)
{
  static const char ramp[] = "_.-:=+*#@";
  for (int c = 0; c < width; c++) {
    const struct gr_sample *x = gr_sampler_sample(s, (unsigned)(width - 1 - c));
    const struct gr_metric *m = x && gpu < x->ngpu ? &x->gpu[gpu].util_gpu_pct : NULL;
    out[c] = m && m->ok && x->gpu_read[gpu] != GR_READ_LOST ? ramp[(int)(m->v / 100.0 * 8 + 0.5) % 9] : ' ';
  }
  out[width] = '\0';
}

static void metric(char *buf, size_t cap, struct gr_metric m, const char *fmt)
{
  if (m.ok)
    snprintf(buf, cap, fmt, m.v);
  else
    snprintf(buf, cap, "-");
}

/* One screen line, cut at the terminal's width: ncurses wraps a longer one
 * onto the next row, where its tail would stay behind as a fragment once
 * the view is redrawn narrower. Text from inputs is shown with its control
 * characters escaped (a newline would move the cursor). */
static void put_line(int row, int attr, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void put_line(int row, int attr, const char *fmt, ...)
{
  char text[1024], shown[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof(text), fmt, ap);
  va_end(ap);
  if (row < 0 || row >= LINES || COLS < 1)
    return;
  attron(attr);
  mvaddnstr(row, 0, gr_shown(text, shown, sizeof(shown)), COLS - (row == LINES - 1)); /* the corner would scroll */
  attroff(attr);
}

/* The GPU table's columns, left to right. A narrow terminal drops columns
 * by priority (prio: 0 kept longest): what a riser hunter needs (the link,
 * its replays, the throttle reasons) goes last, the clocks and memory
 * first. The throttle column is last and takes the width left, at least
 * its own. docs/monitor.md lists the order. */
enum col { C_GPU, C_BUS, C_STATE, C_UTIL, C_MEM, C_POWER, C_TEMP, C_MEMT, C_SM, C_MEMCLK, C_PCIE, C_LINK, C_REPLAY,
           C_THROTTLE, NCOL };
static const struct column {
  const char *head;
  int width, prio;
  bool right;
} columns[NCOL] = {
    [C_GPU] = {"GPU", 3, 0, false},        [C_BUS] = {"bus id", 12, 6, false},
    [C_STATE] = {"state", 5, 1, false},    [C_UTIL] = {"util", 4, 4, true},
    [C_MEM] = {"mem GiB", 10, 10, true},   [C_POWER] = {"power W", 9, 8, true},
    [C_TEMP] = {"temp", 4, 7, true},       [C_MEMT] = {"memT", 4, 13, true},
    [C_SM] = {"sm", 4, 11, true},          [C_MEMCLK] = {"memclk", 6, 12, true},
    [C_PCIE] = {"pcie rx/tx", 11, 9, true}, [C_LINK] = {"link", 11, 2, false},
    [C_REPLAY] = {"replays", 12, 3, false}, [C_THROTTLE] = {"throttle", 14, 5, false},
};

/* Which columns fit width: taken in priority order, each with the space
 * before it, until one does not fit; none after it is taken either (a
 * narrow clock column never stands where the power column did not fit). */
static void fit_columns(int width, bool shown[NCOL])
{
  int used = 0;
  bool full = false;
  for (int prio = 0; prio < NCOL; prio++)
    for (int c = 0; c < NCOL; c++)
      if (columns[c].prio == prio) {
        int need = columns[c].width + (used ? 1 : 0);
        full = full || used + need > width;
        shown[c] = !full;
        if (shown[c])
          used += need;
      }
}

/* The table's line from its cells, the shown columns only; the throttle
 * column gets what is left of width. */
static void table_line(char cells[NCOL][64], const bool shown[NCOL], int width, char *out, size_t cap)
{
  size_t used = 0;
  for (int c = 0; c < NCOL && used + 1 < cap; c++) {
    if (!shown[c])
      continue;
    int w = c == C_THROTTLE ? width - (int)used - (used ? 1 : 0) : columns[c].width;
    if (w < 1)
      break;
    int n = snprintf(out + used, cap - used, columns[c].right ? "%s%*.*s" : "%s%-*.*s", used ? " " : "", w, w,
                     cells[c]);
    if (n < 0 || (size_t)n >= cap - used)
      break;
    used += (size_t)n;
  }
  while (used > 0 && out[used - 1] == ' ')
    used--;
  out[used] = '\0';
}

static void gpu_cells(const struct gr_sampler *s, const struct gr_sample *x, unsigned i, char cells[NCOL][64])
{
  const struct gr_gpu_dynamic *d = &x->gpu[i];
  const struct gr_gpu_static *st = gr_sampler_gpu_static(s, i);
  char a[12], b[12], c[12], e[12], thr[128];
  snprintf(cells[C_GPU], 64, "%u", i);
  snprintf(cells[C_BUS], 64, "%s", st->busid[0] ? st->busid : "?");
  snprintf(cells[C_STATE], 64, "%s", gr_gpu_state_text(s, x, i));
  metric(cells[C_UTIL], 64, d->util_gpu_pct, "%.0f%%");
  metric(a, sizeof(a), d->mem_used_gib, "%.1f"), metric(b, sizeof(b), st->mem_gib, "%.0f");
  snprintf(cells[C_MEM], 64, "%s/%s", a, b);
  metric(a, sizeof(a), d->power_w, "%.0f"), metric(b, sizeof(b), d->power_limit_w, "%.0f");
  snprintf(cells[C_POWER], 64, "%s/%s", a, b);
  metric(cells[C_TEMP], 64, d->temp_c, "%.0fC");
  metric(cells[C_MEMT], 64, d->mem_temp_c, "%.0fC");
  metric(cells[C_SM], 64, d->sm_clock_mhz, "%.0f");
  metric(cells[C_MEMCLK], 64, d->mem_clock_mhz, "%.0f");
  metric(a, sizeof(a), d->pcie_rx_gbps, "%.1f"), metric(b, sizeof(b), d->pcie_tx_gbps, "%.1f");
  snprintf(cells[C_PCIE], 64, "%s/%s", a, b);
  metric(a, sizeof(a), d->link_gen, "%.0f"), metric(b, sizeof(b), st->max_link_gen, "%.0f");
  metric(c, sizeof(c), d->link_width, "%.0f"), metric(e, sizeof(e), st->max_link_width, "%.0f");
  snprintf(cells[C_LINK], 64, "G%s/%s x%s/%s", a, b, c, e);
  struct gr_metric per_s = gr_sampler_gpu_rate(s, i, offsetof(struct gr_gpu_dynamic, pcie_replay), 1);
  if (d->pcie_replay.ok && per_s.ok)
    snprintf(cells[C_REPLAY], 64, "%.0f +%.0f/min", d->pcie_replay.v, per_s.v * 60);
  else
    metric(cells[C_REPLAY], 64, d->pcie_replay, "%.0f");
  snprintf(cells[C_THROTTLE], 64, "%s", gr_throttle_text(d->throttle, thr, sizeof(thr)));
}

static int draw_gpus(const struct gr_sampler *s, const struct gr_sample *x, const struct gr_tui_view *v, int row)
{
  unsigned order[x->ngpu + 1];
  for (unsigned i = 0; i < x->ngpu; i++)
    order[i] = i;
  sort_ctx = (struct sort_ctx){x, v->sort};
  qsort(order, x->ngpu, sizeof(order[0]), cmp_gpu);
  bool shown[NCOL];
  char cells[NCOL][64], line[512];
  fit_columns(COLS, shown);
  for (int c = 0; c < NCOL; c++)
    snprintf(cells[c], sizeof(cells[c]), "%s", columns[c].head);
  table_line(cells, shown, COLS, line, sizeof(line));
  put_line(row++, A_BOLD, "%s", line);
  for (unsigned k = 0; k < x->ngpu && row < LINES - 6; k++) {
    unsigned i = order[k];
    gpu_cells(s, x, i, cells);
    table_line(cells, shown, COLS, line, sizeof(line));
    bool slow = x->gpu_read[i] == GR_READ_FRESH && gr_sampler_gpu_below_max(s, i, NULL, 0);
    put_line(row++, x->gpu_read[i] != GR_READ_FRESH ? A_REVERSE : slow ? A_BOLD : A_NORMAL, "%s", line);
  }
  return row;
}

static int draw_history(const struct gr_sampler *s, const struct gr_sample *x, const struct gr_tui_view *v, int row)
{
  int width = COLS - 12;
  if (width < 10 || row >= LINES - 6)
    return row;
  if (width > 240)
    width = 240;
  char line[256];
  put_line(row++, A_NORMAL, "utilisation, the last %.0f s (newest right):", width * v->interval_s);
  for (unsigned i = 0; i < x->ngpu && row < LINES - 5; i++) {
    sparkline(s, i, line, width);
    put_line(row++, A_NORMAL, "GPU%-3u [%s]", i, line);
  }
  return row;
}

/* A link's AER line: in full where it fits, else the short form that keeps
 * the slot, the end and the counts (the bus ids are in the GPU table). */
static void link_line(const struct gr_mon_link *l, int end, const char *sev, struct gr_aer_window w, char *out,
                      size_t cap)
{
  unsigned long long m = w.minute.value, since = w.since.value, total = w.last.value;
  int n = snprintf(out, cap, "LINK %s <-> %s%s%s  AER %s at %s: +%llu last min, +%llu since start, %llu total",
                   l->dev_name, l->port_name, l->slot[0] ? " slot " : "", l->slot, sev,
                   end == 0 ? l->dev_name : l->port_name, m, since, total);
  if (n >= 0 && n <= COLS)
    return;
  char who[16], port[32];
  snprintf(who, sizeof(who), "%.*s", (int)strcspn(l->dev_name, " "), l->dev_name); /* "GPU1" */
  const char *bus = strrchr(l->port_name, ' ');                                  /* "root port" */
  snprintf(port, sizeof(port), "%.*s", bus ? (int)(bus - l->port_name) : (int)strlen(l->port_name), l->port_name);
  snprintf(out, cap, "LINK %s%s%s: AER %s at %s: +%llu/min, +%llu since start, %llu total", who,
           l->slot[0] ? " slot " : "", l->slot, sev, end == 0 ? who : port, m, since, total);
}

static int draw_links(const struct gr_sampler *s, int row)
{
  static const char *const sev[] = {"corr", "nonfatal", "fatal"};
  char line[512];
  for (size_t i = 0; i < gr_sampler_nlinks(s) && row < LINES - 4; i++) {
    const struct gr_mon_link *l = gr_sampler_link(s, i);
    for (int end = 0; end < 2; end++)
      for (int k = 0; k < 3; k++) {
        struct gr_aer_window w = gr_sampler_link_aer(s, i, end, k);
        if (!w.last.valid || w.last.value == 0 || row >= LINES - 4)
          continue;
        link_line(l, end, sev[k], w, line, sizeof(line));
        put_line(row++, w.minute.value ? A_BOLD : A_NORMAL, "%s", line);
      }
  }
  return row;
}

/* An event's lines: its time and severity, then the text wrapped at words
 * to the width, each further line indented under the text. Returns how
 * many lines it takes (drawing them from row when draw). */
enum { EVENT_INDENT = 14 }; /* "12:34:56 warn " */
static int event_lines(const char *head, const char *text, int row, bool draw)
{
  int width = COLS - EVENT_INDENT, lines = 0;
  if (width < 10)
    width = 10;
  const char *p = text;
  do {
    int n = (int)strlen(p);
    if (n > width) { /* break at the last space that fits, else mid-word */
      int cut = width;
      while (cut > width / 2 && p[cut] != ' ')
        cut--;
      n = p[cut] == ' ' ? cut : width;
    }
    if (draw)
      put_line(row + lines, A_NORMAL, "%-*s%.*s", EVENT_INDENT, lines ? "" : head, n, p);
    lines++;
    p += n;
    while (*p == ' ')
      p++;
  } while (*p);
  return lines;
}

static void draw_events(const struct gr_sampler *s, int row)
{
  unsigned long n = gr_sampler_nevents(s);
  int room = LINES - 1 - row;
  if (room < 2)
    return;
  put_line(row++, A_NORMAL, "events (%lu):", n);
  room--;
  /* the newest that fit, oldest first */
  unsigned long from = n;
  int need = 0;
  char shown[600];
  while (from > 0) {
    const struct gr_mon_event *e = gr_sampler_event(s, from - 1);
    int k = e ? event_lines("", gr_shown(e->f.text, shown, sizeof(shown)), 0, false) : 0;
    if (!e || need + k > room)
      break;
    need += k;
    from--;
  }
  for (unsigned long k = from; k < n && row < LINES - 1; k++) {
    const struct gr_mon_event *e = gr_sampler_event(s, k);
    if (!e)
      continue;
    char head[32], ts[16];
    time_t tt = (time_t)e->real_s;
    struct tm tm;
    localtime_r(&tt, &tm);
    strftime(ts, sizeof(ts), "%H:%M:%S", &tm);
    snprintf(head, sizeof(head), "%s %-4s", ts, gr_sev_name(e->f.sev));
    row += event_lines(head, gr_shown(e->f.text, shown, sizeof(shown)), row, true);
  }
}

void gr_tui_draw(struct gr_tui *t, const struct gr_sampler *s, const struct gr_tui_view *v)
{
  (void)t;
  erase();
  const struct gr_sample *x = gr_sampler_sample(s, 0);
  put_line(0, A_BOLD, "gpurig watch  %u GPU(s)  %zu PCIe link(s)  every %.1f s  sort: %s%s", gr_sampler_ngpu(s),
           gr_sampler_nlinks(s), v->interval_s, gr_tui_sort_name(v->sort), v->paused ? "  PAUSED" : "");
  put_line(1, A_NORMAL, "Xids from %s", gr_sampler_xid_source(s));
  int row = 3;
  if (x) {
    row = draw_gpus(s, x, v, row) + 1;
    row = draw_links(s, row);
    row = draw_history(s, x, v, row + 1) + 1;
  }
  draw_events(s, row);
  put_line(LINES - 1, A_NORMAL, "q quit  s sort  p pause");
  refresh();
}
