#include "appliance/status.h"

#include <inttypes.h>
#include <stdio.h>

#include "lwip/priv/tcp_priv.h"
#include "lwip/stats.h"

#include "platform/app_config.h"
#include "dav/dav.h"
#include "http/httpd.h"
#include "platform/port.h"
#include "net/syn_queue.h"
#include "net/tcp_park.h"
#include "net/tcp_time_wait.h"

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
        "rx_merged: %" PRIu64 "\n"
        "rx_dropped_full: %" PRIu64 "\n"
        "rx_dropped_overrun: %" PRIu64 "\n"
        "rx_backlog_max: %" PRIu64 "\n"
        "rx_refill_short: %" PRIu64 "\n"
        "rx_copied_pool_empty: %" PRIu64 "\n"
        "rx_dropped_pool_empty: %" PRIu64 "\n",
        port_stats.frames_in, port_stats.frames_out,
        port_stats.bytes_in, port_stats.bytes_out,
        port_stats.rx_dropped, port_stats.tx_dropped, port_stats.rx_merged,
        port_stats.rx_dropped_full, port_stats.rx_dropped_overrun,
        port_stats.rx_backlog_max, port_stats.rx_refill_short,
        port_stats.rx_copied_pool_empty, port_stats.rx_dropped_pool_empty);
}

static int render_http(char *out, size_t size)
{
    const struct httpd_stats *hs = httpd_get_stats();
    return snprintf(out, size,
        "conns_open: %" PRIu32 "\n"
        "conns_max_open: %" PRIu32 "\n"
        "conns_total: %" PRIu64 "\n"
        "conns_refused: %" PRIu64 "\n"
        "conns_waiting: %" PRIu32 "\n"
        "conns_idle: %" PRIu32 "\n"
        "conns_waited: %" PRIu64 "\n"
        "conns_timed_out: %" PRIu64 "\n"
        "conns_reclaimed: %" PRIu64 "\n"
        "conns_orphans_reset: %" PRIu64 "\n"
        "requests: %" PRIu64 "\n"
        "responses_4xx: %" PRIu64 "\n"
        "responses_5xx: %" PRIu64 "\n",
        hs->conns_open, hs->conns_max_open,
        hs->conns_total, hs->conns_refused,
        hs->conns_waiting, hs->conns_idle, hs->conns_waited,
        hs->conns_timed_out, hs->conns_reclaimed, hs->orphans_reset,
        hs->requests, hs->responses_4xx, hs->responses_5xx);
}

/* The SYN queue, and how half-open connections ended (syn_queue.h): a
 * section of its own, so that no section outgrows a small port's staging.
 * syn_listen_backlog: the half-open connections httpd_init()'s listener keeps
 * before the queue evicts the oldest (0: lwIP keeps no count). */
#if TCP_LISTEN_BACKLOG
#define SYN_LISTEN_BACKLOG TCP_DEFAULT_LISTEN_BACKLOG
#else
#define SYN_LISTEN_BACKLOG 0
#endif

static int render_syn(char *out, size_t size)
{
    return snprintf(out, size,
        "syn_held: %" PRIu32 "\n"
        "syn_held_total: %" PRIu64 "\n"
        "syn_expired: %" PRIu64 "\n"
        "syn_overflow: %" PRIu64 "\n"
        "syn_time_wait_reopened: %" PRIu64 "\n"
        "syn_half_open_evicted: %" PRIu64 "\n"
        "syn_half_open_dropped: %" PRIu64 "\n"
        "syn_listen_ack_reset: %" PRIu64 "\n"
        "syn_orphans_freed: %" PRIu64 "\n"
        "syn_rcvd_stale_dropped: %" PRIu64 "\n"
        "syn_listen_backlog: %u\n",
        syn_queue_stats.held, syn_queue_stats.held_total, syn_queue_stats.expired,
        syn_queue_stats.overflow, syn_queue_stats.time_wait_reopened,
        syn_queue_stats.half_open_evicted, syn_queue_stats.half_open_dropped,
        syn_queue_stats.listen_ack_reset, syn_queue_stats.orphans_freed,
        syn_queue_stats.syn_rcvd_stale_dropped, (unsigned)SYN_LISTEN_BACKLOG);
}

/* /dav/ request contexts: taken, and requests waiting for one; the store's
 * log blocks compacted since it was mounted */
static int render_dav(char *out, size_t size)
{
    const struct dav_stats *ds = dav_get_stats();
    const struct store *st = dav_mounted_store();
    return snprintf(out, size,
        "dav_ctx_used: %" PRIu32 "\n"
        "dav_ctx_max: %u\n"
        "dav_waiting: %" PRIu32 "\n"
        "dav_waited: %" PRIu64 "\n"
        "dav_refused: %" PRIu64 "\n"
        "store_compactions: %" PRIu32 "\n",
        ds->ctx_used, (unsigned)DAV_CTX_MAX, ds->waiting, ds->waited,
        ds->refused, st ? st->compactions : 0);
}

