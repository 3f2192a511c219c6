/*
 * lwIP netif driver for the host build, on an in-process libslirp.
 *
 * Both directions go through bounded frame queues, the host's stand-in for
 * the MAC's TX and RX slots: lwIP's linkoutput copies a frame into the TX
 * queue, slirp's send_packet copies one into the RX queue. slirp only sees
 * frames in slirp_netif_wait() and lwIP only in slirp_netif_input(), so
 * neither stack is ever re-entered from the other's callbacks, and the cycle
 * counters split the same way as on the SoC: the network's time (slirp, host
 * sockets) is idle time, copies and lwIP's handling are busy time.
 */
#define _GNU_SOURCE /* sigset_t */

#include "slirp_netif.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slirp_glue.h"

#include "lwip/etharp.h"
#include "lwip/pbuf.h"
#include "netif/ethernet.h"

#include "platform/port.h"

#define MAX_FRAME 1536       /* Ethernet frame without FCS, plus headroom for a VLAN tag */
#define RX_QUEUE_MAX 256     /* as the simulator's rx_queue default */
#define TX_QUEUE_MAX 4096    /* lwIP bounds what it sends by its send buffers */

struct frame {
    struct frame *next;
    size_t len;
    uint8_t data[];
};

struct frame_queue {
    struct frame *head, *tail;
    unsigned len, max;
};

struct slirp_netif {
    struct slirp_glue *glue;
    struct frame_queue to_lwip, to_slirp;
    uint32_t drop_every, count_to_lwip, count_to_slirp;
};

/* A lossy link (--drop-every): is this the Nth full-size frame one way?
 * Small frames (ACKs, requests and answers of a few hundred bytes) pass, so
 * the loss falls on bulk data, where TCP recovers by fast retransmission
 * rather than by its retransmission timeout. */
#define LOSSY_FRAME_MIN 1400

static int lost(const struct slirp_netif *s, uint32_t *count, size_t len)
{
    if (!s->drop_every || len < LOSSY_FRAME_MIN || ++*count < s->drop_every)
        return 0;
    *count = 0;
    return 1;
}

/* frame queues --------------------------------------------------------------- */

static struct frame *frame_new(size_t len)
{
    struct frame *f = malloc(sizeof(*f) + len);
    if (f) {
        f->next = NULL;
        f->len = len;
    }
    return f;
}

static int queue_full(const struct frame_queue *q) { return q->len >= q->max; }

static void queue_push(struct frame_queue *q, struct frame *f)
{
    if (q->tail)
        q->tail->next = f;
    else
        q->head = f;
    q->tail = f;
    q->len++;
}

static struct frame *queue_pop(struct frame_queue *q)
{
    struct frame *f = q->head;
    if (f) {
        q->head = f->next;
        if (!q->head)
            q->tail = NULL;
        q->len--;
    }
    return f;
}

static void queue_clear(struct frame_queue *q)
{
    struct frame *f;
    while ((f = queue_pop(q)))
        free(f);
}

/* slirp's frames to the guest. Dropping is allowed (slirp_glue.h): TCP
 * recovers, as it does when the SoC's MAC has no free RX slot. */
static void queue_for_lwip(const uint8_t *frame, size_t len, void *opaque)
{
    struct slirp_netif *s = opaque;
    struct frame *f;

    if (len > MAX_FRAME || queue_full(&s->to_lwip) || lost(s, &s->count_to_lwip, len) ||
        !(f = frame_new(len))) {
        port_stats.rx_dropped++;
        return;
    }
    memcpy(f->data, frame, len);
    queue_push(&s->to_lwip, f);
}

/* driver interface ------------------------------------------------------------ */

static err_t slirp_netif_output(struct netif *netif, struct pbuf *p)
{
    struct slirp_netif *s = netif->state;
    uint64_t start = port_cycles();
    struct frame *f;

    if (p->tot_len > MAX_FRAME || queue_full(&s->to_slirp) || !(f = frame_new(p->tot_len))) {
        port_stats.tx_dropped++;
        return ERR_IF;
    }
    pbuf_copy_partial(p, f->data, p->tot_len, 0);
    port_stats.frames_out++;
    port_stats.bytes_out += f->len;
    if (lost(s, &s->count_to_slirp, f->len))
        free(f); /* sent, as far as lwIP knows */
    else
        queue_push(&s->to_slirp, f);

    port_stats.tx_copy_cycles += port_cycles() - start;
    return ERR_OK;
}

