/* The exporter's HTTP server (cli/http.h): the request parser's answers for
 * good, partial and bad heads, and the server on loopback: a published body
 * plus its tail, keep-alive, and a connection over the per-client limit
 * closing the idlest one rather than being refused. */
#include "testutil.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli/http.h"

static int parse(const char *s, struct cli_http_req *r)
{
  return cli_http_parse(s, strlen(s), r);
}

static void test_parse_good(void **state)
{
  (void)state;
  struct cli_http_req r;
  const char *s = "GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\nGET /next";
  assert_int_equal(parse(s, &r), 0);
  assert_int_equal(r.method, CLI_HTTP_GET);
  assert_int_equal(r.path_len, 8);
  assert_memory_equal(r.path, "/metrics", 8);
  assert_true(r.keep_alive);
  assert_false(r.body);
  assert_int_equal(r.head_len, strlen(s) - strlen("GET /next"));
  /* HTTP/1.0 closes unless asked; 1.1 keeps unless asked; bare LF lines */
  assert_int_equal(parse("HEAD /metrics?x=1 HTTP/1.0\n\n", &r), 0);
  assert_int_equal(r.method, CLI_HTTP_HEAD);
  assert_int_equal(r.path_len, 8);
  assert_false(r.keep_alive);
  assert_int_equal(parse("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", &r), 0);
  assert_true(r.keep_alive);
  assert_int_equal(parse("GET / HTTP/1.1\r\nConnection: foo, close\r\n\r\n", &r), 0);
  assert_false(r.keep_alive);
  /* the absolute form, and a method the server refuses later (405) */
  assert_int_equal(parse("GET http://h:9400/metrics HTTP/1.1\r\n\r\n", &r), 0);
  assert_int_equal(r.path_len, 8);
  assert_int_equal(parse("POST /metrics HTTP/1.1\r\nContent-Length: 3\r\n\r\n", &r), 0);
  assert_int_equal(r.method, CLI_HTTP_OTHER);
  assert_true(r.body);
  assert_int_equal(parse("GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", &r), 0);
  assert_true(r.body);
  /* OPTIONS * and CONNECT's authority form: complete, for a 405 */
  assert_int_equal(parse("OPTIONS * HTTP/1.1\r\n\r\n", &r), 0);
  assert_int_equal(r.method, CLI_HTTP_OTHER);
  assert_int_equal(parse("CONNECT h:443 HTTP/1.1\r\n\r\n", &r), 0);
}

static void test_parse_partial(void **state)
{
  (void)state;
  struct cli_http_req r;
  assert_int_equal(parse("", &r), -1);
  assert_int_equal(parse("GET /metr", &r), -1);
  assert_int_equal(parse("GET /metrics HTTP/1.1\r\nHost: x\r\n", &r), -1);
  assert_int_equal(parse("GET /metrics HTTP/1.1\r\nHost: x\r\n\r", &r), -1);
  /* a start that cannot become a request is refused before its line ends */
  assert_int_equal(cli_http_parse("\x16\x03\x01\x02", 4, &r), 400);
  assert_int_equal(parse("GE{", &r), 400);
}

static void test_parse_bad(void **state)
{
  (void)state;
  struct cli_http_req r;
  assert_int_equal(parse("GET /metrics HTTP/2.0\r\n\r\n", &r), 505);
  assert_int_equal(parse("GET /metrics HTTX/1.1\r\n\r\n", &r), 400);
  assert_int_equal(parse("GET metrics HTTP/1.1\r\n\r\n", &r), 400);
  assert_int_equal(parse("G(T / HTTP/1.1\r\n\r\n", &r), 400);
  assert_int_equal(parse("GET  / HTTP/1.1\r\n\r\n", &r), 400);
  assert_int_equal(parse("GET / HTTP/1.1\r\nNo Colon\r\n\r\n", &r), 400);
  assert_int_equal(parse("GET / HTTP/1.1\r\nHost : x\r\n\r\n", &r), 400);
  assert_int_equal(parse("GET / HTTP/1.1\r\nX: a\r\n folded\r\n\r\n", &r), 400);
  assert_int_equal(parse("GET / HTTP/1.1\r\nX: a\rb\r\n\r\n", &r), 400);
  assert_int_equal(parse("GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", &r), 400);
  assert_int_equal(parse("GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", &r), 400);
  assert_int_equal(cli_http_parse("GET / HTTP/1.1\r\nX: a\0b\r\n\r\n", 26, &r), 400);
  /* a request line over the limit: 414 as soon as it is seen, ended or not */
  char *line = xcalloc(1, CLI_HTTP_MAX_LINE + 64);
  memcpy(line, "GET /", 5);
  memset(line + 5, 'a', CLI_HTTP_MAX_LINE);
  assert_int_equal(parse(line, &r), 414);
  strcat(line, " HTTP/1.1\r\n\r\n");
  assert_int_equal(parse(line, &r), 414);
  free(line);
  /* a head over the limit: 431 */
  char *head = xcalloc(1, CLI_HTTP_MAX_HEAD + 64);
  strcpy(head, "GET / HTTP/1.1\r\nX: ");
  memset(head + strlen(head), 'b', CLI_HTTP_MAX_HEAD);
  assert_int_equal(parse(head, &r), 431);
  strcat(head, "\r\n\r\n");
  assert_int_equal(parse(head, &r), 431);
  free(head);
}

