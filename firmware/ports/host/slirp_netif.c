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
#define _GNU_SOURCE /* ppoll */

#include "slirp_netif.h"
#include "slirp_backlog.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <slirp/libslirp.h>

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

struct slirp_timer {
    struct slirp_timer *next;
    SlirpTimerCb cb;
    void *cb_opaque;
    int64_t expire_ms; /* -1: not armed */
};

struct slirp_netif {
    Slirp *slirp;
    struct slirp_timer *timers;
    struct frame_queue to_lwip, to_slirp;
    struct pollfd *pollfds;
    int npollfds, pollfds_cap;
};

static int64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
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

/* libslirp callbacks ------------------------------------------------------- */

/* A frame from the network to the guest. Dropping is allowed (libslirp.h):
 * TCP recovers, as it does when the SoC's MAC has no free RX slot. */
static ssize_t cb_send_packet(const void *buf, size_t len, void *opaque)
{
    struct slirp_netif *s = opaque;
    struct frame *f;

    if (len > MAX_FRAME || queue_full(&s->to_lwip) || !(f = frame_new(len))) {
        port_stats.rx_dropped++;
        return (ssize_t)len;
    }
    memcpy(f->data, buf, len);
    queue_push(&s->to_lwip, f);
    return (ssize_t)len;
}

static void cb_guest_error(const char *msg, void *opaque)
{
    (void)opaque;
    fprintf(stderr, "[slirp] guest error: %s\n", msg);
}

static int64_t cb_clock_get_ns(void *opaque)
{
    (void)opaque;
    return monotonic_ns();
}

static void *cb_timer_new(SlirpTimerCb cb, void *cb_opaque, void *opaque)
{
    struct slirp_netif *s = opaque;
    struct slirp_timer *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->cb = cb;
    t->cb_opaque = cb_opaque;
    t->expire_ms = -1;
    t->next = s->timers;
    s->timers = t;
    return t;
}

static void cb_timer_free(void *timer, void *opaque)
{
    struct slirp_netif *s = opaque;
    struct slirp_timer **p;
    for (p = &s->timers; *p; p = &(*p)->next) {
        if (*p == timer) {
            *p = (*p)->next;
            free(timer);
            return;
        }
    }
}

static void cb_timer_mod(void *timer, int64_t expire_ms, void *opaque)
{
    (void)opaque;
    ((struct slirp_timer *)timer)->expire_ms = expire_ms;
}

/* Every host socket is polled on each turn, so there is nothing to register
 * and no other thread to wake. */
static void cb_register_poll_fd(int fd, void *opaque) { (void)fd; (void)opaque; }
static void cb_unregister_poll_fd(int fd, void *opaque) { (void)fd; (void)opaque; }
static void cb_notify(void *opaque) { (void)opaque; }

static const SlirpCb slirp_callbacks = {
    .send_packet = cb_send_packet,
    .guest_error = cb_guest_error,
    .clock_get_ns = cb_clock_get_ns,
    .timer_new = cb_timer_new,
    .timer_free = cb_timer_free,
    .timer_mod = cb_timer_mod,
    .register_poll_fd = cb_register_poll_fd,
    .unregister_poll_fd = cb_unregister_poll_fd,
    .notify = cb_notify,
};

/* slirp's timers on the monotonic clock; returns ms until the next one, or
 * `limit` if none is sooner. */
static uint32_t run_timers(struct slirp_netif *s, uint32_t limit)
{
    int64_t now = monotonic_ns() / 1000000;
    struct slirp_timer *t;
    uint32_t next = limit;

    /* a callback may re-arm or free timers: restart the walk after each one */
restart:
    for (t = s->timers; t; t = t->next) {
        if (t->expire_ms >= 0 && t->expire_ms <= now) {
            t->expire_ms = -1;
            t->cb(t->cb_opaque);
            goto restart;
        }
    }
    for (t = s->timers; t; t = t->next)
        if (t->expire_ms >= 0 && (uint64_t)(t->expire_ms - now) < next)
            next = (uint32_t)(t->expire_ms - now);
    return next;
}

/* poll(2) set for slirp_pollfds_fill / slirp_pollfds_poll --------------------- */

static int add_poll(int fd, int events, void *opaque)
{
    struct slirp_netif *s = opaque;
    struct pollfd *p;

    if (s->npollfds == s->pollfds_cap) {
        int cap = s->pollfds_cap ? 2 * s->pollfds_cap : 64;
        struct pollfd *grown = realloc(s->pollfds, (size_t)cap * sizeof(*grown));
        if (!grown)
            return -1; /* slirp then skips this socket for one turn */
        s->pollfds = grown;
        s->pollfds_cap = cap;
    }
    p = &s->pollfds[s->npollfds];
    p->fd = fd;
    p->events = (short)(((events & SLIRP_POLL_IN) ? POLLIN : 0) |
                        ((events & SLIRP_POLL_OUT) ? POLLOUT : 0) |
                        ((events & SLIRP_POLL_PRI) ? POLLPRI : 0));
    p->revents = 0;
    return s->npollfds++;
}

