/* The terminal-safe stdout and stderr; see term.h for why. */
#include "base/term.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

static size_t put_escape(char *dst, const char *fmt, unsigned v)
{
  char tmp[8];
  int n = snprintf(tmp, sizeof(tmp), fmt, v);
  memcpy(dst, tmp, (size_t)n);
  return (size_t)n;
}

/* A byte gr_term_escape passes as it is: printable ASCII, newline, tab, and
 * bytes of UTF-8 sequences other than a C1 control's lead 0xC2. */
static bool plain_byte(unsigned char ch)
{
  return (ch >= 0x20 && ch < 0x7f) || ch == '\n' || ch == '\t' || (ch >= 0x80 && ch != 0xc2);
}

size_t gr_term_escape(const char *src, size_t n, char *dst, size_t cap, int *c1_lead)
{
  size_t out = 0;
  for (size_t i = 0; i < n && out + 12 <= cap; i++) {
    if (!*c1_lead) { /* a run of bytes that pass unchanged, copied at once */
      size_t j = i, room = cap - 12 - out;
      while (j < n && j - i < room && plain_byte((unsigned char)src[j]))
        j++;
      memcpy(dst + out, src + i, j - i);
      out += j - i;
      i = j;
      if (i >= n || out + 12 > cap)
        break;
    }
    unsigned char ch = (unsigned char)src[i];
    if (*c1_lead) { /* the byte after a held-back 0xC2 */
      *c1_lead = 0;
      if (ch >= 0x80 && ch <= 0x9f) {
        out += put_escape(dst + out, "\\u%04x", ch);
        continue;
      }
      dst[out++] = (char)0xc2;
    }
    if (ch == 0xc2) {
      *c1_lead = 1;
    } else if ((ch < 0x20 && ch != '\n' && ch != '\t') || ch == 0x7f) {
      out += put_escape(dst + out, "\\x%02x", ch);
    } else {
      dst[out++] = (char)ch;
    }
  }
  return out;
}

/* One filtered stream: the descriptor it writes to, and a 0xC2 held back
 * between writes (a C1 control may be split across two). */
struct filtered {
  int fd;
  int c1_lead;
};

static int write_all(int fd, const char *p, size_t n)
{
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w < 0)
      return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

static ssize_t filtered_write(void *cookie, const char *buf, size_t n)
{
  struct filtered *f = cookie;
  char out[4096];
  size_t done = 0;
  while (done < n) {
    size_t chunk = n - done < 512 ? n - done : 512; /* 512 bytes escape to at most 3072 */
    size_t m = gr_term_escape(buf + done, chunk, out, sizeof(out), &f->c1_lead);
    if (write_all(f->fd, out, m) != 0)
      return -1;
    done += chunk;
  }
  return (ssize_t)n;
}

static int filtered_close(void *cookie)
{
  struct filtered *f = cookie;
  if (f->c1_lead && write_all(f->fd, "\xc2", 1) != 0)
    return -1;
  return close(f->fd);
}

void gr_term_status_line(const char *text)
{
  char out[1024];
  int lead = 0;
  fflush(stderr); /* what was printed before stays before */
  out[0] = '\r';
  size_t n = 1;
  if (text) {
    n += gr_term_escape(text, strnlen(text, 160), out + 1, sizeof(out) - 2, &lead);
  } else {
    memset(out + 1, ' ', 80);
    out[81] = '\r';
    n = 82;
  }
  (void)write_all(STDERR_FILENO, out, n); /* a lost progress line is not worth an error */
}

/* The two streams live as long as the process. */
static struct filtered out_cookie = {.fd = STDOUT_FILENO}, err_cookie = {.fd = STDERR_FILENO};
/* The C library's own streams the filter replaced, NULL before it did. */
static FILE *orig_out, *orig_err;

/* A standard descriptor that was closed (`gpurig ... >&-`) is taken by
 * /dev/null opened read-only: no file gpurig opens later (an input, the
 * writer's temporary file) can become fd 1 and receive the output, and a
 * write to it still fails (EBADF) as it would have on the closed one. */
static void hold_closed_std_fds(void)
{
  for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++) {
    if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
      continue;
    int nul = open("/dev/null", O_RDONLY | O_NOCTTY);
    if (nul >= 0 && nul != fd) {
      dup2(nul, fd);
      close(nul);
    }
  }
}

int gr_term_filter_stdio(void)
{
  hold_closed_std_fds();
  cookie_io_functions_t io = {.write = filtered_write, .close = filtered_close};
  FILE *out = fopencookie(&out_cookie, "w", io);
  FILE *err = fopencookie(&err_cookie, "w", io);
  if (!out || !err) {
    if (out)
      fclose(out);
    if (err)
      fclose(err);
    return -1;
  }
  /* the buffering the real streams would have had */
  setvbuf(out, NULL, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF, 0);
  setvbuf(err, NULL, _IOLBF, 0);
  orig_out = stdout;
  orig_err = stderr;
  stdout = out;
  stderr = err;
  return 0;
}

struct gr_term_std gr_term_std_original(void)
{
  struct gr_term_std saved = {stdout, stderr};
  if (!orig_out)
    return saved;
  fflush(stdout); /* what was printed before stays before */
  fflush(stderr);
  stdout = orig_out;
  stderr = orig_err;
  return saved;
}

void gr_term_std_restore(struct gr_term_std saved)
{
  fflush(stdout);
  fflush(stderr);
  stdout = saved.out;
  stderr = saved.err;
}

int gr_term_width(int fd)
{
  int width = 100;
  const char *env = getenv("COLUMNS");
  struct winsize ws;
  char *end;
  long v = env ? strtol(env, &end, 10) : 0;
  if (env && *env && !*end && v > 0)
    width = (int)(v > 10000 ? 10000 : v);
  else if (isatty(fd) && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
    width = ws.ws_col;
  return width < 40 ? 40 : width > 10000 ? 10000 : width;
}

int gr_term_color_ok(int fd)
{
  const char *no_color = getenv("NO_COLOR"), *term = getenv("TERM");
  if (no_color && *no_color) /* no-color.org: set and not empty */
    return 0;
  if (term && strcmp(term, "dumb") == 0)
    return 0;
  return isatty(fd);
}

void gr_term_raw(FILE *f, const char *seq)
{
  int fd = f == stdout ? STDOUT_FILENO : f == stderr ? STDERR_FILENO : -1;
  if (fd < 0)
    return;
  fflush(f);
  (void)write_all(fd, seq, strlen(seq)); /* a lost colour is not worth an error */
}
