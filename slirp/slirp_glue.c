/* One libslirp instance and its callbacks (slirp_glue.h). */
#define _GNU_SOURCE /* ppoll */

#include "slirp_glue.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <slirp/libslirp.h>

#define ACCEPT_BACKLOG 128

/* libslirp treats a timestamp of 0 as "never" (e.g. its delayed-ACK timer's
 * start), so a clock of the owner's starts at 1 s rather than at 0. */
#define CLOCK_START_NS 1000000000LL

struct slirp_timer {
    struct slirp_timer *next;
    SlirpTimerCb cb;
    void *cb_opaque;
    int64_t expire_ms; /* slirp's clock; -1: not armed */
};

struct slirp_glue {
    Slirp *slirp;
    const char *name;
    unsigned clock_scale;
    struct slirp_glue_hooks hooks;
    void *opaque;
    struct slirp_timer *timers;
    struct pollfd *pollfds;
    int npollfds, pollfds_cap;
};

static int64_t clock_ns(const struct slirp_glue *g)
{
    struct timespec ts;

    if (g->hooks.elapsed_ns)
        return CLOCK_START_NS + g->hooks.elapsed_ns(g->opaque) * (int64_t)g->clock_scale;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void poll_wanted(struct slirp_glue *g)
{
    if (g->hooks.poll_wanted)
        g->hooks.poll_wanted(g->opaque);
}

/* libslirp callbacks ------------------------------------------------------- */

static ssize_t cb_send_packet(const void *buf, size_t len, void *opaque)
{
    struct slirp_glue *g = opaque;
    g->hooks.to_guest(buf, len, g->opaque);
    return (ssize_t)len;
}

static void cb_guest_error(const char *msg, void *opaque)
{
    struct slirp_glue *g = opaque;
    fprintf(stderr, "%s guest error: %s\n", g->name, msg);
}

static int64_t cb_clock_get_ns(void *opaque)
{
    return clock_ns(opaque);
}

static void *cb_timer_new(SlirpTimerCb cb, void *cb_opaque, void *opaque)
{
    struct slirp_glue *g = opaque;
    struct slirp_timer *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->cb = cb;
    t->cb_opaque = cb_opaque;
    t->expire_ms = -1;
    t->next = g->timers;
    g->timers = t;
    return t;
}

static void cb_timer_free(void *timer, void *opaque)
{
    struct slirp_glue *g = opaque;
    struct slirp_timer **p;
    for (p = &g->timers; *p; p = &(*p)->next) {
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

/* Every host socket slirp lists is polled on each turn, so there is nothing
 * to register and no other thread to wake; the owner only hears of it. */
static void cb_register_poll_fd(int fd, void *opaque)
{
    (void)fd;
    poll_wanted(opaque);
}

static void cb_unregister_poll_fd(int fd, void *opaque)
{
    struct slirp_glue *g = opaque;
    if (g->hooks.fd_closed)
        g->hooks.fd_closed(fd, g->opaque);
}

static void cb_notify(void *opaque)
{
    poll_wanted(opaque);
}

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

/* poll(2) set for slirp_pollfds_fill / slirp_pollfds_poll --------------------- */

static int add_poll(int fd, int events, void *opaque)
{
    struct slirp_glue *g = opaque;
    struct pollfd *p;

    if (g->npollfds == g->pollfds_cap) {
        int cap = g->pollfds_cap ? 2 * g->pollfds_cap : 64;
        struct pollfd *grown = realloc(g->pollfds, (size_t)cap * sizeof(*grown));
        if (!grown)
            return -1; /* slirp then skips this socket for one turn */
        g->pollfds = grown;
        g->pollfds_cap = cap;
    }
    p = &g->pollfds[g->npollfds];
    p->fd = fd;
    p->events = (short)(((events & SLIRP_POLL_IN) ? POLLIN : 0) |
                        ((events & SLIRP_POLL_OUT) ? POLLOUT : 0) |
                        ((events & SLIRP_POLL_PRI) ? POLLPRI : 0));
    p->revents = 0;
    return g->npollfds++;
}

static int get_revents(int idx, void *opaque)
{
    struct slirp_glue *g = opaque;
    short r;

    if (idx < 0 || idx >= g->npollfds)
        return 0;
    r = g->pollfds[idx].revents;
    return ((r & POLLIN) ? SLIRP_POLL_IN : 0) | ((r & POLLOUT) ? SLIRP_POLL_OUT : 0) |
           ((r & POLLPRI) ? SLIRP_POLL_PRI : 0) | ((r & POLLERR) ? SLIRP_POLL_ERR : 0) |
           ((r & POLLHUP) ? SLIRP_POLL_HUP : 0);
}

/* host forwarding ------------------------------------------------------------- */

/* libslirp's forwarded port listens with a backlog of one. When the accept
 * queue is full Linux drops new SYNs, and a client retries after 1, 3, 7, 15 s:
 * a burst of connections (ab -c 50) then stalls for seconds. Find the
 * listening socket on 127.0.0.1:port and give it a real backlog (listen(2) on
 * a listening socket only changes the backlog). */
static int widen_accept_backlog(uint16_t port)
{
    DIR *fds = opendir("/proc/self/fd");
    struct dirent *entry;
    int widened = -1;

    if (!fds)
        return -1;
    while ((entry = readdir(fds))) {
        int fd = atoi(entry->d_name), listening = 0;
        socklen_t len = sizeof(listening);
        struct sockaddr_in addr;
        socklen_t addr_len = sizeof(addr);

        if (fd <= 2 || fd == dirfd(fds))
            continue;
        if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || !listening)
            continue;
        if (getsockname(fd, (struct sockaddr *)&addr, &addr_len) != 0 ||
            addr.sin_family != AF_INET || ntohs(addr.sin_port) != port)
            continue;
        widened = listen(fd, ACCEPT_BACKLOG);
    }
    closedir(fds);
    return widened;
}

int slirp_glue_forward(struct slirp_glue *g, uint16_t host_port, const char *guest_ip,
                       uint16_t guest_port)
{
    struct in_addr host_addr, guest_addr;

    inet_pton(AF_INET, "127.0.0.1", &host_addr);
    if (inet_pton(AF_INET, guest_ip, &guest_addr) != 1) {
        errno = EINVAL;
        return -1;
    }
    if (slirp_add_hostfwd(g->slirp, 0, host_addr, host_port, guest_addr, guest_port) < 0)
        return -1;
    if (widen_accept_backlog(host_port) != 0)
        fprintf(stderr, "%s warning: cannot widen the accept backlog of 127.0.0.1:%u: "
                "bursts of new connections may stall\n", g->name, (unsigned)host_port);
    return 0;
}

/* the network's turn ---------------------------------------------------------- */

void slirp_glue_input(struct slirp_glue *g, const uint8_t *frame, size_t len)
{
    slirp_input(g->slirp, frame, (int)len);
}

int64_t slirp_glue_now_ms(const struct slirp_glue *g)
{
    return clock_ns(g) / 1000000;
}

uint32_t slirp_glue_run_timers(struct slirp_glue *g, uint32_t limit)
{
    int64_t now = slirp_glue_now_ms(g);
    struct slirp_timer *t;
    uint32_t next = limit;

    /* a callback may re-arm or free timers: restart the walk after each one */
restart:
    for (t = g->timers; t; t = t->next) {
        if (t->expire_ms >= 0 && t->expire_ms <= now) {
            t->expire_ms = -1;
            t->cb(t->cb_opaque);
            poll_wanted(g);
            goto restart;
        }
    }
    for (t = g->timers; t; t = t->next)
        if (t->expire_ms >= 0 && (uint64_t)(t->expire_ms - now) < next)
            next = (uint32_t)(t->expire_ms - now);
    return next;
}

void slirp_glue_fill(struct slirp_glue *g, uint32_t *timeout_ms)
{
    g->npollfds = 0;
    slirp_pollfds_fill(g->slirp, timeout_ms, add_poll, g);
}

const struct pollfd *slirp_glue_pollfds(const struct slirp_glue *g, int *n)
{
    *n = g->npollfds;
    return g->pollfds;
}

int slirp_glue_poll(struct slirp_glue *g, uint32_t timeout_ms, const sigset_t *sigmask)
{
    struct timespec ts = {.tv_sec = timeout_ms / 1000, .tv_nsec = (long)(timeout_ms % 1000) * 1000000};
    int rc = ppoll(g->pollfds, (nfds_t)g->npollfds, &ts, sigmask), err = errno;

    slirp_pollfds_poll(g->slirp, rc < 0, get_revents, g);
    errno = err;
    return rc;
}

void slirp_glue_skip_sockets(struct slirp_glue *g)
{
    slirp_pollfds_poll(g->slirp, 1, get_revents, g);
}

/* life ------------------------------------------------------------------------ */

struct slirp_glue *slirp_glue_new(const struct slirp_glue_config *config,
                                  const struct slirp_glue_hooks *hooks, void *opaque)
{
    struct slirp_glue *g = calloc(1, sizeof(*g));
    SlirpConfig cfg;
    struct sigaction ignore;

    if (!g) {
        fprintf(stderr, "%s out of memory\n", config->name);
        return NULL;
    }
    g->name = config->name;
    g->clock_scale = config->clock_scale ? config->clock_scale : 1;
    g->hooks = *hooks;
    g->opaque = opaque;

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
    cfg.disable_dns = config->no_dhcp_dns;
    cfg.disable_dhcp = config->no_dhcp_dns;
    g->slirp = slirp_new(&cfg, &slirp_callbacks, g);
    if (!g->slirp) {
        fprintf(stderr, "%s slirp_new failed\n", config->name);
        free(g);
        return NULL;
    }

    memset(&ignore, 0, sizeof(ignore));
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ignore, NULL);
    return g;
}

void slirp_glue_free(struct slirp_glue *g)
{
    if (!g)
        return;
    slirp_cleanup(g->slirp);
    while (g->timers)
        cb_timer_free(g->timers, g);
    free(g->pollfds);
    free(g);
}
