/* SYNs held while every TCP PCB is taken (see syn_queue.h). */
#include "net/syn_queue.h"

#include <string.h>

#include "lwip/inet_chksum.h"
#include "lwip/ip.h"
#include "lwip/ip4.h"
#include "lwip/memp.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "lwip/priv/tcp_priv.h"
#include "lwip/prot/ip4.h"
#include "lwip/prot/tcp.h"
#include "lwip/stats.h"
#include "lwip/sys.h"

#include "platform/app_config.h"
#include "net/tcp_time_wait.h"

#define TCP_OPT_MSS 2
#define HELD_SYN_TCP_LEN (TCP_HLEN + 4)   /* the header and an MSS option */

struct held_syn {
    uint32_t src_ip;      /* network order */
    uint32_t seqno;
    uint32_t since_ms;
    uint16_t src_port, dest_port;
    uint16_t mss;         /* 0: the peer sent none */
    uint16_t wnd;
};

struct syn_queue_stats syn_queue_stats;

/* A segment for a half-open connection whose sequence numbers are outside
 * its window: an old duplicate, such as the FIN of an older connection on
 * the same port, which the peer still holds (slirp reuses a host client's
 * port for its connection to the SoC while the older one on that port is
 * still closing). lwIP checks the ACK first and answers with a reset whose
 * sequence number is that segment's ACK; a 4.4BSD-derived stack (slirp's)
 * takes such a reset for its new connection as well ("keep on processing
 * for RST"): ab -n 10,000 -c 100 through slirp lost 3 requests so, each on a
 * connection whose request was on its way. RFC 793 says: not acceptable,
 * drop it (Linux also does, with a rate-limited ACK). Dropped here, silently:
 * the handshake's own ACK always starts at rcv_nxt. */
static int stale_in_syn_rcvd(const struct tcp_pcb *pcb, const struct tcp_hdr *hdr, const struct pbuf *p)
{
    uint8_t flags = TCPH_FLAGS(hdr);
    uint32_t len, last;

    if (pcb->state != SYN_RCVD || (flags & (TCP_SYN | TCP_RST)))
        return 0;   /* every segment comes here: the state first */
    len = p->tot_len + ((flags & TCP_FIN) ? 1u : 0u);
    last = hdr->seqno + (len ? len - 1 : 0);
    /* acceptable: some of it at or after rcv_nxt, and it starts within the window */
    if (TCP_SEQ_GEQ(last, pcb->rcv_nxt) && TCP_SEQ_LT(hdr->seqno, pcb->rcv_nxt + LWIP_MAX(pcb->rcv_wnd, 1)))
        return 0;
    syn_queue_stats.syn_rcvd_stale_dropped++;
    return 1;
}

/* The hook's work with or without the SYN queue: count the listener's
 * resets, drop stale segments for half-open connections, and hand segments
 * for TIME-WAIT connections to tcp_time_wait.c. ERR_OK: the hook goes on. */
static err_t any_queue_checks(struct tcp_pcb *pcb, struct tcp_hdr *hdr, struct pbuf *p)
{
    uint8_t flags = TCPH_FLAGS(hdr);

    /* lwIP answers an ACK that finds only the listener with a reset */
    if (pcb->state == LISTEN && (flags & (TCP_ACK | TCP_RST)) == TCP_ACK)
        syn_queue_stats.listen_ack_reset++;
    if (stale_in_syn_rcvd(pcb, hdr, p))
        return ERR_ABRT;
    if (pcb->state == TIME_WAIT && !(flags & TCP_SYN))
        return tcp_time_wait_segment(pcb, hdr, p->tot_len);
    return ERR_OK;
}

static void half_open_ended(void *arg, err_t err)
{
    (void)arg;
    (void)err;
    syn_queue_stats.half_open_dropped++;
}

uint32_t *syn_queue_output_hook(struct tcp_pcb *pcb, uint32_t *opts)
{
    if (pcb && pcb->state == SYN_RCVD && !pcb->errf)
        tcp_err(pcb, half_open_ended);
    return opts;
}

#if SYN_QUEUE_LEN > 0

static struct held_syn queue[SYN_QUEUE_LEN];
static uint32_t head;          /* oldest */
static uint8_t reinjecting;    /* our own SYN going through tcp_input */