/* Responses kept rendered and sent by reference (dav_fragments.c); nothing
 * in a build or a run without them. */
static int render_fragments(char *out, size_t size)
{
    const struct dav_fragment_stats *fs = dav_fragments_stats();
    if (!dav_fragments_enabled())
        return 0;
    return snprintf(out, size,
        "fragments_capacity: %" PRIu32 "\n"
        "fragments_bytes: %" PRIu32 "\n"
        "fragments_hits: %" PRIu64 "\n"
        "fragments_misses: %" PRIu64 "\n"
        "fragments_rendered: %" PRIu64 "\n"
        "fragments_not_kept: %" PRIu64 "\n"
        "fragments_evicted: %" PRIu64 "\n"
        "fragments_in_flight_refusals: %" PRIu64 "\n",
        fs->capacity, fs->bytes, fs->hits, fs->misses, fs->rendered,
        fs->not_kept, fs->evicted, fs->refused_in_flight);
}

static int render_heap(char *out, size_t size)
{
#if LWIP_STATS && MEM_STATS
    return snprintf(out, size, "heap_used: %lu\nheap_max: %lu\nheap_err: %lu\n",
                    (unsigned long)lwip_stats.mem.used, (unsigned long)lwip_stats.mem.max,
                    (unsigned long)lwip_stats.mem.err);
#else
    (void)out;
    (void)size;
    return 0;
#endif
}

/* TCP connections by state, and how many hold segments waiting to be sent
 * or acknowledged: where a stuck or leaking connection sits. The walk is
 * over every active PCB, which is fine for a diagnostic page; parked idle
 * connections (tcp_park.h) are established ones off that list. TIME-WAIT:
 * tcp_time_wait_listed of them on lwIP's list, the rest held off it
 * (tcp_time_wait.h; tcp_time_wait_max 0: that is off). */
static int render_tcp_states(char *out, size_t size)
{
    unsigned long syn_rcvd = 0, established = tcp_park_count(), closing = 0, time_wait_listed = 0, queued = 0;
    const struct tcp_pcb *pcb;

    for (pcb = tcp_active_pcbs; pcb; pcb = pcb->next) {
        if (pcb->state == SYN_RCVD)
            syn_rcvd++;
        else if (pcb->state == ESTABLISHED)
            established++;
        else
            closing++;
        if (pcb->unsent || pcb->unacked)
            queued++;
    }
    for (pcb = tcp_tw_pcbs; pcb; pcb = pcb->next)
        time_wait_listed++;
    return snprintf(out, size,
                    "tcp_syn_rcvd: %lu\ntcp_established: %lu\ntcp_closing: %lu\n"
                    "tcp_time_wait: %lu\ntcp_time_wait_listed: %lu\ntcp_time_wait_max: %lu\n"
                    "tcp_time_wait_expired: %" PRIu64 "\ntcp_time_wait_recycled: %" PRIu64 "\n"
                    "tcp_time_wait_stale: %" PRIu64 "\ntcp_time_wait_stale_unacked: %" PRIu64 "\n"
                    "tcp_pcbs_sending: %lu\ntcp_parked: %lu\n",
                    syn_rcvd, established, closing, (unsigned long)tcp_time_wait_count(), time_wait_listed,
                    (unsigned long)(TCP_TIME_WAIT_BUCKETS ? TCP_TIME_WAIT_MAX : 0),
                    tcp_time_wait_stats.expired, tcp_time_wait_stats.recycled, tcp_time_wait_stats.stale,
                    tcp_time_wait_stats.stale_unacked, queued,
                    (unsigned long)tcp_park_count());
}

/* lwIP's pools: what is in use now and at most, so a leak shows as a level
 * that does not come back once the appliance is idle. */
static int render_pools(char *out, size_t size)
{
#if LWIP_STATS && MEMP_STATS
    return snprintf(out, size,
                    "pbuf_pool_used: %lu\npbuf_pool_max: %lu\npbuf_pool_err: %lu\n"
                    "tcp_pcbs_used: %lu\ntcp_pcbs_max: %lu\ntcp_pcbs_limit: %lu\ntcp_segs_used: %lu\n",
                    (unsigned long)lwip_stats.memp[MEMP_PBUF_POOL]->used,
                    (unsigned long)lwip_stats.memp[MEMP_PBUF_POOL]->max,
                    (unsigned long)lwip_stats.memp[MEMP_PBUF_POOL]->err,
                    (unsigned long)lwip_stats.memp[MEMP_TCP_PCB]->used,
                    (unsigned long)lwip_stats.memp[MEMP_TCP_PCB]->max,
                    (unsigned long)lwip_stats.memp[MEMP_TCP_PCB]->avail,
                    (unsigned long)lwip_stats.memp[MEMP_TCP_SEG]->used);
#else
    (void)out;
    (void)size;
    return 0;
#endif
}

static int (*const sections[])(char *out, size_t size) = {
    render_clock, render_network, render_http, render_syn, render_dav, render_fragments, render_heap, render_pools, render_tcp_states,
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
