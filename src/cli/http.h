/* The exporter's HTTP server (cli/http.c): libmicrohttpd on its own thread,
 * serving /metrics with what a render callback returns, for gpurig export. */
#ifndef GPURIG_CLI_HTTP_H
#define GPURIG_CLI_HTTP_H

#include "base/util.h"

/* A running server; the caller owns it and ends it with cli_http_stop. */
struct cli_http;

/* Serves on listen (ADDR:PORT, as gr_parse_listen reads it): GET or HEAD of
 * /metrics answers render(ctx) (a string from malloc, freed by the server,
 * Prometheus text), / a page linking to it, any other path 404 and any other
 * method 405. render runs on the server's thread. Returns the server, or
 * NULL with err (GR_EXIT_FAIL: not ADDR:PORT, or cannot listen there). */
struct cli_http *cli_http_serve(const char *listen, char *(*render)(void *ctx), void *ctx, struct gr_err *err);
/* Stops the server (waits for its thread) and frees it; NULL does nothing. */
void cli_http_stop(struct cli_http *h);

#endif
