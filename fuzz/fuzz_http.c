/* libFuzzer target: the exporter's HTTP request parser (cli/http.h) on any
 * bytes. Whatever it is given, it answers complete (0), more please (-1) or
 * a refusal status, and a complete head lies inside the input with its
 * path inside the head (or one of the parser's two constant paths). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct cli_http_req r;
  const char *buf = (const char *)data;
  int rc = cli_http_parse(buf, size, &r);
  if (rc != 0 && rc != -1 && rc != 400 && rc != 414 && rc != 431 && rc != 505)
    abort();
  if (rc == -1 && size > CLI_HTTP_MAX_HEAD)
    abort(); /* the buffer is never asked to grow past the limit */
  if (rc == 0) {
    if (r.head_len == 0 || r.head_len > size || r.head_len > CLI_HTTP_MAX_HEAD)
      abort();
    /* "/" for "http://host", "*" for a refused method's other target forms */
    bool static_root = r.path_len == 1 && (r.path[0] == '/' || r.path[0] == '*') && (r.path < buf || r.path >= buf + size);
    if (!static_root && (r.path < buf || r.path + r.path_len > buf + r.head_len))
      abort();
    if (r.method > CLI_HTTP_OTHER)
      abort();
    /* the same head alone parses the same */
    struct cli_http_req again;
    if (cli_http_parse(buf, r.head_len, &again) != 0 || again.head_len != r.head_len)
      abort();
  }
  return 0;
}
