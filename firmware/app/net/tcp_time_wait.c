/* Connections in TIME-WAIT kept off lwIP's list (tcp_time_wait.h). */
#include "net/tcp_time_wait.h"

#include <stddef.h>

#include "lwip/def.h"
#include "lwip/ip4.h"
#include "lwip/memp.h"
#include "lwip/pbuf.h"
#include "lwip/priv/tcp_priv.h"
#include "lwip/prot/ip4.h"
#include "lwip/prot/tcp.h"
#include "lwip/stats.h"
#include "lwip/sys.h"
#include "lwip/tcp.h"

#include "util/age_list.h"
#include "platform/app_config.h"
#include "net/tcp_conn_hash.h"

struct tcp_time_wait_stats tcp_time_wait_stats;

#if TCP_TIME_WAIT_BUCKETS

#if TCP_TIME_WAIT_BUCKETS & (TCP_TIME_WAIT_BUCKETS - 1)
#error "TCP_TIME_WAIT_BUCKETS must be a power of two"
#endif
#if !MEMP_STATS
#error "tcp_time_wait.c needs MEMP_STATS: it frees a PCB in TIME-WAIT when none is left"
#endif

struct held {
    struct tcp_pcb *pcb;
    uint32_t since_ms;    /* sys_now() when it came off lwIP's list */
    struct held *hash_next;
    struct age_link age;  /* the order they entered */
};

/* One record per PCB at most: the pool never runs out. */
LWIP_MEMPOOL_DECLARE(tcp_time_wait_held, MEMP_NUM_TCP_PCB, sizeof(struct held), "TIME-WAIT")

static struct held *buckets[TCP_TIME_WAIT_BUCKETS];
static struct age_list entry_order;
static uint32_t held_count;
static uint8_t pool_ready;

static struct held **bucket(uint32_t remote_ip, uint16_t remote_port, uint16_t local_port)
{
    return &buckets[tcp_conn_hash(remote_ip, remote_port, local_port, TCP_TIME_WAIT_BUCKETS)];
}

static struct held **bucket_of(const struct tcp_pcb *pcb) { return &buckets[tcp_conn_hash_pcb(pcb, TCP_TIME_WAIT_BUCKETS)]; }

static void hold(struct held *h, struct tcp_pcb *pcb)
{
    struct held **head = bucket_of(pcb);
    h->pcb = pcb;
    h->since_ms = sys_now();
    h->hash_next = *head;
    *head = h;
    age_list_append(&entry_order, &h->age);
    held_count++;
}

/* Back on lwIP's list (at its front), the record freed. */
static struct tcp_pcb *release(struct held *h)
{
    struct tcp_pcb *pcb = h->pcb;
    struct held **link;

    for (link = bucket_of(pcb); *link != h; link = &(*link)->hash_next)
        ;
    *link = h->hash_next;
    age_list_unlink(&entry_order, &h->age);
    held_count--;
    LWIP_MEMPOOL_FREE(tcp_time_wait_held, h);
    TCP_REG(&tcp_tw_pcbs, pcb);
    return pcb;
}

static struct held *oldest(void) { return AGE_ENTRY(entry_order.oldest, struct held, age); }

/* Fewer than TCP_TIME_WAIT_PCB_RESERVE free: had it to run empty first, each
 * SYN then would wait in syn_queue.c for a turn of the main loop (ab -n 10,000
 * -c 100 on the offload NIC: 87.9k cycles a request, 105.1k once the pool was
 * full of TIME-WAIT). */
static int pcb_pool_low(void)
{
    return lwip_stats.memp[MEMP_TCP_PCB]->used + TCP_TIME_WAIT_PCB_RESERVE >=
           lwip_stats.memp[MEMP_TCP_PCB]->avail;
}

/* Off lwIP's list: what entered TIME-WAIT, or was handed back to it, since
 * the last call; and the oldest freed while the PCB pool is low. */
static void take_list(void)
{
    struct tcp_pcb *pcb;

    if (!pool_ready) {
        LWIP_MEMPOOL_INIT(tcp_time_wait_held);
        pool_ready = 1;
    }
    while ((pcb = tcp_tw_pcbs) != NULL) {
        struct held *h = (struct held *)LWIP_MEMPOOL_ALLOC(tcp_time_wait_held);
        if (!h)
            break;
        tcp_tw_pcbs = pcb->next;
        pcb->next = NULL;
        hold(h, pcb);
    }
    while (entry_order.oldest && (held_count > TCP_TIME_WAIT_MAX || pcb_pool_low())) {
        tcp_time_wait_stats.recycled++;
        tcp_abort(release(oldest()));   /* in TIME-WAIT, at the list's front: freed, no reset */
    }
}

