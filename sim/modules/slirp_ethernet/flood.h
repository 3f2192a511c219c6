/* Hostile peers for the slirp_ethernet module: spoofed TCP clients that only
 * the module plays, for SYN-flood and half-open-connection tests that need
 * no root and no raw sockets. Through slirp, a host client always completes
 * its handshake and answers; these peers do not.
 *
 * The peers live in 198.18.0.0/15 (RFC 2544's benchmarking range), beyond
 * slirp's gateway: their frames come from the gateway's MAC, and every frame
 * the SoC sends to that range is taken here and never reaches slirp (which
 * would reset the connections it knows nothing of). Kinds:
 *   syn        a SYN (MSS 1460) and nothing more: the SoC's SYN-ACKs and their
 *              retransmissions go unanswered (a spoofed-source SYN flood);
 *   half_open  the handshake completed (the ACK carries the start of a
 *              request head, never finished), then silence: a client that
 *              vanished mid-request, an ESTABLISHED connection the server
 *              can only time out;
 *   idle       the handshake completed with a bare ACK, then silence: a
 *              client that connected and vanished before asking anything
 *              (the server's idle timeout closes it, and its FIN goes
 *              unanswered as well);
 *   stale_fin  a FIN of an older connection on the same port, far outside
 *              the window, as soon as the SYN-ACK comes (the server must
 *              not answer it with a reset, which slirp applied to its new
 *              connection), then the handshake's ACK with a whole request
 *              (HTTP/1.0: the server answers and closes first), its answer
 *              ACKed and the peer's own FIN, which puts
 *              the server's side in TIME-WAIT. Then that FIN again, as if
 *              the server's ACK was lost (it must be ACKed each time), and
 *              a FIN of an older connection on the same port, far outside
 *              the window: every ACK the server sends back gets that stale
 *              FIN again, up to STALE_FIN_REPLIES times (what slirp did
 *              while it still held the older connection).
 * Peer n has address 198.18.0.0 + 1 + n (n < 131,000, so each is unique) and
 * a random source port; all draw from one xorshift64* generator (seed 1).
 *
 * Control: a UNIX datagram socket at `path` (module argument
 * "flood_control"), one text command per datagram:
 *   syn COUNT INTERVAL        COUNT new peers of that kind, one every
 *   half_open COUNT INTERVAL  INTERVAL sys_clk cycles (replaces a run in progress)
 *   idle COUNT INTERVAL
 *   stale_fin COUNT INTERVAL
 *   stop                      no more new peers (the existing ones stay silent)
 *   stats                     nothing but the answer
 * Every command is answered (to the sender's address, when it has one) with
 * the counters as one JSON object, or {"error": "..."}; its "cycle" is the
 * sys_clk cycle the command was handled at (tests time a request by it). */
#ifndef LITEDAV_SLIRP_FLOOD_H
#define LITEDAV_SLIRP_FLOOD_H

#include <stddef.h>
#include <stdint.h>

#include "faults.h"

enum flood_kind { FLOOD_NONE, FLOOD_SYN, FLOOD_HALF_OPEN, FLOOD_IDLE, FLOOD_STALE_FIN };

#define STALE_FIN_REPLIES 50

struct flood_peer {
    uint32_t isn;
    uint16_t port;
    uint8_t kind;  /* enum flood_kind */
    uint8_t acked; /* its first SYN-ACK was seen (and, half_open or idle, answered) */
    /* stale_fin only: where its exchange is (flood.c), the next sequence numbers each way
     * and the stale FINs sent in reply to an ACK */
    uint8_t phase, replies;
    uint32_t snd_nxt, rcv_nxt;
};

struct flood {
    int fd; /* control socket; -1: none */
    char *path;
    frame_sink sink; /* frames into the SoC */
    void *opaque;

    uint8_t soc_mac[6], gateway_mac[6];
    uint32_t soc_ip; /* host order */
    uint16_t soc_port;
    uint64_t rng;

    enum flood_kind kind; /* the run in progress */
    uint64_t remaining, interval_cycles, next_cycle;

    struct flood_peer *peers;
    size_t npeers, peers_cap;

    /* counters */
    /* answered: peers (any kind) that got a SYN-ACK, each counted once */
    uint64_t syn_sent, half_open_sent, idle_sent, answered, handshakes_completed;
    /* stale_fin: peers started; the server's side in TIME-WAIT (our FIN ACKed); our FIN
     * again ACKed; a first stale FIN sent; ACKs the server sent for stale FINs */
    uint64_t stale_fin_sent, time_wait_reached, fin_again_acked, stale_fin_first, stale_fin_acked;
    uint64_t from_soc, syn_ack, rst, fin, data_bytes;
};

/* soc_ip, soc_port: the appliance's address and listening port. */
void flood_init(struct flood *f, frame_sink sink, void *opaque, uint32_t soc_ip, uint16_t soc_port);

/* Bind the control socket (removing a stale file first); 0, or -1 and errno. */
int flood_listen(struct flood *f, const char *path);

/* Handle the control socket's commands; from the module's host poll. */
void flood_poll(struct flood *f, uint64_t cycle);

/* Send the next spoofed frame when due; every sys_clk cycle. */
void flood_tick(struct flood *f, uint64_t cycle);

/* A frame from the SoC: 1 when it was for a flood peer (taken here), else 0. */
int flood_from_soc(struct flood *f, const uint8_t *data, size_t len);

void flood_close(struct flood *f);

#endif
