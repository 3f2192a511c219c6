#include <inttypes.h>
#include <stdio.h>

#include "lwip/stats.h"

#include "httpd.h"
#include "port.h"
#include "routes.h"

/* Each section is rendered straight into the response's send staging, so
 * the page needs no buffer of its own and can grow past any one buffer. */
static int render_clock(char *out, size_t size)
{
    uint64_t now = port_cycles();
    uint32_t hz = port_cycles_hz();
    return snprintf(out, size,
        "LiteDAV status\n"
        "target: %s\n"
        "sys_clk_hz: %" PRIu32 "\n"
        "uptime_cycles: %" PRIu64 "\n"
        "uptime_ms: %" PRIu64 "\n"
        "idle_cycles: %" PRIu64 "\n"
        "busy_cycles: %" PRIu64 "\n"
        "rx_copy_cycles: %" PRIu64 "\n"
        "rx_handle_cycles: %" PRIu64 "\n"
        "tx_copy_cycles: %" PRIu64 "\n",
        port_name(), hz, now, hz >= 1000 ? now / (hz / 1000) : 0,
        port_stats.idle_cycles, now - port_stats.idle_cycles,
        port_stats.rx_copy_cycles, port_stats.rx_handle_cycles, port_stats.tx_copy_cycles);
}

static int render_network(char *out, size_t size)
{
    return snprintf(out, size,
        "frames_in: %" PRIu64 "\n"
        "frames_out: %" PRIu64 "\n"
        "bytes_in: %" PRIu64 "\n"
        "bytes_out: %" PRIu64 "\n"
        "rx_dropped: %" PRIu64 "\n"
        "tx_dropped: %" PRIu64 "\n"
        "rx_merged: %" PRIu64 "\n",
        port_stats.frames_in, port_stats.frames_out,
        port_stats.bytes_in, port_stats.bytes_out,
        port_stats.rx_dropped, port_stats.tx_dropped, port_stats.rx_merged);
}

static int render_http(char *out, size_t size)
{
    return snprintf(out, size,
        "conns_open: %" PRIu32 "\n"
        "conns_max_open: %" PRIu32 "\n"
        "conns_total: %" PRIu64 "\n"
        "conns_refused: %" PRIu64 "\n"
        "requests: %" PRIu64 "\n"
        "responses_4xx: %" PRIu64 "\n"
        "responses_5xx: %" PRIu64 "\n",
        httpd_stats.conns_open, httpd_stats.conns_max_open,
        httpd_stats.conns_total, httpd_stats.conns_refused,
        httpd_stats.requests, httpd_stats.responses_4xx, httpd_stats.responses_5xx);
}

static int render_heap(char *out, size_t size)
{
#if LWIP_STATS && MEM_STATS
    return snprintf(out, size, "heap_used: %lu\nheap_max: %lu\n",
                    (unsigned long)lwip_stats.mem.used, (unsigned long)lwip_stats.mem.max);
#else
    (void)out;
    (void)size;
    return 0;
#endif
}

/* lwIP's pools: what is in use now and at most, so a leak shows as a level
 * that does not come back once the appliance is idle. */
static int render_pools(char *out, size_t size)
{
#if LWIP_STATS && MEMP_STATS
    return snprintf(out, size,
                    "pbuf_pool_used: %lu\npbuf_pool_max: %lu\npbuf_pool_err: %lu\n"
                    "tcp_pcbs_used: %lu\ntcp_segs_used: %lu\n",
                    (unsigned long)lwip_stats.memp[MEMP_PBUF_POOL]->used,
                    (unsigned long)lwip_stats.memp[MEMP_PBUF_POOL]->max,
                    (unsigned long)lwip_stats.memp[MEMP_PBUF_POOL]->err,
                    (unsigned long)lwip_stats.memp[MEMP_TCP_PCB]->used,
                    (unsigned long)lwip_stats.memp[MEMP_TCP_SEG]->used);
#else
    (void)out;
    (void)size;
    return 0;
#endif
}

static int (*const sections[])(char *out, size_t size) = {
    render_clock, render_network, render_http, render_heap, render_pools,
};

size_t status_section(unsigned index, char *out, size_t size)
{
    int n;
    if (index >= sizeof(sections) / sizeof(sections[0]))
        return STATUS_END;
    n = sections[index](out, size);
    if (n < 0 || (size_t)n >= size)
        return STATUS_TOO_SMALL;
    return (size_t)n;
}
