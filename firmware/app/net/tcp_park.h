/* Idle TCP connections parked off lwIP's active list.
 *
 * lwIP walks every PCB on tcp_active_pcbs in its fast and slow timers (here
 * 20 and 10 times a second) and in the demultiplexing of each segment that
 * finds no recently used connection. A connection with nothing to send,
 * nothing unacknowledged and no timer running needs none of that: parked, it
 * is off the list, in a hash table by its addresses and ports, until a
 * segment for it arrives (tcp_park_input, lwIP's IPv4 input hook, puts it
 * back first, where the demultiplexing finds it at once) or its owner takes
 * it back. So thousands of idle keep-alive clients cost nothing per timer
 * tick or per request. HTTPD_PARK_BUCKETS (app_config.h) sizes the table;
 * 0 turns parking off. */
#ifndef LITEDAV_TCP_PARK_H
#define LITEDAV_TCP_PARK_H

#include <stdint.h>

#include "lwip/tcp.h"

#include "util/age_list.h"

/* Embedded in the owner's record of the connection. */
struct tcp_park_node {
    struct tcp_pcb *pcb;               /* NULL: not parked */
    struct tcp_park_node *hash_next;
    struct age_link age;               /* in the order they went idle */
    uint32_t since_ms;                 /* idle since (sys_now()) */
};

/* Park pcb if it is idle (established, nothing queued, no timer pending),
 * idle since since_ms; returns 0, or -1 when it is not idle now or parking
 * is off. Never from inside lwIP (a callback): only from the main loop. */
int tcp_park(struct tcp_park_node *node, struct tcp_pcb *pcb, uint32_t since_ms);

/* Back on lwIP's active list; nothing if not parked. */
void tcp_unpark(struct tcp_park_node *node);

/* The connection parked longest, if idle since before cutoff_ms; else NULL. */
struct tcp_park_node *tcp_park_idle_before(uint32_t cutoff_ms);

uint32_t tcp_park_count(void);

/* The connection parked longest (idle longest), or NULL. */
struct tcp_park_node *tcp_park_oldest(void);

/* lwIP's LWIP_HOOK_IP4_INPUT (a port's lwipopts.h): always 0 (never eats p). */
struct netif;
int tcp_park_input(struct pbuf *p, struct netif *inp);

#endif
