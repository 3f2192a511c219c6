/* Connections in TIME-WAIT kept off lwIP's list, found in O(1).
 *
 * The server closes first (HTTP/1.0, Connection: close), so every such
 * connection then holds its PCB in TIME-WAIT for 2 MSL (lwIP's TCP_MSL: 2
 * minutes of lwIP time). lwIP keeps them all on one list, tcp_tw_pcbs, and
 * walks the whole of it for every segment that matches no active connection
 * (every SYN), in its slow timer (10 times a second) and, once every PCB is
 * taken, in tcp_alloc to find the oldest to recycle. With thousands of PCBs
 * each new connection cost more than the one before.
 *
 * Here each connection entering TIME-WAIT leaves that list for a hash table
 * by its addresses and ports and a list in the order they entered
 * (tcp_time_wait_trim). A segment for one puts it back on lwIP's list first,
 * where lwIP finds it at once and answers as TIME-WAIT should (an old
 * duplicate FIN gets its ACK, a new SYN reopens it: syn_queue.h); the next
 * trim takes it off again. The oldest leaves for good, freed without a
 * reset, when its 2 MSL are over, when more than TCP_TIME_WAIT_MAX are held
 * (app_config.h), or when fewer than TCP_TIME_WAIT_PCB_RESERVE PCBs are
 * free (what lwIP's tcp_alloc does once none is, without its walk; kept
 * ahead so that a SYN need not wait in syn_queue.c for a PCB). So the
 * newest keep their whole TIME-WAIT, as they must (a bound of a few dozen,
 * tried first, freed connections closed a few ms before).
 *
 * TCP_TIME_WAIT_BUCKETS sizes the hash table (a power of two; 0: off, lwIP's
 * own list). A port turning it on chains tcp_time_wait_input into its
 * LWIP_HOOK_IP4_INPUT, needs MEMP_STATS, and its main loop calls app_poll. */
#ifndef LITEDAV_TCP_TIME_WAIT_H
#define LITEDAV_TCP_TIME_WAIT_H

#include <stdint.h>

#include "lwip/err.h"

struct pbuf;
struct tcp_pcb;
struct tcp_hdr;

/* Take the connections on lwIP's TIME-WAIT list off it; free the oldest as
 * above (their 2 MSL counted on sys_now()). From app_poll, never from inside
 * TCP processing; before each received packet tcp_time_wait_input does the
 * same but for the expiry. */
void tcp_time_wait_trim(void);

/* LWIP_HOOK_IP4_INPUT's part: trim, then put the connection a TCP segment
 * is for back on lwIP's list if it is in TIME-WAIT here. Never eats p. */
void tcp_time_wait_input(const struct pbuf *p);

/* Connections in TIME-WAIT: held here, and on lwIP's list. */
uint32_t tcp_time_wait_count(void);

/* LWIP_HOOK_TCP_INPACKET_PCB's part (syn_queue.c), for a segment lwIP
 * would answer in TIME-WAIT (data or a FIN, not a SYN) that is not the
 * peer's FIN again: lwIP ACKs every such segment and restarts 2 MSL. A peer
 * still holding an older connection on the same port answers each ACK with
 * its FIN again, a loop at wire speed (ab -c 100 through slirp: 24 ports,
 * ~1,000 frames per simulated s each). Here, like Linux's
 * tcp_invalid_ratelimit, such a segment gets an ACK at most once per
 * TCP_TIME_WAIT_OOW_ACK_MS a connection and restarts nothing. ERR_OK: lwIP
 * handles the segment; anything else: handled here. payload_len: the
 * segment's data bytes. */
err_t tcp_time_wait_segment(struct tcp_pcb *pcb, const struct tcp_hdr *hdr, uint16_t payload_len);

struct tcp_time_wait_stats {
    uint64_t expired;    /* freed after their 2 MSL */
    uint64_t recycled;   /* freed early, oldest first: beyond the bound or for a new connection */
    uint64_t stale;      /* segments not the peer's FIN again (tcp_time_wait_segment) */
    uint64_t stale_unacked; /* of them, dropped without an ACK (one was sent too recently) */
};
extern struct tcp_time_wait_stats tcp_time_wait_stats;

#endif