/* ---- the server on loopback ---- */

static int free_port(void)
{
  int s = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof(a);
  assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
  assert_int_equal(getsockname(s, (struct sockaddr *)&a, &len), 0);
  close(s);
  return ntohs(a.sin_port);
}

static int dial(int port)
{
  int s = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  assert_int_equal(connect(s, (struct sockaddr *)&a, sizeof(a)), 0);
  return s;
}

/* Reads one response (head and Content-Length body) into buf, 5 s at most;
 * returns its length, 0 when the server closed first. */
static size_t read_response(int s, char *buf, size_t cap)
{
  size_t n = 0;
  while (n < cap - 1) {
    struct pollfd p = {.fd = s, .events = POLLIN};
    assert_int_equal(poll(&p, 1, 5000), 1);
    ssize_t k = recv(s, buf + n, cap - 1 - n, 0);
    if (k <= 0)
      return 0;
    n += (size_t)k;
    buf[n] = '\0';
    const char *end = strstr(buf, "\r\n\r\n"), *cl = strstr(buf, "Content-Length: ");
    if (end && cl && n >= (size_t)(end + 4 - buf) + strtoul(cl + 16, NULL, 10))
      return n;
  }
  return n;
}

static size_t tail(void *ctx, double stamp, char *buf, size_t cap)
{
  (void)ctx;
  return (size_t)snprintf(buf, cap, "tail %.0f\n", stamp);
}

static void test_server(void **state)
{
  (void)state;
  char listen[64], buf[4096];
  snprintf(listen, sizeof(listen), "127.0.0.1:%d", free_port());
  struct cli_http_limits lim = cli_http_default_limits();
  lim.per_client = 2;
  struct gr_err err = {0};
  struct cli_http *h = cli_http_serve(listen, &lim, tail, NULL, &err);
  assert_non_null(h);
  int port = atoi(strchr(listen, ':') + 1);
  int a = dial(port);
  const char *get = "GET /metrics HTTP/1.1\r\n\r\n";
  /* before a body is published: 503 */
  assert_int_equal(send(a, get, strlen(get), 0), (ssize_t)strlen(get));
  assert_true(read_response(a, buf, sizeof(buf)) > 0);
  assert_non_null(strstr(buf, "HTTP/1.1 503 "));
  cli_http_publish(h, xstrdup("body 1\n"), 7, 42);
  assert_int_equal(send(a, get, strlen(get), 0), (ssize_t)strlen(get));
  assert_true(read_response(a, buf, sizeof(buf)) > 0);
  assert_non_null(strstr(buf, "HTTP/1.1 200 OK\r\n"));
  assert_non_null(strstr(buf, "Content-Length: 15\r\n"));
  assert_non_null(strstr(buf, "\r\n\r\nbody 1\ntail 42\n"));
  /* a third connection from this client: the idlest (a) is closed for it */
  int b = dial(port);
  assert_int_equal(send(b, "GET", 3, 0), 3);
  usleep(100000);
  int c = dial(port);
  assert_int_equal(send(c, get, strlen(get), 0), (ssize_t)strlen(get));
  assert_true(read_response(c, buf, sizeof(buf)) > 0);
  assert_non_null(strstr(buf, "body 1\n"));
  assert_int_equal(read_response(a, buf, sizeof(buf)), 0);
  /* 405 names what is allowed */
  const char *post = "POST /metrics HTTP/1.1\r\n\r\n";
  assert_int_equal(send(c, post, strlen(post), 0), (ssize_t)strlen(post));
  assert_true(read_response(c, buf, sizeof(buf)) > 0);
  assert_non_null(strstr(buf, "HTTP/1.1 405 Method Not Allowed\r\n"));
  assert_non_null(strstr(buf, "\r\nAllow: GET, HEAD\r\n"));
  close(a);
  close(b);
  close(c);
  cli_http_stop(h);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse_good),
      cmocka_unit_test(test_parse_partial),
      cmocka_unit_test(test_parse_bad),
      cmocka_unit_test(test_server),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
