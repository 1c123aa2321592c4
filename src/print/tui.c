/* The terminal view of gpurig watch; see tui.h. */
#include "print/tui.h"

#include <curses.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "print/monitor.h"

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
  if (!term || !*term)
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

static int draw_gpus(const struct gr_sampler *s, const struct gr_sample *x, const struct gr_tui_view *v, int row)
{
  unsigned order[x->ngpu + 1];
  for (unsigned i = 0; i < x->ngpu; i++)
    order[i] = i;
  sort_ctx = (struct sort_ctx){x, v->sort};
  qsort(order, x->ngpu, sizeof(order[0]), cmp_gpu);
  attron(A_BOLD);
  mvprintw(row++, 0, "%-4s %-13s %-5s %4s %11s %11s %4s %4s %5s %5s %11s %-12s %-12s %s", "GPU", "bus id", "state",
           "util", "mem GiB", "power W", "temp", "mem", "sm", "memclk", "pcie rx/tx", "link", "replays", "throttle");
  attroff(A_BOLD);
  for (unsigned k = 0; k < x->ngpu && row < LINES - 6; k++) {
    unsigned i = order[k];
    const struct gr_gpu_dynamic *d = &x->gpu[i];
    const struct gr_gpu_static *st = gr_sampler_gpu_static(s, i);
    char util[16], mu[16], mt[16], pw[16], pl[16], tc[16], mtc[16], sm[16], mc[16], rx[16], tx[16], lg[8], lw[8], thr[128];
    metric(util, sizeof(util), d->util_gpu_pct, "%.0f%%");
    metric(mu, sizeof(mu), d->mem_used_gib, "%.1f");
    metric(mt, sizeof(mt), st->mem_gib, "%.0f");
    metric(pw, sizeof(pw), d->power_w, "%.0f");
    metric(pl, sizeof(pl), d->power_limit_w, "%.0f");
    metric(tc, sizeof(tc), d->temp_c, "%.0fC");
    metric(mtc, sizeof(mtc), d->mem_temp_c, "%.0fC");
    metric(sm, sizeof(sm), d->sm_clock_mhz, "%.0f");
    metric(mc, sizeof(mc), d->mem_clock_mhz, "%.0f");
    metric(rx, sizeof(rx), d->pcie_rx_gbps, "%.1f");
    metric(tx, sizeof(tx), d->pcie_tx_gbps, "%.1f");
    metric(lg, sizeof(lg), d->link_gen, "%.0f");
    metric(lw, sizeof(lw), d->link_width, "%.0f");
    char link[64], maxg[8], maxw[8];
    metric(maxg, sizeof(maxg), st->max_link_gen, "%.0f");
    metric(maxw, sizeof(maxw), st->max_link_width, "%.0f");
    snprintf(link, sizeof(link), "G%s/%s x%s/%s", lg, maxg, lw, maxw);
    bool bad = x->gpu_read[i] != GR_READ_FRESH;
    if (bad)
      attron(A_REVERSE);
    char rep[32];
    struct gr_metric per_s = gr_sampler_gpu_rate(s, i, offsetof(struct gr_gpu_dynamic, pcie_replay), 1);
    if (d->pcie_replay.ok && per_s.ok)
      snprintf(rep, sizeof(rep), "%.0f +%.0f/min", d->pcie_replay.v, per_s.v * 60);
    else
      metric(rep, sizeof(rep), d->pcie_replay, "%.0f");
    mvprintw(row++, 0, "%-4u %-13.13s %-5s %4s %5s/%-5s %5s/%-5s %4s %4s %5s %5s %5s/%-5s %-12s %-12s %s", i,
             st->busid[0] ? st->busid : "?", x->gpu_read[i] == GR_READ_FRESH ? "ok"
                                              : x->gpu_read[i] == GR_READ_STALE ? "STALE" : "LOST",
             util, mu, mt, pw, pl, tc, mtc, sm, mc, rx, tx, link, rep, gr_throttle_text(d->throttle, thr, sizeof(thr)));
    if (bad)
      attroff(A_REVERSE);
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
  mvprintw(row++, 0, "utilisation, the last %.0f s (newest right):", width * v->interval_s);
  for (unsigned i = 0; i < x->ngpu && row < LINES - 5; i++) {
    sparkline(s, i, line, width);
    mvprintw(row++, 0, "GPU%-3u [%s]", i, line);
  }
  return row;
}

static int draw_links(const struct gr_sampler *s, int row)
{
  static const char *const sev[] = {"corr", "nonfatal", "fatal"};
  for (size_t i = 0; i < gr_sampler_nlinks(s) && row < LINES - 4; i++) {
    const struct gr_mon_link *l = gr_sampler_link(s, i);
    for (int end = 0; end < 2; end++)
      for (int k = 0; k < 3; k++) {
        struct gr_aer_window w = gr_sampler_link_aer(s, i, end, k);
        if (!w.last.valid || w.last.value == 0 || row >= LINES - 4)
          continue;
        attron(w.minute.value ? A_BOLD : A_NORMAL);
        mvprintw(row++, 0, "LINK %s <-> %s%s%s  AER %s at %s: +%llu last min, +%llu since start, %llu total", l->dev_name,
                 l->port_name, l->slot[0] ? " slot " : "", l->slot, sev[k], end == 0 ? l->dev_name : l->port_name,
                 (unsigned long long)w.minute.value, (unsigned long long)w.since.value,
                 (unsigned long long)w.last.value);
        attroff(A_BOLD);
      }
  }
  return row;
}

static void draw_events(const struct gr_sampler *s, int row)
{
  unsigned long n = gr_sampler_nevents(s);
  int room = LINES - 1 - row;
  if (room < 2)
    return;
  mvprintw(row++, 0, "events (%lu):", n);
  unsigned long from = n > (unsigned long)(room - 1) ? n - (unsigned long)(room - 1) : 0;
  for (unsigned long k = from; k < n && row < LINES - 1; k++) {
    const struct gr_mon_event *e = gr_sampler_event(s, k);
    if (!e)
      continue;
    char ts[16];
    time_t tt = (time_t)e->real_s;
    struct tm tm;
    localtime_r(&tt, &tm);
    strftime(ts, sizeof(ts), "%H:%M:%S", &tm);
    mvprintw(row++, 0, "%s %-4s %s", ts, gr_sev_name(e->f.sev), e->f.text);
  }
}

void gr_tui_draw(struct gr_tui *t, const struct gr_sampler *s, const struct gr_tui_view *v)
{
  (void)t;
  erase();
  const struct gr_sample *x = gr_sampler_sample(s, 0);
  attron(A_BOLD);
  mvprintw(0, 0, "gpurig watch  %u GPU(s)  %zu PCIe link(s)  every %.1f s  sort: %s%s", gr_sampler_ngpu(s),
           gr_sampler_nlinks(s), v->interval_s, gr_tui_sort_name(v->sort), v->paused ? "  PAUSED" : "");
  attroff(A_BOLD);
  mvprintw(1, 0, "Xids from %s", gr_sampler_xid_source(s));
  int row = 3;
  if (x) {
    row = draw_gpus(s, x, v, row) + 1;
    row = draw_links(s, row);
    row = draw_history(s, x, v, row + 1) + 1;
  }
  draw_events(s, row);
  mvprintw(LINES - 1, 0, "q quit  s sort  p pause");
  refresh();
}
