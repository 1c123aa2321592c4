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

/* The bytes gr_term_escape passes as they are, a bit each: printable ASCII,
 * newline, tab, and bytes of UTF-8 sequences other than a C1 control's lead
 * 0xC2. A bit test, not five comparisons: every byte of stdout passes here
 * (topo --json at 512 GPUs writes 89 MB). */
static const uint64_t plain_bits[4] = {
  0xffffffff00000600ull, /* 0x00-0x3f: tab, newline, 0x20 on */
  0x7fffffffffffffffull, /* 0x40-0x7f: all but DEL */
  0xffffffffffffffffull, /* 0x80-0xbf: UTF-8 continuation bytes */
  0xfffffffffffffffbull, /* 0xc0-0xff: all but 0xc2 */
};

static bool plain_byte(unsigned char ch)
{
  return (plain_bits[ch >> 6] >> (ch & 63)) & 1;
}

/* The bytes of an 8-byte word equal to c: the high bit of each such byte
 * set, exactly (no borrow crosses a byte). */
static uint64_t bytes_equal(uint64_t w, unsigned char c)
{
  const uint64_t low7 = 0x7f7f7f7f7f7f7f7full;
  uint64_t y = w ^ (c * 0x0101010101010101ull);
  return ~(((y & low7) + low7) | y) & ~low7;
}

/* The bytes of a word that are not plain (below 0x20 but tab and newline,
 * DEL, 0xC2), each flagged by its high bit, exactly: a JSON or text line
 * ends every few words, so a test that only says "maybe" sent half the
 * words of topo --json to a byte-by-byte look. */
static uint64_t word_escapes(uint64_t w)
{
  const uint64_t highs = 0x8080808080808080ull;
  uint64_t below = ~((w | highs) - 0x2020202020202020ull) & ~w & highs; /* bytes below 0x20 */
  return (below & ~bytes_equal(w, '\t') & ~bytes_equal(w, '\n')) | bytes_equal(w, 0x7f) | bytes_equal(w, 0xc2);
}

/* Whether a word may hold such a byte: the zero-byte test of each, cheaper
 * than word_escapes' exact one, never missing one, and true for most words
 * with a newline (a long text line passes on this alone). */
static bool word_may_escape(uint64_t w)
{
  const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
  uint64_t del = w ^ (0x7f * ones), c2 = w ^ (0xc2 * ones);
  return (((w - 0x20 * ones) & ~w) | ((del - ones) & ~del) | ((c2 - ones) & ~c2)) & highs;
}

/* How many of src's first n bytes pass as they are, from the start: a word
 * at a time. */
static size_t plain_run(const char *src, size_t n)
{
  size_t j = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  for (; j + 8 <= n; j += 8) {
    uint64_t w, bad;
    memcpy(&w, src + j, sizeof(w));
    if (word_may_escape(w) && (bad = word_escapes(w)) != 0)
      return j + (size_t)__builtin_ctzll(bad) / 8; /* the lowest flagged byte is the first in memory */
  }
#endif
  while (j < n && plain_byte((unsigned char)src[j]))
    j++;
  return j;
}

size_t gr_term_escape(const char *src, size_t n, char *dst, size_t cap, int *c1_lead)
{
  size_t out = 0;
  for (size_t i = 0; i < n && out + 12 <= cap; i++) {
    if (!*c1_lead) { /* a run of bytes that pass unchanged, copied at once */
      size_t room = cap - 12 - out, j = i + plain_run(src + i, n - i < room ? n - i : room);
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
    } else if (ch == 0x7f) { /* as \u, which a JSON string also allows (jansson leaves DEL raw) */
      out += put_escape(dst + out, "\\u%04x", ch);
    } else if (ch < 0x20 && ch != '\n' && ch != '\t') {
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
  if (!f->c1_lead) { /* the plain bytes at the start (most often all of them) go out as they are */
    done = plain_run(buf, n);
    if (done && write_all(f->fd, buf, done) != 0)
      return -1;
  }
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
