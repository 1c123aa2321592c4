/* The exporter's HTTP/1.1 server (cli/http.h): one thread runs an epoll loop
 * over non-blocking sockets. A scrape is a copy of the body published once
 * per sample, so one thread answers hundreds at once. The limits per client
 * and in all close the idlest connection first, so that a flood of idle or
 * slow connections (slowloris) cannot keep a scrape out. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "cli/http.h"

/* ------------------------------------------------------------ the parser */

static bool is_tchar(unsigned char c)
{
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* The end of the line starting at p (at its LF; a CR before it is the
 * line's), or NULL when there is no LF before end. */
static const char *line_end(const char *p, const char *end)
{
  const char *lf = memchr(p, '\n', (size_t)(end - p));
  return lf;
}

/* Length of the line [p, lf) without its CR; -1 when a CR or NUL is inside. */
static long line_len(const char *p, const char *lf)
{
  size_t n = (size_t)(lf - p);
  if (n && p[n - 1] == '\r')
    n--;
  for (size_t i = 0; i < n; i++)
    if (p[i] == '\r' || p[i] == '\0')
      return -1;
  return (long)n;
}

/* A token list header (Connection) names word, case-insensitively. */
static bool has_token(const char *v, size_t n, const char *word)
{
  size_t w = strlen(word);
  for (size_t i = 0; i < n;) {
    while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
      i++;
    size_t s = i;
    while (i < n && v[i] != ',' && v[i] != ' ' && v[i] != '\t')
      i++;
    if (i - s == w && strncasecmp(v + s, word, w) == 0)
      return true;
  }
  return false;
}

/* The path of a request target: origin form "/p?q", or absolute form
 * "http://host/p?q" (which servers must accept, RFC 9112 3.2.2). */
static int target_path(const char *t, size_t n, struct cli_http_req *req)
{
  size_t i = 0;
  if (n >= 7 && (strncasecmp(t, "http://", 7) == 0 || (n >= 8 && strncasecmp(t, "https://", 8) == 0))) {
    i = t[4] == ':' ? 7 : 8;
    while (i < n && t[i] != '/' && t[i] != '?')
      i++;
    if (i == n || t[i] == '?') { /* "http://host" means "/" */
      req->path = "/";
      req->path_len = 1;
      return 0;
    }
  } else if (n == 0 || t[0] != '/') {
    return 400; /* "*" and the authority form are for OPTIONS and CONNECT */
  }
  size_t e = i;
  while (e < n && t[e] != '?' && t[e] != '#')
    e++;
  req->path = t + i;
  req->path_len = e - i;
  return 0;
}

/* "METHOD SP target SP HTTP/x.y": 0, or the status that refuses it. */
static int request_line(const char *p, size_t n, struct cli_http_req *req, int *minor)
{
  const char *sp1 = memchr(p, ' ', n);
  if (!sp1 || sp1 == p)
    return 400;
  for (const char *c = p; c < sp1; c++)
    if (!is_tchar((unsigned char)*c))
      return 400;
  size_t mlen = (size_t)(sp1 - p);
  req->method = mlen == 3 && memcmp(p, "GET", 3) == 0    ? CLI_HTTP_GET
                : mlen == 4 && memcmp(p, "HEAD", 4) == 0 ? CLI_HTTP_HEAD
                                                         : CLI_HTTP_OTHER;
  const char *t = sp1 + 1, *end = p + n;
  const char *sp2 = memchr(t, ' ', (size_t)(end - t));
  if (!sp2 || sp2 == t)
    return 400;
  for (const char *c = t; c < sp2; c++)
    if ((unsigned char)*c <= ' ' || (unsigned char)*c == 0x7f)
      return 400;
  const char *v = sp2 + 1;
  if (end - v != 8 || memcmp(v, "HTTP/", 5) != 0 || v[5] < '0' || v[5] > '9' || v[6] != '.' || v[7] < '0' ||
      v[7] > '9')
    return 400;
  if (v[5] != '1' || (v[7] != '0' && v[7] != '1'))
    return 505;
  *minor = v[7] - '0';
  int rc = target_path(t, (size_t)(sp2 - t), req);
  if (rc && req->method == CLI_HTTP_OTHER) { /* OPTIONS *, CONNECT host:port: 405 says what is allowed */
    req->path = "*";
    req->path_len = 1;
    return 0;
  }
  return rc;
}

/* One "name: value" line; folded lines and a space before the colon are
 * refused (RFC 9112 5.1-5.2), as a smuggling defence. */
static int header_line(const char *p, size_t n, struct cli_http_req *req, bool *conn_close, bool *conn_keep,
                       long long *clen)
{
  const char *colon = memchr(p, ':', n);
  if (!colon || colon == p)
    return 400;
  for (const char *c = p; c < colon; c++)
    if (!is_tchar((unsigned char)*c))
      return 400;
  size_t nlen = (size_t)(colon - p);
  const char *v = colon + 1, *e = p + n;
  while (v < e && (*v == ' ' || *v == '\t'))
    v++;
  while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
    e--;
  for (const char *c = v; c < e; c++)
    if (((unsigned char)*c < ' ' && *c != '\t') || (unsigned char)*c == 0x7f)
      return 400;
  size_t vlen = (size_t)(e - v);
  if (nlen == 10 && strncasecmp(p, "Connection", 10) == 0) {
    *conn_close |= has_token(v, vlen, "close");
    *conn_keep |= has_token(v, vlen, "keep-alive");
  } else if (nlen == 14 && strncasecmp(p, "Content-Length", 14) == 0) {
    long long x = 0;
    if (vlen == 0 || vlen > 15)
      return 400;
    for (size_t i = 0; i < vlen; i++) {
      if (v[i] < '0' || v[i] > '9')
        return 400;
      x = x * 10 + (v[i] - '0');
    }
    if (*clen >= 0 && *clen != x)
      return 400; /* two lengths that differ */
    *clen = x;
  } else if (nlen == 17 && strncasecmp(p, "Transfer-Encoding", 17) == 0) {
    req->body = true;
  }
  return 0;
}

int cli_http_parse(const char *buf, size_t len, struct cli_http_req *req)
{
  memset(req, 0, sizeof(*req));
  const char *p = buf, *end = buf + len;
  /* empty lines before a request line are ignored (RFC 9112 2.2) */
  while (p < end && (*p == '\r' || *p == '\n') && p - buf < 4)
    p++;
  const char *lf = line_end(p, end);
  if (!lf) {
    /* a method that is not a token (a TLS hello, binary) is refused at
     * once, not after the head timeout */
    for (const char *c = p; c < end && *c != ' '; c++)
      if (!is_tchar((unsigned char)*c))
        return 400;
    return (size_t)(end - p) > CLI_HTTP_MAX_LINE ? 414 : len > CLI_HTTP_MAX_HEAD ? 431 : -1;
  }
  long n = line_len(p, lf);
  if (n < 0)
    return 400;
  if (n > CLI_HTTP_MAX_LINE)
    return 414;
  int minor = 1;
  int rc = request_line(p, (size_t)n, req, &minor);
  if (rc)
    return rc;
  bool conn_close = false, conn_keep = false;
  long long clen = -1;
  for (p = lf + 1;; p = lf + 1) {
    if ((size_t)(p - buf) > CLI_HTTP_MAX_HEAD)
      return 431;
    if (!(lf = line_end(p, end)))
      return len > CLI_HTTP_MAX_HEAD ? 431 : -1;
    if ((n = line_len(p, lf)) < 0)
      return 400;
    if (n == 0)
      break;
    if (*p == ' ' || *p == '\t')
      return 400; /* obs-fold */
    if ((rc = header_line(p, (size_t)n, req, &conn_close, &conn_keep, &clen)))
      return rc;
  }
  req->head_len = (size_t)(lf + 1 - buf);
  if (req->head_len > CLI_HTTP_MAX_HEAD)
    return 431;
  req->body |= clen > 0;
  req->keep_alive = !conn_close && (minor == 1 || conn_keep);
  return 0;
}

/* ------------------------------------------------------------ the server */

/* A published body, shared by the responses that send it. */
struct page {
  char *body;
  size_t len;
  double stamp;
  unsigned refs; /* under the server's mutex */
};

struct conn {
  int fd;
  bool dead;                 /* closed in this batch of events; freed after it */
  struct conn *prev, *next;  /* the server's list, least recently active first */
  struct sockaddr_storage peer;
  double last_io;            /* the last byte read or sent */
  double head_start;         /* the current request's first byte, 0 none */
  bool writing, close_after, eof;
  unsigned events;           /* what epoll waits for on fd */
  struct page *page;         /* held while its body is sent */
  char head[384];
  const char *body;
  size_t head_len, body_len, tail_len, sent;
  char tail[512]; /* gr_prom_age's family with the host's label */
  size_t in_len;
  char in[CLI_HTTP_MAX_HEAD + 1];
};

struct cli_http {
  int lfd, epfd, wakefd;
  pthread_t thread;
  pthread_mutex_t mu;
  struct page *cur;
  struct cli_http_limits lim;
  cli_http_tail_fn tail;
  void *ctx;
  struct conn *first, *last, *dead;
  struct conn *spare; /* closed connections' memory, kept for the next ones */
  unsigned nspare;
  unsigned nconns;
  double accept_paused_until; /* 0: accepting */
  time_t date_t;
  char date[40];
};

static char listen_mark, wake_mark; /* epoll data for the two non-connection descriptors */

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

struct cli_http_limits cli_http_default_limits(void)
{
  return (struct cli_http_limits){.max_conns = 512, .per_client = 256, .idle_s = 60, .head_s = 10, .send_s = 30};
}

static void page_put(struct cli_http *h, struct page *p)
{
  if (!p)
    return;
  pthread_mutex_lock(&h->mu);
  bool last = --p->refs == 0;
  pthread_mutex_unlock(&h->mu);
  if (last) {
    free(p->body);
    free(p);
  }
}

void cli_http_publish(struct cli_http *h, char *body, size_t len, double stamp)
{
  struct page *p = xcalloc(1, sizeof(*p));
  p->body = body;
  p->len = len;
  p->stamp = stamp;
  p->refs = 1;
  pthread_mutex_lock(&h->mu);
  struct page *old = h->cur;
  h->cur = p;
  pthread_mutex_unlock(&h->mu);
  page_put(h, old);
}

static void list_unlink(struct cli_http *h, struct conn *c)
{
  *(c->prev ? &c->prev->next : &h->first) = c->next;
  *(c->next ? &c->next->prev : &h->last) = c->prev;
  c->prev = c->next = NULL;
}

static void list_append(struct cli_http *h, struct conn *c)
{
  c->prev = h->last;
  c->next = NULL;
  *(h->last ? &h->last->next : &h->first) = c;
  h->last = c;
}

/* Activity moves a connection to the end: the list's head is the idlest. */
static void touch(struct cli_http *h, struct conn *c, double now)
{
  c->last_io = now;
  list_unlink(h, c);
  list_append(h, c);
}

/* Closes c now; its memory waits for the end of the batch of events, which
 * may still name it. */
static void conn_close(struct cli_http *h, struct conn *c)
{
  if (c->dead)
    return;
  close(c->fd); /* also leaves the epoll set */
  page_put(h, c->page);
  c->page = NULL;
  c->dead = true;
  list_unlink(h, c);
  h->nconns--;
  c->next = h->dead;
  h->dead = c;
}

/* A burst of scrapes opens and closes hundreds of connections: their
 * memory (9 KB each) is kept for the next burst, up to CONN_SPARE, rather
 * than given back (malloc trims it) and faulted in and zeroed again. */
enum { CONN_SPARE = 256 };

static void free_dead(struct cli_http *h)
{
  while (h->dead) {
    struct conn *c = h->dead;
    h->dead = c->next;
    if (h->nspare < CONN_SPARE) {
      c->next = h->spare;
      h->spare = c;
      h->nspare++;
    } else {
      free(c);
    }
  }
}

/* A connection's memory, zeroed but for its input buffer; NULL when out of
 * memory. */
static struct conn *conn_new(struct cli_http *h)
{
  struct conn *c = h->spare;
  if (c) {
    h->spare = c->next;
    h->nspare--;
  } else if (!(c = malloc(sizeof(*c)))) {
    return NULL;
  }
  memset(c, 0, offsetof(struct conn, in));
  return c;
}

static void free_spare(struct cli_http *h)
{
  while (h->spare) {
    struct conn *c = h->spare;
    h->spare = c->next;
    free(c);
  }
  h->nspare = 0;
}

static void set_events(struct cli_http *h, struct conn *c, unsigned ev)
{
  if (c->events == ev)
    return;
  struct epoll_event e = {.events = ev, .data.ptr = c};
  if (epoll_ctl(h->epfd, EPOLL_CTL_MOD, c->fd, &e) == 0)
    c->events = ev;
  else
    conn_close(h, c);
}

static bool same_client(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
  if (a->ss_family != b->ss_family)
    return false;
  if (a->ss_family == AF_INET)
    return ((const struct sockaddr_in *)a)->sin_addr.s_addr == ((const struct sockaddr_in *)b)->sin_addr.s_addr;
  if (a->ss_family == AF_INET6)
    return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr, &((const struct sockaddr_in6 *)b)->sin6_addr,
                  sizeof(struct in6_addr)) == 0;
  return true;
}

/* Closes the idlest connection not sending a response (of one client when
 * peer is given); false when every one is busy sending. */
static bool shed_idlest(struct cli_http *h, const struct sockaddr_storage *peer)
{
  for (struct conn *c = h->first; c; c = c->next)
    if (!c->writing && (!peer || same_client(&c->peer, peer))) {
      conn_close(h, c);
      return true;
    }
  return false;
}

static const char *reason(int status)
{
  switch (status) {
  case 200: return "OK";
  case 400: return "Bad Request";
  case 404: return "Not Found";
  case 405: return "Method Not Allowed";
  case 413: return "Content Too Large";
  case 414: return "URI Too Long";
  case 431: return "Request Header Fields Too Large";
  case 503: return "Service Unavailable";
  default: return "HTTP Version Not Supported";
  }
}

/* The Date header's value (RFC 9110 6.6.1), formatted once a second. */
static const char *http_date(struct cli_http *h)
{
  time_t t = time(NULL);
  if (t != h->date_t) {
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(h->date, sizeof(h->date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
    h->date_t = t;
  }
  return h->date;
}

/* Starts sending status with body (not copied: static text or c->page's)
 * plus c->tail; HEAD sends the same head without them. */
static void start_response(struct cli_http *h, struct conn *c, int status, const char *type, const char *body,
                           size_t len, bool head_only)
{
  size_t total = len + c->tail_len;
  int n = snprintf(c->head, sizeof(c->head),
                   "HTTP/1.1 %d %s\r\nDate: %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s%s\r\n", status,
                   reason(status), http_date(h), type, total, status == 405 ? "Allow: GET, HEAD\r\n" : "",
                   c->close_after ? "Connection: close\r\n" : "");
  c->head_len = n > 0 && (size_t)n < sizeof(c->head) ? (size_t)n : 0;
  c->body = head_only ? "" : body;
  c->body_len = head_only ? 0 : len;
  if (head_only)
    c->tail_len = 0;
  c->sent = 0;
  c->writing = true;
}

static void error_response(struct cli_http *h, struct conn *c, int status)
{
  static const char *const words[] = {"bad request\n", "not found: gpurig export serves /metrics\n",
                                      "only GET and HEAD\n", "gpurig export reads no request body\n",
                                      "request target too long\n", "request head too long\n",
                                      "no sample yet\n", "HTTP/1.0 and HTTP/1.1 only\n"};
  int k = status == 400 ? 0 : status == 404 ? 1 : status == 405 ? 2 : status == 413 ? 3 : status == 414 ? 4
          : status == 431 ? 5 : status == 503 ? 6 : 7;
  c->tail_len = 0;
  start_response(h, c, status, "text/plain; charset=utf-8", words[k], strlen(words[k]), false);
}

/* Answers one parsed request. */
static void answer(struct cli_http *h, struct conn *c, const struct cli_http_req *r)
{
  bool head_only = r->method == CLI_HTTP_HEAD;
  c->close_after = !r->keep_alive || r->body || c->eof;
  c->tail_len = 0;
  if (r->method == CLI_HTTP_OTHER)
    return error_response(h, c, 405);
  if (r->body)
    return error_response(h, c, 413);
  if (r->path_len == 8 && memcmp(r->path, "/metrics", 8) == 0) {
    pthread_mutex_lock(&h->mu);
    struct page *p = h->cur;
    if (p)
      p->refs++;
    pthread_mutex_unlock(&h->mu);
    if (!p)
      return error_response(h, c, 503);
    c->page = p;
    c->tail_len = h->tail ? h->tail(h->ctx, p->stamp, c->tail, sizeof(c->tail)) : 0;
    if (c->tail_len > sizeof(c->tail))
      c->tail_len = sizeof(c->tail);
    return start_response(h, c, 200, "text/plain; version=0.0.4; charset=utf-8", p->body, p->len, head_only);
  }
  if (r->path_len == 1 && r->path[0] == '/') {
    static const char page[] = "<html><head><title>gpurig export</title></head><body><h1>gpurig export</h1>"
                               "<p><a href=\"/metrics\">Metrics</a></p></body></html>\n";
    return start_response(h, c, 200, "text/html; charset=utf-8", page, sizeof(page) - 1, head_only);
  }
  error_response(h, c, 404);
}

/* Sends what the socket takes; at the end, the next request or the close. */
static void flush_conn(struct cli_http *h, struct conn *c, double now);

/* Parses the buffered bytes; a complete head is answered. */
static void serve_input(struct cli_http *h, struct conn *c, double now)
{
  if (c->writing || c->dead)
    return;
  struct cli_http_req r;
  int rc = c->in_len ? cli_http_parse(c->in, c->in_len, &r) : -1;
  if (rc == -1) {
    if (c->eof)
      conn_close(h, c); /* the client left mid-request */
    return;
  }
  if (rc > 0) {
    c->close_after = true;
    c->in_len = 0;
    error_response(h, c, rc);
  } else {
    answer(h, c, &r);
    /* the next pipelined request waits in the buffer until this one is sent */
    memmove(c->in, c->in + r.head_len, c->in_len - r.head_len);
    c->in_len -= r.head_len;
  }
  c->head_start = c->in_len ? now : 0;
  flush_conn(h, c, now);
}

static void flush_conn(struct cli_http *h, struct conn *c, double now)
{
  size_t total = c->head_len + c->body_len + c->tail_len;
  while (c->sent < total) {
    struct iovec iov[3];
    int n = 0;
    size_t s = c->sent;
    const char *part[3] = {c->head, c->body, c->tail};
    size_t plen[3] = {c->head_len, c->body_len, c->tail_len};
    for (int k = 0; k < 3; k++) {
      if (s >= plen[k]) {
        s -= plen[k];
        continue;
      }
      iov[n++] = (struct iovec){(void *)(part[k] + s), plen[k] - s};
      s = 0;
    }
    struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)n};
    ssize_t w = sendmsg(c->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w < 0 && errno == EINTR)
      continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      return set_events(h, c, EPOLLOUT);
    if (w <= 0)
      return conn_close(h, c);
    c->sent += (size_t)w;
    touch(h, c, now);
  }
  c->writing = false;
  page_put(h, c->page);
  c->page = NULL;
  if (c->close_after)
    return conn_close(h, c);
  set_events(h, c, EPOLLIN);
  if (!c->dead && c->in_len)
    serve_input(h, c, now);
}

static void on_readable(struct cli_http *h, struct conn *c, double now)
{
  while (!c->eof && c->in_len < sizeof(c->in)) {
    size_t room = sizeof(c->in) - c->in_len;
    ssize_t n = recv(c->fd, c->in + c->in_len, room, MSG_DONTWAIT);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      break;
    if (n <= 0) {
      if (n < 0)
        return conn_close(h, c);
      c->eof = true;
      break;
    }
    if (!c->head_start)
      c->head_start = now;
    c->in_len += (size_t)n;
    touch(h, c, now);
    /* a short read emptied the socket: the EAGAIN recv that would say so
     * is a syscall per request (epoll is level-triggered, more wakes it) */
    if ((size_t)n < room)
      break;
  }
  serve_input(h, c, now);
}

/* No descriptor left (EMFILE, ENFILE) or no memory: close the idlest
 * connection, or when all are busy stop accepting for a tenth of a second,
 * rather than spin on the listening socket or exit. */
static void out_of_descriptors(struct cli_http *h, double now)
{
  if (shed_idlest(h, NULL))
    return;
  struct epoll_event e = {.events = 0, .data.ptr = &listen_mark};
  epoll_ctl(h->epfd, EPOLL_CTL_MOD, h->lfd, &e);
  h->accept_paused_until = now + 0.1;
}

/* Room for a new connection from peer: over a limit, the idlest of the
 * same client goes first, then the idlest of any. */
static bool make_room(struct cli_http *h, const struct sockaddr_storage *peer)
{
  /* the count walks every connection (a cache miss each): only when the
   * total could be over the per-client limit, not on every accept of a burst */
  unsigned same = 0;
  if (h->nconns >= h->lim.per_client)
    for (struct conn *c = h->first; c; c = c->next)
      same += same_client(&c->peer, peer);
  if (same >= h->lim.per_client && !shed_idlest(h, peer))
    return false;
  if (h->nconns >= h->lim.max_conns && !shed_idlest(h, NULL))
    return false;
  return true;
}

static void on_accept(struct cli_http *h, double now)
{
  for (int k = 0; k < 64 && !h->accept_paused_until; k++) {
    struct sockaddr_storage peer;
    socklen_t plen = sizeof(peer);
    int fd = accept4(h->lfd, (struct sockaddr *)&peer, &plen, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
        out_of_descriptors(h, now);
      else if (errno == EAGAIN || errno == EWOULDBLOCK)
        return;
      continue; /* ECONNABORTED, EINTR, a network error of that connection */
    }
    if (!make_room(h, &peer)) {
      close(fd);
      continue;
    }
    struct conn *c = conn_new(h);
    struct epoll_event e = {.events = EPOLLIN, .data.ptr = c};
    if (!c || epoll_ctl(h->epfd, EPOLL_CTL_ADD, fd, &e) != 0) {
      free(c);
      close(fd);
      out_of_descriptors(h, now);
      continue;
    }
    /* a response goes out in one sendmsg: Nagle would only hold its last
     * segment back until the client's (maybe delayed) ACK */
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    c->fd = fd;
    c->peer = peer;
    c->events = EPOLLIN;
    c->last_io = now;
    list_append(h, c);
    h->nconns++;
  }
}

/* Closes what waited too long: an idle keep-alive, a request head that
 * does not end (slowloris), a response the client does not read. */
static void expire(struct cli_http *h, double now)
{
  for (struct conn *c = h->first, *next; c; c = next) {
    next = c->next;
    bool late = c->writing    ? now - c->last_io > h->lim.send_s
                : c->head_start ? now - c->head_start > h->lim.head_s
                                : now - c->last_io > h->lim.idle_s;
    if (late)
      conn_close(h, c);
  }
  if (h->accept_paused_until && now >= h->accept_paused_until) {
    struct epoll_event e = {.events = EPOLLIN, .data.ptr = &listen_mark};
    epoll_ctl(h->epfd, EPOLL_CTL_MOD, h->lfd, &e);
    h->accept_paused_until = 0;
  }
}

static void *loop(void *arg)
{
  struct cli_http *h = arg;
  struct epoll_event ev[64];
  double checked = now_s();
  for (;;) {
    int n = epoll_wait(h->epfd, ev, 64, 100);
    double now = now_s();
    for (int i = 0; i < n; i++) {
      void *p = ev[i].data.ptr;
      if (p == &wake_mark)
        return NULL;
      if (p == &listen_mark) {
        on_accept(h, now);
        continue;
      }
      struct conn *c = p;
      if (c->dead)
        continue;
      if (c->writing)
        flush_conn(h, c, now);
      else
        on_readable(h, c, now);
    }
    if (now - checked >= 0.1) {
      expire(h, now);
      checked = now;
    }
    free_dead(h);
  }
}

static int listen_on(const struct sockaddr_storage *sa, unsigned len)
{
  int fd = socket(sa->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return -1;
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(fd, (const struct sockaddr *)sa, len) != 0 || listen(fd, SOMAXCONN) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/* Connections must leave descriptors for the rest of gpurig (the driver,
 * the textfile, /sys reads): at most the soft limit less 64. */
static void fit_limits(struct cli_http_limits *l)
{
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
    rlim_t room = rl.rlim_cur > 72 ? rl.rlim_cur - 64 : 8;
    if (l->max_conns > room)
      l->max_conns = (unsigned)room;
  }
  if (l->max_conns < 1)
    l->max_conns = 1;
  if (l->per_client < 1 || l->per_client > l->max_conns)
    l->per_client = l->max_conns;
}

static void release(struct cli_http *h)
{
  if (h->lfd >= 0)
    close(h->lfd);
  if (h->epfd >= 0)
    close(h->epfd);
  if (h->wakefd >= 0)
    close(h->wakefd);
  page_put(h, h->cur);
  pthread_mutex_destroy(&h->mu);
  free(h);
}

struct cli_http *cli_http_serve(const char *listen, const struct cli_http_limits *lim, cli_http_tail_fn tail,
                                void *ctx, struct gr_err *err)
{
  struct sockaddr_storage sa;
  unsigned len;
  if (!gr_parse_listen(listen, &sa, &len)) {
    gr_fail(err, GR_EXIT_FAIL, "--listen %s: not ADDR:PORT (127.0.0.1:9400, [::1]:9400, 0.0.0.0:9400)", listen);
    return NULL;
  }
  struct cli_http *h = xcalloc(1, sizeof(*h));
  pthread_mutex_init(&h->mu, NULL);
  h->lim = lim ? *lim : cli_http_default_limits();
  fit_limits(&h->lim);
  h->tail = tail;
  h->ctx = ctx;
  h->epfd = h->wakefd = -1;
  if ((h->lfd = listen_on(&sa, len)) < 0) {
    gr_fail(err, GR_EXIT_FAIL, "--listen %s: cannot listen there: %s", listen, strerror(errno));
    release(h);
    return NULL;
  }
  h->epfd = epoll_create1(EPOLL_CLOEXEC);
  h->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  struct epoll_event el = {.events = EPOLLIN, .data.ptr = &listen_mark};
  struct epoll_event ew = {.events = EPOLLIN, .data.ptr = &wake_mark};
  if (h->epfd < 0 || h->wakefd < 0 || epoll_ctl(h->epfd, EPOLL_CTL_ADD, h->lfd, &el) != 0 ||
      epoll_ctl(h->epfd, EPOLL_CTL_ADD, h->wakefd, &ew) != 0 || pthread_create(&h->thread, NULL, loop, h) != 0) {
    gr_fail(err, GR_EXIT_CANNOT_RUN, "--listen %s: cannot start the server: %s", listen, strerror(errno));
    release(h);
    return NULL;
  }
  return h;
}

void cli_http_stop(struct cli_http *h)
{
  if (!h)
    return;
  uint64_t one = 1;
  while (write(h->wakefd, &one, sizeof(one)) < 0 && errno == EINTR)
    ;
  pthread_join(h->thread, NULL);
  while (h->first)
    conn_close(h, h->first);
  free_dead(h);
  free_spare(h);
  release(h);
}