/* The expiry runs on sys_now(), not lwIP's slow timer, which stops while no
 * connection is on lwIP's lists. */
void tcp_time_wait_trim(void)
{
    uint32_t now;

    take_list();
    if (!entry_order.oldest)
        return;
    now = sys_now();
    while (entry_order.oldest && (uint32_t)(now - oldest()->since_ms) > 2 * TCP_MSL) {
        tcp_time_wait_stats.expired++;
        tcp_abort(release(oldest()));
    }
}

void tcp_time_wait_input(const struct pbuf *p)
{
    const struct ip_hdr *iph = p->payload;
    const struct tcp_hdr *tcph;
    struct held *h;
    uint16_t hlen, src_port, dest_port;

    take_list();
    if (!held_count || p->len < IP_HLEN || IPH_V(iph) != 4 || IPH_PROTO(iph) != IP_PROTO_TCP ||
        (IPH_OFFSET(iph) & PP_HTONS(IP_OFFMASK)))
        return;
    hlen = IPH_HL_BYTES(iph);
    if (p->len < hlen + 4)
        return;
    tcph = (const struct tcp_hdr *)((const uint8_t *)p->payload + hlen);
    src_port = lwip_ntohs(tcph->src);
    dest_port = lwip_ntohs(tcph->dest);
    for (h = *bucket(ip4_addr_get_u32(&iph->src), src_port, dest_port); h; h = h->hash_next) {
        const struct tcp_pcb *pcb = h->pcb;
        if (pcb->remote_port == src_port && pcb->local_port == dest_port &&
            ip4_addr_get_u32(ip_2_ip4(&pcb->remote_ip)) == ip4_addr_get_u32(&iph->src)) {
            release(h);
            return;
        }
    }
}

uint32_t tcp_time_wait_count(void)
{
    const struct tcp_pcb *pcb;
    uint32_t n = held_count;
    for (pcb = tcp_tw_pcbs; pcb; pcb = pcb->next)
        n++;
    return n;
}

#endif

/* The last ACK sent for a stale segment, by connection: a small table
 * indexed by the PCB's address. A collision or a freed PCB's entry costs at
 * most one ACK more or one ACK less within TCP_TIME_WAIT_OOW_ACK_MS, for a
 * segment that needs none. */
#define STALE_ACK_SLOTS 64
static struct {
    const struct tcp_pcb *pcb;
    uint32_t at_ms;
} stale_acks[STALE_ACK_SLOTS];

err_t tcp_time_wait_segment(struct tcp_pcb *pcb, const struct tcp_hdr *hdr, uint16_t payload_len)
{
    uint8_t flags = TCPH_FLAGS(hdr);
    uint32_t now;
    unsigned slot;

    /* lwIP ignores a reset, sends nothing for a bare ACK; a SYN has rules of its own */
    if (pcb->state != TIME_WAIT || (flags & (TCP_SYN | TCP_RST)) || (!payload_len && !(flags & TCP_FIN)))
        return ERR_OK;
    /* the peer's FIN again: our ACK was lost, lwIP ACKs it and restarts 2 MSL (RFC 793) */
    if ((flags & TCP_FIN) && hdr->seqno + payload_len + 1 == pcb->rcv_nxt)
        return ERR_OK;
    tcp_time_wait_stats.stale++;
    now = sys_now();
    slot = (unsigned)(((uintptr_t)pcb / sizeof(void *)) % STALE_ACK_SLOTS);
    if (stale_acks[slot].pcb == pcb && (uint32_t)(now - stale_acks[slot].at_ms) < TCP_TIME_WAIT_OOW_ACK_MS) {
        tcp_time_wait_stats.stale_unacked++;
        return ERR_ABRT;
    }
    stale_acks[slot].pcb = pcb;
    stale_acks[slot].at_ms = now;
    tcp_ack_now(pcb);
    tcp_output(pcb);
    return ERR_ABRT;
}

#if !TCP_TIME_WAIT_BUCKETS /* off: lwIP's own list, recycled only once every PCB is taken */

void tcp_time_wait_trim(void)
{
}

void tcp_time_wait_input(const struct pbuf *p)
{
    (void)p;
}

uint32_t tcp_time_wait_count(void)
{
    const struct tcp_pcb *pcb;
    uint32_t n = 0;
    for (pcb = tcp_tw_pcbs; pcb; pcb = pcb->next)
        n++;
    return n;
}

#endif
