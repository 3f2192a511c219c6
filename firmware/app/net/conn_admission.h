/* Accepted TCP connections admitted to a server that has fewer connection
 * states than connections (the HTTP server's struct conn: a few KiB each).
 *
 * A connection without a state waits as a small record: one accepted while
 * no state may be taken, and, when the server gives its state back between
 * requests (conn_admission_release), one between requests. Once it has sent
 * a whole request it queues, oldest first, and conn_admission_poll() gives
 * it a state as soon as one is free. A wave of clients larger than the states
 * is then served in turn instead of reset, and a client that connects and
 * says nothing, or never finishes its request, holds no state. Records whose
 * connection is idle are parked off lwIP's timer walks (tcp_park.h), closed
 * after the idle timeout, and the one idle longest is reset when a SYN waits
 * for a PCB (syn_queue.h): thousands of idle clients cost a record each.
 *
 * The server says what is its own through struct conn_admission_server: where
 * a request ends, how a connection takes and is handed a state, and the
 * counters its status shows. */
#ifndef LITEDAV_CONN_ADMISSION_H
#define LITEDAV_CONN_ADMISSION_H

#include <stdint.h>

#include "lwip/err.h"
#include "lwip/pbuf.h"
#include "lwip/tcp.h"

struct conn_admission_server {
    /* Scan p, the next bytes a waiting connection sent, on from *scan (0
     * before its first byte): 1 once what it has sent holds a whole request
     * (then the client waits for the server, and the record queues). */
    int (*request_complete)(uint8_t *scan, const struct pbuf *p);
    /* A free state, or NULL. */
    void *(*state_alloc)(void);
    /* 1 while a connection may take a state, or keep its own between
     * requests, without asking: states are not scarce. */
    int (*state_spare)(void);
    /* pcb has the state from state_alloc() now: its callbacks are the
     * server's. rx: what it sent while it waited, or NULL; peer_closed: its
     * FIN came. From lwIP's accept callback (rx NULL, peer_closed 0) or from
     * conn_admission_poll(). */
    void (*state_attach)(void *state, struct tcp_pcb *pcb, struct pbuf *rx, int peer_closed);
    /* copied while waiting (what a state's buffers take); more stays with lwIP */
    uint16_t rx_max;

    /* the server's counters that admission keeps */
    uint64_t *refused;        /* accepted without memory even for a record: reset */
    uint32_t *waiting;        /* records queued for a state */
    uint32_t *idle;           /* records not queued (silent, or a request not yet whole) */
    uint64_t *waited;         /* records queued, since boot */
    uint64_t *timed_out;      /* records closed (or reset) after the idle timeout */
    uint64_t *reclaimed;      /* idle records reset for a SYN waiting for a PCB */
    uint64_t *orphans_reset;  /* their closed connections reset (server_conn_close) */
};

/* Admit connections for server (which must outlive them). The server's own
 * accept callback (tcp_accept) gives a new connection a state when one is
 * spare and no record queues for one (conn_admission_queued: first come,
 * first served), and hands it to conn_admission_wait() otherwise: a new
 * connection that takes a state at once costs no call into admission. */
void conn_admission_start(const struct conn_admission_server *server);

/* A connection just accepted that takes no state now: it waits as a record.
 * ERR_OK, or ERR_ABRT once it is reset for want of memory even for a record
 * (counted in refused): what the accept callback returns. */
err_t conn_admission_wait(struct tcp_pcb *pcb);

/* From the main loop: park idle records, close those idle for the timeout,
 * reset the one idle longest for a SYN waiting for a PCB, and hand queued
 * records the states freed since the last call. */
void conn_admission_poll(void);

/* 1 while a connection that has sent a request waits for a state. */
int conn_admission_queued(void);

/* pcb, which holds a state between requests (nothing received, no FIN),
 * gives it back and waits as a record: when idle, always; right after a
 * response only when states are scarce. 0: it waits (its callbacks are the
 * record's, the caller frees its state without touching pcb); -1: it keeps
 * its state. */
int conn_admission_release(struct tcp_pcb *pcb, int idle);

#endif
