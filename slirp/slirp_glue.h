/*
 * One libslirp instance (QEMU's user-mode network) and what libslirp asks of
 * whoever runs it: the callbacks, its timers, its clock, the poll(2) set of
 * its host sockets, and a TCP port on 127.0.0.1 forwarded to the guest.
 * Shared by the simulator's slirp_ethernet module, the host port's netif and
 * test drivers; each keeps its own side of the link (a PHY, an lwIP netif,
 * hand-made frames).
 *
 * The network is 10.0.2.0/24 as QEMU's: slirp's gateway 10.0.2.2, the guest
 * at 10.0.2.15, restricted (the guest reaches nothing but the forwarded port).
 *
 * One turn of the network, in the owner's loop:
 *   slirp_glue_run_timers()   slirp's timers that are due
 *   slirp_glue_fill()         which host sockets slirp wants looked at
 *   slirp_glue_poll()         look (ppoll) and let slirp read and write them
 * Frames the guest sends go in with slirp_glue_input() at any time.
 */
#ifndef LITEDAV_SLIRP_GLUE_H
#define LITEDAV_SLIRP_GLUE_H

#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The owner's side; opaque is slirp_glue_new()'s. */
struct slirp_glue_hooks {
    /* A frame from slirp to the guest. Dropping it is allowed (libslirp.h):
     * TCP recovers, as from a MAC with no free RX slot. */
    void (*to_guest)(const uint8_t *frame, size_t len, void *opaque);
    /* Optional: the owner's time since start-up, in ns. slirp's clock is then
     * 1 s + that time * clock_scale (libslirp treats a timestamp of 0 as
     * "never"), so its timers keep a fixed ratio to the owner's. NULL: the
     * host's CLOCK_MONOTONIC, as is. */
    int64_t (*elapsed_ns)(void *opaque);
    /* Optional: slirp has something for its host sockets (a socket
     * registered, a wake-up, one of its timers ran). */
    void (*poll_wanted)(void *opaque);
    /* Optional: slirp closed the host socket fd. */
    void (*fd_closed)(int fd, void *opaque);
};

struct slirp_glue_config {
    const char *name;      /* prefix of its messages on stderr, e.g. "[slirp]" (kept, not copied) */
    unsigned clock_scale;  /* with elapsed_ns: slirp's clock runs this many times faster (>= 1) */
    bool no_dhcp_dns;      /* slirp neither answers DHCP nor relays DNS (a guest with a static
                              address and no resolver) */
};

struct slirp_glue;

/* NULL on failure (reason on stderr). SIGPIPE is ignored from then on:
 * libslirp writes to host sockets with plain send(), and a host client that
 * hung up while the guest still answers would otherwise end the process
 * without a word (QEMU ignores it too); ignored, the write fails with EPIPE
 * and slirp closes that connection. */
struct slirp_glue *slirp_glue_new(const struct slirp_glue_config *config,
                                  const struct slirp_glue_hooks *hooks, void *opaque);

/* Forward 127.0.0.1:host_port to guest_ip:guest_port, with a listen backlog
 * for bursts of connections. 0, or -1 with errno when the port cannot be
 * bound (or guest_ip is no IPv4 address: EINVAL). */
int slirp_glue_forward(struct slirp_glue *g, uint16_t host_port, const char *guest_ip,
                       uint16_t guest_port);

/* A frame from the guest; slirp may send frames to it at once (to_guest). */
void slirp_glue_input(struct slirp_glue *g, const uint8_t *frame, size_t len);

/* slirp's clock, in ms. */
int64_t slirp_glue_now_ms(const struct slirp_glue *g);

/* Run slirp's timers that are due; returns the ms until the next one, or
 * limit if none is sooner. */
uint32_t slirp_glue_run_timers(struct slirp_glue *g, uint32_t limit);

/* List the host sockets slirp wants looked at; lowers *timeout_ms to when
 * slirp wants its next poll. */
void slirp_glue_fill(struct slirp_glue *g, uint32_t *timeout_ms);

/* The list of the last slirp_glue_fill(). */
const struct pollfd *slirp_glue_pollfds(const struct slirp_glue *g, int *n);

/* Wait up to timeout_ms for the listed sockets, with sigmask in force while
 * waiting (NULL: the current one), then let slirp handle them. Returns
 * ppoll's result (-1 with its errno). */
int slirp_glue_poll(struct slirp_glue *g, uint32_t timeout_ms, const sigset_t *sigmask);

/* slirp's turn without its host sockets: its clock, TCP timers and output
 * queues only. */
void slirp_glue_skip_sockets(struct slirp_glue *g);

/* Close slirp (and the forwarded port); g may be NULL. */
void slirp_glue_free(struct slirp_glue *g);

#endif
