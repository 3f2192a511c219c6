/*
 * LiteX simulation module: the SoC's Ethernet PHY model wired to libslirp,
 * the user-mode network stack QEMU uses for "-nic user". A host TCP port on
 * 127.0.0.1 is forwarded to the simulated appliance, so no root, TAP or
 * bridge is needed.
 *
 * Pads: the "eth" group of LiteEthPHYModel (8-bit stream, no preamble/FCS).
 * Frames to the SoC are paced with an inter-frame gap and queued (bounded),
 * so a burst from the host never silently overruns the MAC's RX slots.
 *
 * Arguments (JSON from sim_config.js):
 *   host_port   TCP port on 127.0.0.1 forwarded to the guest (default 8080)
 *   guest_port  TCP port of the appliance (default 80)
 *   guest_ip    address of the appliance (default 10.0.2.15)
 *   gap_cycles  idle sys_clk cycles between frames into the SoC (default 20:
 *               12-byte IFG + 8-byte preamble at one byte per cycle)
 *   poll_cycles sys_clk cycles between polls of the host sockets (default 2048)
 *   rx_queue    frames held for the SoC before new ones are dropped (default 256)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>
#include <slirp/libslirp.h>

#include "error.h"
#include "modules.h"
#include "slirp_backlog.h"

#define MAX_FRAME 2048
#define MAX_POLLFDS 4096

struct frame {
    struct frame *next;
    size_t len;
    uint8_t data[];
};

struct slirp_timer {
    struct slirp_timer *next;
    SlirpTimerCb cb;
    void *cb_opaque;
    int64_t expire_ms; /* -1: not armed */
};

struct session {
    /* pads */
    char *sys_clk;
    uint8_t *to_soc_data;
    char *to_soc_valid;
    uint8_t *from_soc_data;
    char *from_soc_valid;
    char *from_soc_ready;
    clk_edge_state_t edge;

    Slirp *slirp;
    struct slirp_timer *timers;

    /* SoC -> host: bytes of the frame being received from the MAC */
    uint8_t tx_buf[MAX_FRAME];
    size_t tx_len;
    int tx_overflow;

    /* host -> SoC: queue of frames, current frame and gap counter */
    struct frame *rx_head, *rx_tail;
    unsigned rx_queued;
    struct frame *rx_cur;
    size_t rx_pos;
    unsigned rx_gap;

    unsigned gap_cycles, poll_cycles, rx_queue_max;
    uint64_t cycles, next_poll;

    struct pollfd pollfds[MAX_POLLFDS];
    int npollfds;

    /* counters, printed at exit */
    uint64_t frames_to_soc, frames_from_soc, frames_dropped;
};

static int64_t monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* libslirp callbacks ------------------------------------------------------ */

static ssize_t cb_send_packet(const void *buf, size_t len, void *opaque)
{
    struct session *s = opaque;
    struct frame *f;
    size_t padded = len < 60 ? 60 : len;

    if (len > MAX_FRAME || s->rx_queued >= s->rx_queue_max) {
        s->frames_dropped++;
        return len; /* TCP recovers; slirp documents dropping as allowed */
    }
    f = calloc(1, sizeof(*f) + padded);
    if (!f)
        return -1;
    memcpy(f->data, buf, len);
    f->len = padded;
    if (s->rx_tail)
        s->rx_tail->next = f;
    else
        s->rx_head = f;
    s->rx_tail = f;
    s->rx_queued++;
    return len;
}

static void cb_guest_error(const char *msg, void *opaque)
{
    fprintf(stderr, "[slirp_ethernet] guest error: %s\n", msg);
}

static int64_t cb_clock_get_ns(void *opaque)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *cb_timer_new(SlirpTimerCb cb, void *cb_opaque, void *opaque)
{
    struct session *s = opaque;
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
    struct session *s = opaque;
    struct slirp_timer **p;
    for (p = &s->timers; *p; p = &(*p)->next) {
        if (*p == timer) {
            *p = ((struct slirp_timer *)timer)->next;
            free(timer);
            return;
        }
    }
}

static void cb_timer_mod(void *timer, int64_t expire_ms, void *opaque)
{
    ((struct slirp_timer *)timer)->expire_ms = expire_ms;
}

static void cb_register_poll_fd(int fd, void *opaque) {}
static void cb_unregister_poll_fd(int fd, void *opaque) {}
static void cb_notify(void *opaque) {}

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

