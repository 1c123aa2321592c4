/* The INFO log of NCCL (and of RCCL, NCCL's port to AMD GPUs, which writes the
 * same lines), read for how the library connected the ranks: its channel
 * lines ("... NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC") are the only
 * place it says which transport each connection uses. Used by ccl.c's
 * transports; on its own for the tests. */
#ifndef GPURIG_BACKENDS_CCL_NCCL_LOG_H
#define GPURIG_BACKENDS_CCL_NCCL_LOG_H

#include <stdio.h>

/* Reads the log f to its end and writes one line per connection and
 * transport, "0 -> 1 P2P/IPC\n", deduplicated (every channel, and both
 * ends of a NET connection, log it) and sorted by ranks, into out. Returns
 * the number of connections; 0 when the log has none; -1 when they do not
 * fit in out (or there are over 128). out is always a string. */
int gr_nccl_log_links(FILE *f, char *out, size_t cap);

#endif