static int get_revents(int idx, void *opaque)
{
    struct slirp_netif *s = opaque;
    short r;

    if (idx < 0 || idx >= s->npollfds)
        return 0;
    r = s->pollfds[idx].revents;
    return ((r & POLLIN) ? SLIRP_POLL_IN : 0) | ((r & POLLOUT) ? SLIRP_POLL_OUT : 0) |
           ((r & POLLPRI) ? SLIRP_POLL_PRI : 0) | ((r & POLLERR) ? SLIRP_POLL_ERR : 0) |
           ((r & POLLHUP) ? SLIRP_POLL_HUP : 0);
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
    queue_push(&s->to_slirp, f);

    port_stats.frames_out++;
    port_stats.bytes_out += f->len;
    port_stats.tx_copy_cycles += port_cycles() - start;
    return ERR_OK;
}

int slirp_netif_wait(struct netif *netif, uint32_t timeout_ms, const sigset_t *sigmask)
{
    struct slirp_netif *s = netif->state;
    struct frame *f;
    struct timespec ts;
    int rc;

    while ((f = queue_pop(&s->to_slirp))) {
        slirp_input(s->slirp, f->data, (int)f->len);
        free(f);
    }
    timeout_ms = run_timers(s, timeout_ms);
    s->npollfds = 0;
    slirp_pollfds_fill(s->slirp, &timeout_ms, add_poll, s);
    if (s->to_lwip.head)
        timeout_ms = 0; /* lwIP has frames to handle now */
    ts.tv_sec = timeout_ms / 1000;
    ts.tv_nsec = (long)(timeout_ms % 1000) * 1000000;
    rc = ppoll(s->pollfds, (nfds_t)s->npollfds, &ts, sigmask);
    slirp_pollfds_poll(s->slirp, rc < 0, get_revents, s);
    run_timers(s, 0);
    return rc < 0 && errno == EINTR ? -1 : 0;
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
    struct slirp_netif *s;
    SlirpConfig cfg;
    struct in_addr host_addr, guest_addr;
    char guest_ip[IP4ADDR_STRLEN_MAX];

    s = calloc(1, sizeof(*s));
    if (!s)
        return ERR_MEM;
    s->to_lwip.max = RX_QUEUE_MAX;
    s->to_slirp.max = TX_QUEUE_MAX;

    memset(&cfg, 0, sizeof(cfg));
    cfg.version = 4;
    cfg.restricted = 1; /* the guest reaches nothing but the forwarded port */
    cfg.in_enabled = true;
    inet_pton(AF_INET, "10.0.2.0", &cfg.vnetwork);
    inet_pton(AF_INET, "255.255.255.0", &cfg.vnetmask);
    inet_pton(AF_INET, "10.0.2.2", &cfg.vhost);
    inet_pton(AF_INET, "10.0.2.15", &cfg.vdhcp_start);
    inet_pton(AF_INET, "10.0.2.3", &cfg.vnameserver);
    cfg.vhostname = "litedav-host";
    /* the firmware has a static address and no resolver */
    cfg.disable_dns = true;
    cfg.disable_dhcp = true;
    s->slirp = slirp_new(&cfg, &slirp_callbacks, s);
    if (!s->slirp) {
        fprintf(stderr, "[slirp] slirp_new failed\n");
        free(s);
        return ERR_IF;
    }

    ip4addr_ntoa_r(netif_ip4_addr(netif), guest_ip, sizeof(guest_ip));
    inet_pton(AF_INET, "127.0.0.1", &host_addr);
    inet_pton(AF_INET, guest_ip, &guest_addr);
    if (slirp_add_hostfwd(s->slirp, 0, host_addr, config->host_port, guest_addr,
                          config->guest_port) < 0) {
        fprintf(stderr, "[slirp] cannot listen on 127.0.0.1:%u (%s): choose another port\n",
                (unsigned)config->host_port, strerror(errno));
        netif->state = s;
        slirp_netif_shutdown(netif);
        return ERR_IF;
    }
    if (widen_accept_backlog(config->host_port) != 0)
        fprintf(stderr, "[slirp] warning: cannot widen the accept backlog of 127.0.0.1:%u: "
                "bursts of new connections may stall\n", (unsigned)config->host_port);

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
    slirp_cleanup(s->slirp);
    while (s->timers)
        cb_timer_free(s->timers, s);
    queue_clear(&s->to_lwip);
    queue_clear(&s->to_slirp);
    free(s->pollfds);
    free(s);
    netif->state = NULL;
}
