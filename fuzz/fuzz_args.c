/* libFuzzer target: the command-line values watch and export parse into
 * numbers and addresses (--interval, --listen): never a crash, and what is
 * accepted is in range. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include "base/util.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char text[256];
  if (size >= sizeof(text))
    return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  double s;
  if (gr_parse_seconds(text, 0.1, 3600, &s) && !(s >= 0.1 - 1e-9 && s <= 3600))
    abort();
  struct sockaddr_storage sa;
  unsigned len;
  if (gr_parse_listen(text, &sa, &len)) {
    unsigned port = sa.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&sa)->sin6_port)
                                             : ntohs(((struct sockaddr_in *)&sa)->sin_port);
    if (port == 0 || len > sizeof(sa) || (sa.ss_family != AF_INET && sa.ss_family != AF_INET6))
      abort();
  }
  return 0;
}