/* Would tcp_alloc() find a PCB now? A free one, or one in TIME-WAIT, which
 * lwIP recycles first. */
static int pcb_available(void)
{
    if (tcp_tw_pcbs)
        return 1;
#if MEMP_STATS
    return lwip_stats.memp[MEMP_TCP_PCB]->used < lwip_stats.memp[MEMP_TCP_PCB]->avail;
#else
    {
        void *probe = memp_malloc(MEMP_TCP_PCB);
        if (!probe)
            return 0;
        memp_free(MEMP_TCP_PCB, probe);
        return 1;
    }
#endif
}

static struct held_syn *slot(uint32_t i)
{
    return &queue[(head + i) % SYN_QUEUE_LEN];
}

static uint8_t option_byte(const struct tcp_hdr *hdr, uint16_t opt1len, const uint8_t *opt2,
                           uint16_t i)
{
    return i < opt1len ? ((const uint8_t *)hdr)[TCP_HLEN + i] : opt2[i - opt1len];
}

static uint16_t peer_mss(const struct tcp_hdr *hdr, uint16_t optlen, uint16_t opt1len,
                         const uint8_t *opt2)
{
    uint16_t i = 0;
    while (i < optlen) {
        uint8_t kind = option_byte(hdr, opt1len, opt2, i), len;
        if (kind == 0)
            break;
        if (kind == 1) {
            i++;
            continue;
        }
        if (i + 1 >= optlen)
            break;
        len = option_byte(hdr, opt1len, opt2, i + 1);
        if (len < 2 || i + len > optlen)
            break;
        if (kind == TCP_OPT_MSS && len == 4)
            return (uint16_t)(option_byte(hdr, opt1len, opt2, i + 2) << 8 |
                              option_byte(hdr, opt1len, opt2, i + 3));
        i += len;
    }
    return 0;
}

/* Keep the SYN being processed; 0 on success (or when it is held already). */
static int hold(const struct tcp_hdr *hdr, uint16_t optlen, uint16_t opt1len, const uint8_t *opt2)
{
    struct held_syn *s;
    uint32_t i;

    /* header fields are in host order by now (tcp_input converted them) */
    for (i = 0; i < syn_queue_stats.held; i++) {
        s = slot(i);
        if (s->src_ip == ip4_current_src_addr()->addr && s->src_port == hdr->src &&
            s->seqno == hdr->seqno)
            return 0;   /* a retransmission of a SYN already held */
    }
    if (syn_queue_stats.held == SYN_QUEUE_LEN) {
        syn_queue_stats.overflow++;
        return -1;
    }
    s = slot(syn_queue_stats.held++);
    s->src_ip = ip4_current_src_addr()->addr;
    s->seqno = hdr->seqno;
    s->since_ms = sys_now();
    s->src_port = hdr->src;
    s->dest_port = hdr->dest;
    s->wnd = hdr->wnd;
    s->mss = peer_mss(hdr, optlen, opt1len, opt2);
    syn_queue_stats.held_total++;
    return 0;
}

#if TCP_LISTEN_BACKLOG
/* A SYN for a listener whose backlog is full of half-open connections (a
 * SYN flood from addresses that never answer fills it in a moment, and each
 * would hold its place for TCP_SYN_RCVD_TIMEOUT): the oldest of them gives
 * its place up, reset, so the new SYN gets an answer. A real client's
 * handshake completes within one round trip, long before a flood can push
 * it out. */
static void evict_oldest_half_open(struct tcp_pcb_listen *lpcb)
{
    struct tcp_pcb *pcb, *prev = NULL, *oldest = NULL, *oldest_prev = NULL;

    if (lpcb->accepts_pending < lpcb->backlog)
        return;
    /* new PCBs go to the front of the list: the last one found is the oldest */
    for (pcb = tcp_active_pcbs; pcb; prev = pcb, pcb = pcb->next)
        if (pcb->state == SYN_RCVD && pcb->listener == lpcb) {
            oldest = pcb;
            oldest_prev = prev;
        }
    if (oldest) {
        /* to the front: lwIP's removal walks the list from there, and the
         * oldest is at its end, so the abort would walk every PCB again */
        if (oldest_prev) {
            oldest_prev->next = oldest->next;
            oldest->next = tcp_active_pcbs;
            tcp_active_pcbs = oldest;
        }
        tcp_err(oldest, NULL);   /* counted here, not in half_open_dropped as well */
        tcp_abort(oldest);
        syn_queue_stats.half_open_evicted++;
    }
}
#endif

