/* HTTP/1.1 server on lwIP's raw TCP API (NO_SYS): keep-alive, pipelining,
 * flow control through tcp_sent, bounded per-connection memory. */
#ifndef LITEDAV_HTTPD_H
#define LITEDAV_HTTPD_H

#include <stdint.h>

struct httpd_stats {
    uint32_t conns_open;
    uint32_t conns_max_open;
    uint64_t conns_total;
    uint64_t conns_refused;   /* no memory for connection state */
    uint64_t requests;
    uint64_t responses_4xx, responses_5xx;
};
extern struct httpd_stats httpd_stats;

/* Listen on the given TCP port. Returns 0 on success. */
int httpd_init(uint16_t port);

#endif
