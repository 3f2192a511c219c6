/* Connection requests (SYNs) lwIP would turn away, kept and handed back to
 * it once they can succeed. Turned away, the peer retries only after its
 * backoff (seconds: QEMU's user-mode network waits 6 s, then 18 s, then
 * 42 s), so a wave of clients sees connect timeouts:
 *   - a SYN arriving while every TCP PCB is taken (lwIP drops it);
 *   - a SYN reusing the addresses and ports of a connection in TIME-WAIT
 *     (lwIP answers with an ACK of the old connection; clients reuse ports
 *     soon, and the server, which closes first, holds TIME-WAIT for 2 MSL).
 * Held here (a few bytes each: address, port, sequence number, MSS), a SYN
 * goes back to lwIP as soon as a PCB is free, oldest first. With every PCB
 * taken, a closed connection whose FIN is unanswered is freed for it (and the
 * application may give up an idle one: syn_queue_needs_pcb()).
 *
 * A port enables it in its lwipopts.h:
 *   #define LWIP_HOOK_FILENAME "net/syn_queue.h"
 *   #define LWIP_HOOK_TCP_INPACKET_PCB(pcb, hdr, optlen, opt1len, opt2, p) \
 *       syn_queue_input_hook(pcb, hdr, optlen, opt1len, opt2, p)
 * and its main loop calls app_poll() (which calls syn_queue_poll()). */
#ifndef LITEDAV_SYN_QUEUE_H
#define LITEDAV_SYN_QUEUE_H

#include <stdint.h>

#include "lwip/err.h"

struct tcp_pcb;
struct tcp_hdr;
struct pbuf;

/* ERR_OK: lwIP handles the segment; anything else: the queue took it. A
 * segment for a connection in TIME-WAIT goes to tcp_time_wait_segment (p:
 * its data, headers off). */
err_t syn_queue_input_hook(struct tcp_pcb *pcb, struct tcp_hdr *hdr, uint16_t optlen,
                           uint16_t opt1len, uint8_t *opt2, struct pbuf *p);

/* Called for every TCP segment lwIP builds (LWIP_HOOK_TCP_OUT_ADD_TCPOPTS,
 * opts returned as they are): the first SYN-ACK of a half-open connection
 * gives it an error callback, so that its end by lwIP itself (SYN_RCVD
 * timeout, retransmission limit, PCB reclaimed for a new connection, or the
 * peer's RST) is counted in half_open_dropped. The application's accept
 * replaces the callback once the handshake completes. A port that does not
 * install it keeps half_open_dropped at 0. */
uint32_t *syn_queue_output_hook(struct tcp_pcb *pcb, uint32_t *opts);

/* Hand held SYNs back to lwIP while PCBs are free; from the main loop. */
void syn_queue_poll(void);

/* 1 when a held SYN waits because every TCP PCB is taken (the application
 * may give one up: conn_admission.c resets its longest-idle connection). */
int syn_queue_needs_pcb(void);

struct syn_queue_stats {
    uint32_t held;        /* SYNs waiting now */
    uint64_t held_total;  /* SYNs that had to wait, since boot */
    uint64_t expired;     /* given up after SYN_QUEUE_HOLD_MS */
    uint64_t overflow;    /* queue full: left to lwIP, which dropped them */
    uint64_t time_wait_reopened;  /* SYNs that replaced a connection in TIME-WAIT */
    uint64_t half_open_evicted;   /* SYN_RCVD connections reset to make room in a full backlog */
    uint64_t half_open_dropped;   /* SYN_RCVD connections lwIP ended itself (syn_queue_output_hook) */
    uint64_t listen_ack_reset;    /* ACKs for no connection, reset by the listener (a handshake
                                     completing after its half-open connection was gone) */
    uint64_t orphans_freed;       /* closed connections (FIN unanswered) reset for a held SYN's PCB */
    uint64_t syn_rcvd_stale_dropped; /* segments outside a half-open connection's window, dropped
                                        (not answered with lwIP's reset) */
};
extern struct syn_queue_stats syn_queue_stats;

#endif
