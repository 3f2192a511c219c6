/* A bounded TIME-WAIT population (in the spirit of Linux's tcp_max_tw_buckets).
 *
 * The server closes first (HTTP/1.0, Connection: close), so every such
 * connection then holds its PCB in TIME-WAIT for 2 MSL (lwIP's TCP_MSL: 2
 * minutes of lwIP time). lwIP keeps them all on one list, tcp_tw_pcbs, and
 * walks the whole of it for every segment that matches no active connection
 * (every SYN), in its slow timer (10 times a second), and, once every PCB is
 * taken, in tcp_alloc to find the oldest to recycle. With thousands of PCBs a
 * busy server fills the pool with TIME-WAIT and each new connection costs
 * more than the one before. Here the population stays at TCP_TIME_WAIT_MAX
 * (app_config.h): once there are more, the oldest are recycled at once (freed
 * as lwIP's tcp_alloc would, without a reset), so each of those walks covers
 * at most that many PCBs whatever the load.
 *
 * What an early end of TIME-WAIT gives up: the newest connections keep their
 * full 2 MSL, the oldest go first. A client reusing the ports of a recycled
 * connection gets a new one at once (the SYN queue reopens one still in
 * TIME-WAIT anyway, syn_queue.h); an old duplicate segment of a recycled
 * connection finds no connection and is answered with a reset. */
#ifndef LITEDAV_TCP_TIME_WAIT_H
#define LITEDAV_TCP_TIME_WAIT_H

#include <stdint.h>

/* Recycle the oldest connections in TIME-WAIT beyond the bound. Costs a
 * pointer comparison unless one entered TIME-WAIT since the last call. From
 * the main loop (app_poll) and, where a port's lwipopts.h chains it into
 * LWIP_HOOK_IP4_INPUT, before each received packet: a connection enters
 * TIME-WAIT only while lwIP handles a segment for it, so the list lwIP walks
 * for the next one holds at most TCP_TIME_WAIT_MAX. Never from inside TCP
 * processing (a callback). */
void tcp_time_wait_trim(void);

struct tcp_time_wait_stats {
    uint64_t recycled;   /* connections ended early, the oldest past TCP_TIME_WAIT_MAX */
};
extern struct tcp_time_wait_stats tcp_time_wait_stats;

#endif