err_t syn_queue_input_hook(struct tcp_pcb *pcb, struct tcp_hdr *hdr, uint16_t optlen,
                           uint16_t opt1len, uint8_t *opt2, struct pbuf *p)
{
    uint8_t flags = TCPH_FLAGS(hdr);
    err_t err = any_queue_checks(pcb, hdr, p);

    /* (a TIME-WAIT segment it lets through is not a SYN: ERR_OK below) */
    if (err != ERR_OK)
        return err;
    /* the handshake completes now: what follows is the application's to count */
    if (pcb->state == SYN_RCVD && (flags & (TCP_ACK | TCP_RST | TCP_SYN)) == TCP_ACK &&
        TCP_SEQ_BETWEEN(hdr->ackno, pcb->lastack + 1, pcb->snd_nxt))
        tcp_err(pcb, NULL);
    if (reinjecting || (flags & (TCP_SYN | TCP_ACK | TCP_RST | TCP_FIN)) != TCP_SYN)
        return ERR_OK;
#if TCP_LISTEN_BACKLOG
    if (pcb->state == LISTEN)
        evict_oldest_half_open((struct tcp_pcb_listen *)pcb);
#endif
    if (pcb->state == TIME_WAIT) {
        /* A new connection from the port of one we closed (clients reuse
         * ports soon; the server, closing first, holds TIME-WAIT for 2 MSL).
         * lwIP answers with an ACK of the old connection, the peer resets
         * and retries seconds later, again and again. RFC 1122 section
         * 4.2.2.13 lets a SYN whose sequence number is beyond the old
         * connection's reopen it: drop the old state, queue the SYN. */
        if (!TCP_SEQ_GT(hdr->seqno, pcb->rcv_nxt) || hold(hdr, optlen, opt1len, opt2) != 0)
            return ERR_OK;
        tcp_abort(pcb);   /* TIME-WAIT: freed without a reset */
        syn_queue_stats.time_wait_reopened++;
        return ERR_ABRT;
    }
    if (pcb->state != LISTEN || (!syn_queue_stats.held && pcb_available()))
        return ERR_OK;
    /* lwIP would drop it (or serve it before the older ones held) */
    return hold(hdr, optlen, opt1len, opt2) == 0 ? ERR_ABRT : ERR_OK;
}

/* The SYN as the peer sent it (as far as lwIP cares: no other options),
 * through the IPv4 input path of the default netif. */
static void reinject(const struct held_syn *s)
{
    struct netif *netif = netif_default;
    struct pbuf *p;
    struct ip_hdr *iph;
    struct tcp_hdr *tcph;
    uint8_t *opt;
    ip_addr_t src, dest;

    if (!netif)
        return;
    p = pbuf_alloc(PBUF_RAW, IP_HLEN + HELD_SYN_TCP_LEN, PBUF_RAM);
    if (!p)
        return;
    memset(p->payload, 0, p->len);
    ip_addr_set_ip4_u32_val(src, s->src_ip);
    ip_addr_copy_from_ip4(dest, *netif_ip4_addr(netif));

    tcph = (struct tcp_hdr *)((uint8_t *)p->payload + IP_HLEN);
    tcph->src = lwip_htons(s->src_port);
    tcph->dest = lwip_htons(s->dest_port);
    tcph->seqno = lwip_htonl(s->seqno);
    TCPH_HDRLEN_FLAGS_SET(tcph, HELD_SYN_TCP_LEN / 4, TCP_SYN);
    tcph->wnd = lwip_htons(s->wnd);
    opt = (uint8_t *)(tcph + 1);
    if (s->mss) {
        opt[0] = TCP_OPT_MSS;
        opt[1] = 4;
        opt[2] = (uint8_t)(s->mss >> 8);
        opt[3] = (uint8_t)s->mss;
    } else {
        opt[0] = opt[1] = opt[2] = opt[3] = 1;   /* no-operation */
    }
    pbuf_remove_header(p, IP_HLEN);
    tcph->chksum = ip_chksum_pseudo(p, IP_PROTO_TCP, HELD_SYN_TCP_LEN, &src, &dest);
    pbuf_add_header(p, IP_HLEN);

    iph = (struct ip_hdr *)p->payload;
    IPH_VHL_SET(iph, 4, IP_HLEN / 4);
    IPH_LEN_SET(iph, lwip_htons(IP_HLEN + HELD_SYN_TCP_LEN));
    IPH_TTL_SET(iph, 64);
    IPH_PROTO_SET(iph, IP_PROTO_TCP);
    iph->src.addr = s->src_ip;
    iph->dest.addr = ip4_addr_get_u32(netif_ip4_addr(netif));
    IPH_CHKSUM_SET(iph, inet_chksum(iph, IP_HLEN));

    reinjecting = 1;
    ip4_input(p, netif);
    reinjecting = 0;
}