int slirp_netif_wait(struct netif *netif, uint32_t timeout_ms, const sigset_t *sigmask)
{
    struct slirp_netif *s = netif->state;
    struct frame *f;
    int rc, err;

    while ((f = queue_pop(&s->to_slirp))) {
        slirp_glue_input(s->glue, f->data, f->len);
        free(f);
    }
    timeout_ms = slirp_glue_run_timers(s->glue, timeout_ms);
    slirp_glue_fill(s->glue, &timeout_ms);
    if (s->to_lwip.head)
        timeout_ms = 0; /* lwIP has frames to handle now */
    rc = slirp_glue_poll(s->glue, timeout_ms, sigmask);
    err = errno;
    slirp_glue_run_timers(s->glue, 0);
    return rc < 0 && err == EINTR ? -1 : 0;
}

int slirp_netif_input(struct netif *netif)
{
    struct slirp_netif *s = netif->state;
    struct frame *f;
    int handled = 0;

    while ((f = queue_pop(&s->to_lwip))) {
        uint64_t start = port_cycles(), copied;
        struct pbuf *p = pbuf_alloc(PBUF_RAW, (u16_t)f->len, PBUF_POOL);

        if (p)
            pbuf_take(p, f->data, (u16_t)f->len);
        copied = port_cycles();
        port_stats.rx_copy_cycles += copied - start;
        if (!p) {
            port_stats.rx_dropped++;
        } else {
            port_stats.frames_in++;
            port_stats.bytes_in += f->len;
            if (netif->input(p, netif) != ERR_OK)
                pbuf_free(p);
            port_stats.rx_handle_cycles += port_cycles() - copied;
        }
        free(f);
        handled++;
    }
    return handled;
}

err_t slirp_netif_init(struct netif *netif)
{
    /* a locally administered address, distinct from the SoC's */
    static const uint8_t mac[6] = {0x12, 0xe2, 0xd5, 0x00, 0x00, 0x01};
    const struct slirp_netif_config *config = netif->state;
    /* the firmware has a static address and no resolver */
    static const struct slirp_glue_config glue_config = {.name = "[slirp]", .no_dhcp_dns = true};
    static const struct slirp_glue_hooks hooks = {.to_guest = queue_for_lwip};
    struct slirp_netif *s;
    char guest_ip[IP4ADDR_STRLEN_MAX];

    s = calloc(1, sizeof(*s));
    if (!s)
        return ERR_MEM;
    s->to_lwip.max = RX_QUEUE_MAX;
    s->to_slirp.max = TX_QUEUE_MAX;
    s->drop_every = config->drop_every;

    s->glue = slirp_glue_new(&glue_config, &hooks, s);
    if (!s->glue) {
        free(s);
        return ERR_IF;
    }

    ip4addr_ntoa_r(netif_ip4_addr(netif), guest_ip, sizeof(guest_ip));
    if (slirp_glue_forward(s->glue, config->host_port, guest_ip, config->guest_port) != 0) {
        fprintf(stderr, "[slirp] cannot listen on 127.0.0.1:%u (%s): choose another port\n",
                (unsigned)config->host_port, strerror(errno));
        netif->state = s;
        slirp_netif_shutdown(netif);
        return ERR_IF;
    }

    netif->state = s;
    netif->name[0] = 's';
    netif->name[1] = 'l';
    netif->output = etharp_output;
    netif->linkoutput = slirp_netif_output;
    netif->mtu = 1500;
    netif->hwaddr_len = 6;
    memcpy(netif->hwaddr, mac, 6);
    netif->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP | NETIF_FLAG_ETHERNET | NETIF_FLAG_LINK_UP;
    return ERR_OK;
}

void slirp_netif_shutdown(struct netif *netif)
{
    struct slirp_netif *s = netif->state;

    if (!s)
        return;
    slirp_glue_free(s->glue);
    queue_clear(&s->to_lwip);
    queue_clear(&s->to_slirp);
    free(s);
    netif->state = NULL;
}
