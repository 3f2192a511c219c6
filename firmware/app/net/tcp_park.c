/* Idle TCP connections parked off lwIP's active list (tcp_park.h). */
#include "net/tcp_park.h"

#include <stddef.h>

#include "lwip/def.h"
#include "lwip/ip4.h"
#include "lwip/pbuf.h"
#include "lwip/priv/tcp_priv.h"
#include "lwip/prot/ip4.h"
#include "lwip/prot/tcp.h"

#include "platform/app_config.h"
#include "net/tcp_conn_hash.h"

#if HTTPD_PARK_BUCKETS

#if HTTPD_PARK_BUCKETS & (HTTPD_PARK_BUCKETS - 1)
#error "HTTPD_PARK_BUCKETS must be a power of two"
#endif

static struct tcp_park_node *buckets[HTTPD_PARK_BUCKETS];
static struct age_list idle_order;   /* parked, in the order they went idle */
static uint32_t parked;

static struct tcp_park_node **bucket(uint32_t remote_ip, uint16_t remote_port, uint16_t local_port)
{
    return &buckets[tcp_conn_hash(remote_ip, remote_port, local_port, HTTPD_PARK_BUCKETS)];
}

static struct tcp_park_node **bucket_of(const struct tcp_pcb *pcb) { return &buckets[tcp_conn_hash_pcb(pcb, HTTPD_PARK_BUCKETS)]; }

/* Nothing lwIP's timers would do for it: no data or FIN in flight, no ACK
 * owed, no persist or out-of-order state, nothing held back from the app. */
static int pcb_idle(const struct tcp_pcb *pcb)
{
    return pcb->state == ESTABLISHED && !pcb->unsent && !pcb->unacked &&
#if TCP_QUEUE_OOSEQ
           !pcb->ooseq &&
#endif
           !pcb->refused_data && pcb->persist_backoff == 0 &&
           !(pcb->flags & (TF_ACK_DELAY | TF_ACK_NOW | TF_CLOSEPEND | TF_RXCLOSED | TF_FIN));
}

int tcp_park(struct tcp_park_node *node, struct tcp_pcb *pcb, uint32_t since_ms)
{
    struct tcp_park_node **head;

    if (node->pcb || !pcb_idle(pcb) || !IP_IS_V4(&pcb->remote_ip))
        return -1;
    /* the walk finds it near the front: it was active a moment ago, and the
     * demultiplexing moves each connection it serves to the front */
    TCP_RMV_ACTIVE(pcb);
    node->pcb = pcb;
    node->since_ms = since_ms;
    head = bucket_of(pcb);
    node->hash_next = *head;
    *head = node;
    age_list_append(&idle_order, &node->age);
    parked++;
    return 0;
}

void tcp_unpark(struct tcp_park_node *node)
{
    struct tcp_park_node **link;

    if (!node->pcb)
        return;
    for (link = bucket_of(node->pcb); *link != node; link = &(*link)->hash_next)
        ;
    *link = node->hash_next;
    age_list_unlink(&idle_order, &node->age);
    parked--;
    TCP_REG_ACTIVE(node->pcb);
    node->pcb = NULL;
}

struct tcp_park_node *tcp_park_oldest(void) { return AGE_ENTRY(idle_order.oldest, struct tcp_park_node, age); }

struct tcp_park_node *tcp_park_idle_before(uint32_t cutoff_ms)
{
    struct tcp_park_node *oldest = tcp_park_oldest();
    return oldest && (int32_t)(cutoff_ms - oldest->since_ms) > 0 ? oldest : NULL;
}

uint32_t tcp_park_count(void) { return parked; }

/* LWIP_HOOK_IP4_INPUT: a TCP segment for a parked connection puts it back on
 * the active list (at its front) before lwIP looks for it. Never eats the
 * packet; a damaged one unparks at worst, and the connection parks again. */
int tcp_park_input(struct pbuf *p, struct netif *inp)
{
    const struct ip_hdr *iph = p->payload;
    const struct tcp_hdr *tcph;
    struct tcp_park_node *node;
    uint16_t hlen;

    (void)inp;
    if (!parked || p->len < IP_HLEN || IPH_PROTO(iph) != IP_PROTO_TCP ||
        (IPH_OFFSET(iph) & PP_HTONS(IP_OFFMASK)))
        return 0;
    hlen = IPH_HL_BYTES(iph);
    if (p->len < hlen + 4)
        return 0;
    tcph = (const struct tcp_hdr *)((const uint8_t *)p->payload + hlen);
    for (node = *bucket(ip4_addr_get_u32(&iph->src), lwip_ntohs(tcph->src), lwip_ntohs(tcph->dest));
         node; node = node->hash_next) {
        const struct tcp_pcb *pcb = node->pcb;
        if (pcb->remote_port == lwip_ntohs(tcph->src) && pcb->local_port == lwip_ntohs(tcph->dest) &&
            ip4_addr_get_u32(ip_2_ip4(&pcb->remote_ip)) == ip4_addr_get_u32(&iph->src)) {
            tcp_unpark(node);
            break;
        }
    }
    return 0;
}

#else /* parking off */

int tcp_park(struct tcp_park_node *node, struct tcp_pcb *pcb, uint32_t since_ms)
{
    (void)node;
    (void)pcb;
    (void)since_ms;
    return -1;
}

void tcp_unpark(struct tcp_park_node *node) { (void)node; }

struct tcp_park_node *tcp_park_idle_before(uint32_t cutoff_ms)
{
    (void)cutoff_ms;
    return NULL;
}

uint32_t tcp_park_count(void) { return 0; }

struct tcp_park_node *tcp_park_oldest(void) { return NULL; }

int tcp_park_input(struct pbuf *p, struct netif *inp)
{
    (void)p;
    (void)inp;
    return 0;
}

#endif