/* A connection the application has closed (TF_RXCLOSED) and whose FIN is
 * still out or unanswered: FIN_WAIT_1/2, CLOSING, LAST_ACK. */
static int orphan(const struct tcp_pcb *pcb)
{
    return (pcb->flags & TF_RXCLOSED) &&
           (pcb->state == FIN_WAIT_1 || pcb->state == FIN_WAIT_2 || pcb->state == CLOSING ||
            pcb->state == LAST_ACK);
}

/* Every PCB taken and a SYN waiting: the closed connection that has heard
 * nothing from its peer longest is freed for it (reset), as Linux drops
 * orphaned sockets first. A peer that vanished leaves such a PCB
 * retransmitting its FIN for TCP_MAXRTX backoffs, a minute and more: 4,400
 * idle peers closed by the server's idle timeout held every PCB that way.
 * lwIP's tcp_alloc() would free LAST_ACK and CLOSING ones, not FIN_WAIT, and
 * only for a SYN it gets, which this queue holds. The walk over lwIP's active
 * list runs at most once per ORPHAN_WALK_MS when it finds none. */
#define ORPHAN_WALK_MS 100
static int free_orphan(void)
{
    static uint32_t none_at;
    static uint8_t none_seen;
    struct tcp_pcb *pcb, *oldest = NULL;

    if (none_seen && (uint32_t)(sys_now() - none_at) < ORPHAN_WALK_MS)
        return 0;
    for (pcb = tcp_active_pcbs; pcb; pcb = pcb->next)
        if (orphan(pcb) && (!oldest || (uint32_t)(tcp_ticks - pcb->tmr) > (uint32_t)(tcp_ticks - oldest->tmr)))
            oldest = pcb;
    none_seen = !oldest;
    none_at = sys_now();
    if (!oldest)
        return 0;
    tcp_abort(oldest);
    syn_queue_stats.orphans_freed++;
    return 1;
}

void syn_queue_poll(void)
{
    while (syn_queue_stats.held) {
        struct held_syn s = *slot(0);
        int expired = (uint32_t)(sys_now() - s.since_ms) > SYN_QUEUE_HOLD_MS;

        if (!expired && !pcb_available() && !free_orphan())
            return;
        head = (head + 1) % SYN_QUEUE_LEN;
        syn_queue_stats.held--;
        if (expired)
            syn_queue_stats.expired++;   /* the peer has given up by now */
        else
            reinject(&s);
    }
}

int syn_queue_needs_pcb(void)
{
    return syn_queue_stats.held && !pcb_available();
}

#else /* SYN_QUEUE_LEN == 0: lwIP drops SYNs it has no PCB for */

err_t syn_queue_input_hook(struct tcp_pcb *pcb, struct tcp_hdr *hdr, uint16_t optlen,
                           uint16_t opt1len, uint8_t *opt2, struct pbuf *p)
{
    (void)optlen;
    (void)opt1len;
    (void)opt2;
    return any_queue_checks(pcb, hdr, p);
}

void syn_queue_poll(void)
{
}

int syn_queue_needs_pcb(void)
{
    return 0;
}

#endif
