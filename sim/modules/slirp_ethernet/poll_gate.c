/* When the slirp module needs libslirp's socket walks (poll_gate.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "poll_gate.h"

int poll_gate_init(struct poll_gate *g)
{
    memset(g, 0, sizeof(*g));
    g->touched = 1; /* the first slot polls */
    g->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (g->epfd < 0) {
        g->broken = 1;
        return -1;
    }
    return 0;
}

void poll_gate_close(struct poll_gate *g)
{
    if (g->epfd >= 0)
        close(g->epfd);
    g->epfd = -1;
    g->broken = 1;
    free(g->watch);
    free(g->listed);
    g->watch = NULL;
    g->listed = NULL;
    g->nwatch = g->nlisted = g->listed_cap = 0;
}

int poll_gate_due(struct poll_gate *g, int64_t now_ms)
{
    struct epoll_event ev[8];

    if (g->broken || g->touched || g->want_out || now_ms >= g->deadline_ms)
        return 1;
    if (epoll_wait(g->epfd, ev, 8, 0) != 0) /* a socket is ready, or epoll failed: poll */
        return 1;
    g->skipped++;
    return 0;
}

/* room for fd in watch[] and one more entry in listed[]; 0 when out of memory */
static int make_room(struct poll_gate *g, int fd)
{
    if (fd >= g->nwatch) {
        int n = g->nwatch ? g->nwatch : 1024;
        struct gate_watch *w;
        while (n <= fd)
            n *= 2;
        w = realloc(g->watch, (size_t)n * sizeof(*w));
        if (!w)
            return 0;
        memset(w + g->nwatch, 0, (size_t)(n - g->nwatch) * sizeof(*w));
        g->watch = w;
        g->nwatch = n;
    }
    if (g->nlisted == g->listed_cap) {
        int n = g->listed_cap ? 2 * g->listed_cap : 1024;
        int *l = realloc(g->listed, (size_t)n * sizeof(*l));
        if (!l)
            return 0;
        g->listed = l;
        g->listed_cap = n;
    }
    return 1;
}

/* fd's epoll registration becomes `events` (0: none) */
static int set_events(struct poll_gate *g, int fd, uint32_t events)
{
    struct epoll_event ev = {.events = events, .data.fd = fd};
    struct gate_watch *w = &g->watch[fd];
    int op = !events ? EPOLL_CTL_DEL : w->events ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;

    if (epoll_ctl(g->epfd, op, fd, &ev) != 0) {
        /* the kernel dropped a closed fd's registration, or one is left from before */
        if (op == EPOLL_CTL_MOD && errno == ENOENT)
            op = EPOLL_CTL_ADD;
        else if (op == EPOLL_CTL_ADD && errno == EEXIST)
            op = EPOLL_CTL_MOD;
        else if (op == EPOLL_CTL_DEL && (errno == ENOENT || errno == EBADF))
            op = -1;
        else
            return -1;
        if (op >= 0 && epoll_ctl(g->epfd, op, fd, &ev) != 0)
            return -1;
    }
    w->events = events;
    return 0;
}

void poll_gate_sync(struct poll_gate *g, const struct pollfd *fds, int n, int64_t now_ms, uint32_t timeout_ms)
{
    int i, j;

    g->polls++;
    g->touched = 0;
    g->want_out = 0;
    g->deadline_ms = now_ms + timeout_ms;
    g->fill++;
    for (i = 0; i < n; i++) {
        int fd = fds[i].fd;
        /* writes are not watched: while slirp wants one, every slot polls */
        uint32_t want = (fds[i].events & (POLLIN | POLLPRI)) ? EPOLLIN | EPOLLPRI : 0;
        if (fds[i].events & POLLOUT)
            g->want_out = 1;
        if (!want || fd < 0 || g->broken)
            continue;
        if (!make_room(g, fd)) {
            g->broken = 1;
            continue;
        }
        if (g->watch[fd].events != want) {
            if (!g->watch[fd].events)
                g->listed[g->nlisted++] = fd;
            if (set_events(g, fd, want) != 0)
                g->broken = 1;
        }
        g->watch[fd].fill = g->fill;
    }
    if (g->broken)
        return;
    /* sockets this fill did not list leave the set; each fd is kept once */
    for (i = j = 0; i < g->nlisted; i++) {
        int fd = g->listed[i];
        struct gate_watch *w = &g->watch[fd];
        if (!w->events || w->kept == g->fill)
            continue;
        if (w->fill != g->fill) {
            if (set_events(g, fd, 0) != 0)
                g->broken = 1;
            continue;
        }
        w->kept = g->fill;
        g->listed[j++] = fd;
    }
    g->nlisted = j;
}

void poll_gate_forget(struct poll_gate *g, int fd)
{
    g->touched = 1;
    if (g->broken || fd < 0 || fd >= g->nwatch || !g->watch[fd].events)
        return;
    if (set_events(g, fd, 0) != 0)
        g->broken = 1;
}