static int add_poll(int fd, int events, void *opaque)
{
    struct session *s = opaque;
    struct pollfd *p;
    if (s->npollfds >= MAX_POLLFDS)
        return -1;
    p = &s->pollfds[s->npollfds];
    p->fd = fd;
    p->events = ((events & SLIRP_POLL_IN) ? POLLIN : 0) |
                ((events & SLIRP_POLL_OUT) ? POLLOUT : 0) |
                ((events & SLIRP_POLL_PRI) ? POLLPRI : 0);
    p->revents = 0;
    return s->npollfds++;
}

static int get_revents(int idx, void *opaque)
{
    struct session *s = opaque;
    short r;
    if (idx < 0 || idx >= s->npollfds)
        return 0;
    r = s->pollfds[idx].revents;
    return ((r & POLLIN) ? SLIRP_POLL_IN : 0) | ((r & POLLOUT) ? SLIRP_POLL_OUT : 0) |
           ((r & POLLPRI) ? SLIRP_POLL_PRI : 0) | ((r & POLLERR) ? SLIRP_POLL_ERR : 0) |
           ((r & POLLHUP) ? SLIRP_POLL_HUP : 0);
}

static void poll_host(struct session *s)
{
    uint32_t timeout = 0;
    struct slirp_timer *t;
    int64_t now = monotonic_ms();
    int rc;

    for (t = s->timers; t; t = t->next) {
        if (t->expire_ms >= 0 && t->expire_ms <= now) {
            t->expire_ms = -1;
            t->cb(t->cb_opaque);
        }
    }
    s->npollfds = 0;
    slirp_pollfds_fill(s->slirp, &timeout, add_poll, s);
    rc = poll(s->pollfds, s->npollfds, 0);
    slirp_pollfds_poll(s->slirp, rc < 0, get_revents, s);
}

/* module arguments --------------------------------------------------------- */

static unsigned arg_uint(json_object *args, const char *key, unsigned def)
{
    json_object *v;
    if (args && json_object_object_get_ex(args, key, &v))
        return (unsigned)json_object_get_int(v);
    return def;
}

static const char *arg_str(json_object *args, const char *key, const char *def)
{
    json_object *v;
    if (args && json_object_object_get_ex(args, key, &v))
        return json_object_get_string(v);
    return def;
}

/* LiteX module interface --------------------------------------------------- */

static int slirp_ethernet_start(void *base)
{
    printf("[slirp_ethernet] loaded (libslirp %s)\n", slirp_version_string());
    return RC_OK;
}

static int slirp_ethernet_new(void **sess, char *args)
{
    struct session *s;
    json_object *jargs = args ? json_tokener_parse(args) : NULL;
    SlirpConfig cfg;
    struct in_addr host_addr, guest_addr;
    unsigned host_port, guest_port;
    const char *guest_ip;

    s = calloc(1, sizeof(*s));
    if (!s)
        return RC_NOENMEM;
    host_port = arg_uint(jargs, "host_port", 8080);
    guest_port = arg_uint(jargs, "guest_port", 80);
    guest_ip = arg_str(jargs, "guest_ip", "10.0.2.15");
    s->gap_cycles = arg_uint(jargs, "gap_cycles", 20);
    s->poll_cycles = arg_uint(jargs, "poll_cycles", 2048);
    s->rx_queue_max = arg_uint(jargs, "rx_queue", 256);
    if (s->poll_cycles == 0)
        s->poll_cycles = 1;

    memset(&cfg, 0, sizeof(cfg));
    cfg.version = 1;
    cfg.restricted = 1; /* the guest reaches nothing but the forwarded port */
    cfg.in_enabled = true;
    inet_pton(AF_INET, "10.0.2.0", &cfg.vnetwork);
    inet_pton(AF_INET, "255.255.255.0", &cfg.vnetmask);
    inet_pton(AF_INET, "10.0.2.2", &cfg.vhost);
    inet_pton(AF_INET, "10.0.2.15", &cfg.vdhcp_start);
    inet_pton(AF_INET, "10.0.2.3", &cfg.vnameserver);
    cfg.vhostname = "litedav-host";
    s->slirp = slirp_new(&cfg, &slirp_callbacks, s);
    if (!s->slirp) {
        fprintf(stderr, "[slirp_ethernet] slirp_new failed\n");
        return RC_ERROR;
    }

    inet_pton(AF_INET, "127.0.0.1", &host_addr);
    if (inet_pton(AF_INET, guest_ip, &guest_addr) != 1) {
        fprintf(stderr, "[slirp_ethernet] bad guest_ip \"%s\"\n", guest_ip);
        return RC_INVARG;
    }
    if (slirp_add_hostfwd(s->slirp, 0, host_addr, host_port, guest_addr, guest_port) < 0) {
        fprintf(stderr,
                "[slirp_ethernet] cannot listen on 127.0.0.1:%u (%s): is another simulator "
                "running? choose another port\n",
                host_port, strerror(errno));
        exit(1);
    }
    if (widen_accept_backlog(host_port) != 0)
        fprintf(stderr, "[slirp_ethernet] warning: cannot widen the accept backlog of 127.0.0.1:%u: "
                "bursts of new connections may stall\n", host_port);
    printf("[slirp_ethernet] forwarding 127.0.0.1:%u -> %s:%u\n", host_port, guest_ip, guest_port);
    fflush(stdout);
    if (jargs)
        json_object_put(jargs);
    *sess = s;
    return RC_OK;
}

