/* The exporter's HTTP server: libmicrohttpd on the address gpurig export
 * is given (127.0.0.1 unless told otherwise), serving the Prometheus text a
 * callback renders (cli/http.h). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "cli/http.h"

struct cli_http {
  struct MHD_Daemon *d;
  char *(*render)(void *ctx);
  void *ctx;
};

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
  struct cli_http *h = cls;
  (void)version, (void)upload, (void)upload_size, (void)con_cls;
  unsigned status = MHD_HTTP_OK;
  const char *type = "text/plain; version=0.0.4; charset=utf-8";
  char *body;
  if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
    status = MHD_HTTP_METHOD_NOT_ALLOWED;
    body = xstrdup("only GET\n");
  } else if (strcmp(url, "/metrics") == 0) {
    body = h->render(h->ctx);
  } else if (strcmp(url, "/") == 0) {
    type = "text/html; charset=utf-8";
    body = xstrdup("<html><head><title>gpurig export</title></head><body><h1>gpurig export</h1>"
                   "<p><a href=\"/metrics\">Metrics</a></p></body></html>\n");
  } else {
    status = MHD_HTTP_NOT_FOUND;
    body = xstrdup("not found: gpurig export serves /metrics\n");
  }
  struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
  MHD_add_response_header(r, "Content-Type", type);
  enum MHD_Result ok = MHD_queue_response(c, status, r);
  MHD_destroy_response(r);
  return ok;
}

struct cli_http *cli_http_serve(const char *listen, char *(*render)(void *ctx), void *ctx, struct gr_err *err)
{
  struct sockaddr_storage sa;
  unsigned len;
  if (!gr_parse_listen(listen, &sa, &len)) {
    gr_fail(err, GR_EXIT_FAIL, "--listen %s: not ADDR:PORT (127.0.0.1:9400, [::1]:9400, 0.0.0.0:9400)", listen);
    return NULL;
  }
  struct cli_http *h = xcalloc(1, sizeof(*h));
  h->render = render;
  h->ctx = ctx;
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | (sa.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0);
  h->d = MHD_start_daemon(flags, 0, NULL, NULL, answer, h, MHD_OPTION_SOCK_ADDR, &sa,
                          MHD_OPTION_CONNECTION_TIMEOUT, 10u, MHD_OPTION_END);
  if (!h->d) {
    gr_fail(err, GR_EXIT_FAIL, "--listen %s: cannot listen there (in use, or not this machine's address)", listen);
    free(h);
    return NULL;
  }
  return h;
}

void cli_http_stop(struct cli_http *h)
{
  if (!h)
    return;
  MHD_stop_daemon(h->d);
  free(h);
}
