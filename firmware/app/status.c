#include <inttypes.h>
#include <stdio.h>

#include "lwip/stats.h"

#include "httpd.h"
#include "port.h"
#include "routes.h"

size_t status_render(char *out, size_t size)
{
    uint64_t now = port_cycles();
    uint32_t hz = port_cycles_hz();
    int n = snprintf(out, size,
        "LiteDAV status\n"
        "target: %s\n"
        "sys_clk_hz: %" PRIu32 "\n"
        "uptime_cycles: %" PRIu64 "\n"
        "uptime_ms: %" PRIu64 "\n"
        "idle_cycles: %" PRIu64 "\n"
        "busy_cycles: %" PRIu64 "\n"
        "rx_copy_cycles: %" PRIu64 "\n"
        "rx_handle_cycles: %" PRIu64 "\n"
        "tx_copy_cycles: %" PRIu64 "\n"
        "frames_in: %" PRIu64 "\n"
        "frames_out: %" PRIu64 "\n"
        "bytes_in: %" PRIu64 "\n"
        "bytes_out: %" PRIu64 "\n"
        "rx_dropped: %" PRIu64 "\n"
        "tx_dropped: %" PRIu64 "\n"
        "conns_open: %" PRIu32 "\n"
        "conns_max_open: %" PRIu32 "\n"
        "conns_total: %" PRIu64 "\n"
        "conns_refused: %" PRIu64 "\n"
        "requests: %" PRIu64 "\n"
        "responses_4xx: %" PRIu64 "\n"
        "responses_5xx: %" PRIu64 "\n"
#if LWIP_STATS && MEM_STATS
        "heap_used: %lu\n"
        "heap_max: %lu\n"
#endif
        ,
        port_name(), hz, now, hz ? now / (hz / 1000) : 0,
        port_stats.idle_cycles, now - port_stats.idle_cycles,
        port_stats.rx_copy_cycles, port_stats.rx_handle_cycles, port_stats.tx_copy_cycles,
        port_stats.frames_in, port_stats.frames_out,
        port_stats.bytes_in, port_stats.bytes_out,
        port_stats.rx_dropped, port_stats.tx_dropped,
        httpd_stats.conns_open, httpd_stats.conns_max_open,
        httpd_stats.conns_total, httpd_stats.conns_refused,
        httpd_stats.requests, httpd_stats.responses_4xx, httpd_stats.responses_5xx
#if LWIP_STATS && MEM_STATS
        , (unsigned long)lwip_stats.mem.used, (unsigned long)lwip_stats.mem.max
#endif
        );
    if (n < 0)
        return 0;
    return (size_t)n < size ? (size_t)n : size - 1;
}