static int slirp_ethernet_add_pads(void *sess, struct pad_list_s *plist)
{
    struct session *s = sess;
    struct pad_s *p;

    if (!s || !plist)
        return RC_INVARG;
    for (p = plist->pads; p->name; p++) {
        if (!strcmp(plist->name, "eth")) {
            /* "sink" is the PHY's input: frames into the SoC */
            if (!strcmp(p->name, "sink_data")) s->to_soc_data = (uint8_t *)p->signal;
            if (!strcmp(p->name, "sink_valid")) s->to_soc_valid = p->signal;
            if (!strcmp(p->name, "source_data")) s->from_soc_data = (uint8_t *)p->signal;
            if (!strcmp(p->name, "source_valid")) s->from_soc_valid = p->signal;
            if (!strcmp(p->name, "source_ready")) s->from_soc_ready = p->signal;
        }
        if (!strcmp(plist->name, "sys_clk") && !strcmp(p->name, "sys_clk"))
            s->sys_clk = p->signal;
    }
    return RC_OK;
}

static void frame_from_soc_done(struct session *s)
{
    if (s->tx_len && !s->tx_overflow) {
        slirp_input(s->slirp, s->tx_buf, (int)s->tx_len);
        s->frames_from_soc++;
    }
    s->tx_len = 0;
    s->tx_overflow = 0;
}

static int slirp_ethernet_tick(void *sess, uint64_t time_ps)
{
    struct session *s = sess;

    if (!s->sys_clk || !clk_pos_edge(&s->edge, *s->sys_clk))
        return RC_OK;
    s->cycles++;

    /* SoC -> host: the PHY model marks a frame by a run of valid bytes */
    if (s->from_soc_ready)
        *s->from_soc_ready = 1;
    if (*s->from_soc_valid) {
        if (s->tx_len < MAX_FRAME)
            s->tx_buf[s->tx_len++] = *s->from_soc_data;
        else
            s->tx_overflow = 1;
    } else if (s->tx_len) {
        frame_from_soc_done(s);
    }

    /* host -> SoC: one byte per cycle, then the inter-frame gap */
    *s->to_soc_valid = 0;
    if (s->rx_cur) {
        *s->to_soc_valid = 1;
        *s->to_soc_data = s->rx_cur->data[s->rx_pos++];
        if (s->rx_pos == s->rx_cur->len) {
            free(s->rx_cur);
            s->rx_cur = NULL;
            s->rx_gap = s->gap_cycles;
            s->frames_to_soc++;
        }
    } else if (s->rx_gap) {
        s->rx_gap--;
    } else if (s->rx_head) {
        s->rx_cur = s->rx_head;
        s->rx_head = s->rx_head->next;
        if (!s->rx_head)
            s->rx_tail = NULL;
        s->rx_queued--;
        s->rx_pos = 0;
    }

    if (s->cycles >= s->next_poll) {
        s->next_poll = s->cycles + s->poll_cycles;
        poll_host(s);
    }
    return RC_OK;
}

static int slirp_ethernet_close(void *sess)
{
    struct session *s = sess;
    fprintf(stderr, "[slirp_ethernet] frames to SoC %llu, from SoC %llu, dropped %llu\n",
            (unsigned long long)s->frames_to_soc, (unsigned long long)s->frames_from_soc,
            (unsigned long long)s->frames_dropped);
    slirp_cleanup(s->slirp);
    return RC_OK;
}

static struct ext_module_s ext_mod = {
    "slirp_ethernet",
    slirp_ethernet_start,
    slirp_ethernet_new,
    slirp_ethernet_add_pads,
    slirp_ethernet_close,
    slirp_ethernet_tick,
};

int litex_sim_ext_module_init(int (*register_module)(struct ext_module_s *))
{
    return register_module(&ext_mod);
}
