/* The exporter's HTTP/1.1 server (cli/http.c): one thread, one epoll loop,
 * non-blocking sockets and keep-alive, serving a body the exporter publishes
 * once per sample at /metrics. Its own code, not a library's: only export
 * needs a server, and every other command would otherwise load one. */
#ifndef GPURIG_CLI_HTTP_H
#define GPURIG_CLI_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "base/util.h"

/* ---- the request parser (pure: no socket, fuzzed by fuzz/fuzz_http.c) ---- */

/* A request head is at most this long (request line and headers): more is
 * 431, a request line longer than CLI_HTTP_MAX_LINE is 414. Prometheus sends
 * about 300 bytes. */
enum { CLI_HTTP_MAX_HEAD = 8192, CLI_HTTP_MAX_LINE = 2048 };

enum cli_http_method { CLI_HTTP_GET, CLI_HTTP_HEAD, CLI_HTTP_OTHER };

/* One parsed request head; path points into the buffer given to the parser
 * (the target's path, without query, for the origin and absolute forms). */
struct cli_http_req {
  enum cli_http_method method;
  const char *path;
  size_t path_len;
  bool keep_alive; /* HTTP/1.1 unless "Connection: close"; 1.0 with "keep-alive" */
  bool body;       /* Content-Length above 0 or Transfer-Encoding: gpurig reads none */
  size_t head_len; /* bytes of the head, blank line included */
};

/* Reads one request head from buf[0..len). Returns 0 with req filled, -1 when
 * the head is not complete yet (and within the limits), or the HTTP status
 * that refuses it: 400 malformed, 414 request line too long, 431 head too
 * long, 505 a version other than 1.0 and 1.1. */
int cli_http_parse(const char *buf, size_t len, struct cli_http_req *req);

/* ---- the server ---- */

/* Limits that keep a flood of idle or slow clients from keeping a scrape
 * out: a new connection over a limit closes the idlest connection of the
 * same client (over per_client) or of any (over max_conns). */
struct cli_http_limits {
  unsigned max_conns;  /* open connections in all (lowered to fit RLIMIT_NOFILE) */
  unsigned per_client; /* from one address */
  double idle_s;       /* keep-alive with no request */
  double head_s;       /* from a request's first byte to its blank line */
  double send_s;       /* a response that makes no progress */
};
/* 512 in all, 256 per client (200 scrapes at once from one host fit), 60 s
 * idle, 10 s for a head, 30 s to send. */
struct cli_http_limits cli_http_default_limits(void);

/* A running server; the caller owns it and ends it with cli_http_stop. */
struct cli_http;

/* Per-scrape text appended to the published body (export: the sample's
 * age): writes at most cap bytes to buf, returns how many. stamp is the one
 * given to cli_http_publish. Runs on the server's thread. */
typedef size_t (*cli_http_tail_fn)(void *ctx, double stamp, char *buf, size_t cap);

/* Serves on listen (ADDR:PORT, as gr_parse_listen reads it): GET or HEAD of
 * /metrics answers the published body plus tail, / a page linking to it,
 * other paths 404, other methods 405 with Allow. Until a body is published,
 * /metrics answers 503. lim NULL: the defaults. Returns the server (its
 * thread started), or NULL with err (GR_EXIT_FAIL: not ADDR:PORT, or cannot
 * listen there). */
struct cli_http *cli_http_serve(const char *listen, const struct cli_http_limits *lim, cli_http_tail_fn tail,
                                void *ctx, struct gr_err *err);
/* Replaces the body /metrics serves; the server takes body (from malloc).
 * Responses being sent keep the body they started with. */
void cli_http_publish(struct cli_http *h, char *body, size_t len, double stamp);
/* Stops the server (wakes and joins its thread, closes every connection) and
 * frees it; NULL does nothing. */
void cli_http_stop(struct cli_http *h);

#endif
