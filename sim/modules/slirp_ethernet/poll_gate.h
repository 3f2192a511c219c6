/*
 * When the slirp module needs to run libslirp's poll at all.
 *
 * libslirp's poll is three walks over every socket it holds:
 * slirp_pollfds_fill() lists the host sockets it wants watched, poll(2)
 * looks at each, slirp_pollfds_poll() reads the answers. The module polls
 * every `poll_cycles` (2,048) simulated cycles, so with 1,000 idle client
 * connections the simulator spent its time looking at sockets that had
 * nothing to say, and slowed down with every idle connection.
 *
 * The gate keeps an epoll set mirroring what slirp watches for reading
 * (rebuilt from each fill's list, so it also covers the host-forward
 * listening socket, which slirp never registers) and says a poll is due only
 * when
 *   - epoll has a socket readable (data, a new connection, EOF, an error),
 *   - a frame went into slirp since its last poll (slirp_input may have
 *     queued data for a host socket or set a delayed ACK: poll_gate_touch),
 *   - the last fill asked to write to a socket (data slirp holds for a slow
 *     host reader, or a connection in progress),
 *   - slirp's own timers are due: the timeout the last fill returned
 *     (2 ms for a delayed ACK, else 499 ms for its retransmission and
 *     TIME_WAIT timers, at most 1 s, in slirp's clock).
 * Sockets are still checked at the same simulated instants (every poll
 * slot, through one epoll_wait with no timeout), so host clients are seen
 * exactly when they were before, and a skipped slot still gives slirp its
 * clock and timers (slirp_ethernet.c poll_host); only the walks are skipped.
 * The cost of an idle poll slot no longer grows with the idle connections.
 * A socket slirp registers, closes (unregister_poll_fd) or wakes (notify)
 * also makes the next slot poll.
 */
#ifndef SLIRP_ETHERNET_POLL_GATE_H
#define SLIRP_ETHERNET_POLL_GATE_H

#include <poll.h>
#include <stdint.h>

struct poll_gate {
    int epfd;
    /* per fd number: the epoll events registered (0: not in the set) and
     * the fill that last listed it */
    struct gate_watch { uint32_t events, fill, kept; } *watch;
    int nwatch;
    int *listed;    /* fds in the set, to drop those a fill no longer lists */
    int nlisted, listed_cap;
    uint32_t fill;  /* fills synced so far */
    int touched;    /* a frame went into slirp, or slirp asked to be polled */
    int want_out;   /* the last fill asked to write to a socket */
    int64_t deadline_ms; /* slirp's clock: its timers are due */
    int broken;     /* no epoll, or it failed: every slot polls (as without the gate) */
    uint64_t polls, skipped;
};

/* 0, or -1 with errno (no epoll: the module then polls every slot) */
int poll_gate_init(struct poll_gate *g);
/* A poll is due now (slirp clock now_ms); runs one epoll_wait(0). */
int poll_gate_due(struct poll_gate *g, int64_t now_ms);
/* After slirp_pollfds_fill: its list and its timeout (ms, slirp clock). */
void poll_gate_sync(struct poll_gate *g, const struct pollfd *fds, int n, int64_t now_ms, uint32_t timeout_ms);
/* slirp closes fd (unregister_poll_fd): its number may come back as another socket. */
void poll_gate_forget(struct poll_gate *g, int fd);
static inline void poll_gate_touch(struct poll_gate *g) { g->touched = 1; }
void poll_gate_close(struct poll_gate *g);

#endif
