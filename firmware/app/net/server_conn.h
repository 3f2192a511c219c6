/* What every holder of an accepted TCP connection does with its PCB, whether
 * the HTTP server's state for it or a waiting record (conn_admission.h):
 * give the receive window back, let go of the callbacks, count idle polls
 * up to the idle timeout, choose between a FIN and a reset when it strikes,
 * and close so that a vanished peer does not hold the PCB for minutes. */
#ifndef LITEDAV_SERVER_CONN_H
#define LITEDAV_SERVER_CONN_H

#include <stdint.h>

#include "lwip/err.h"
#include "lwip/tcp.h"

/* tcp_poll period of a held connection, in TCP slow-timer ticks */
#define SERVER_CONN_POLL_INTERVAL 2

/* tcp_recved() for any count of bytes. Inline: the HTTP server gives the
 * window back after every request, and a call into another file costs more
 * than the loop (a keep-alive small GET on LiteEth, bench/README.md). */
static inline void server_conn_window_give(struct tcp_pcb *pcb, uint32_t n)
{
    while (n) {
        u16_t step = n > 0xffff ? 0xffff : (u16_t)n;
        tcp_recved(pcb, step);
        n -= step;
    }
}

/* The pcb's callbacks lead nowhere any more (its holder is being freed). */
void server_conn_unhook(struct tcp_pcb *pcb);

/* Close gracefully: ERR_OK; or abort when lwIP cannot queue the FIN:
 * ERR_ABRT. A bare FIN left unanswered HTTPD_ORPHAN_RETRIES times then
 * resets the connection, counted in *orphans_reset. Call it after
 * server_conn_unhook(): the closed PCB's callbacks are its own. */
err_t server_conn_close(struct tcp_pcb *pcb, uint64_t *orphans_reset);

/* One more poll without progress (idle_polls: the holder's count, 0 on
 * progress): 1 once it has lasted HTTPD_IDLE_TIMEOUT_MS. */
int server_conn_idle_poll(uint16_t *idle_polls);

/* When a connection idle for idle_polls polls at now (sys_now()) went idle. */
uint32_t server_conn_idle_since(uint32_t now, uint16_t idle_polls);

/* Data of ours still unsent or unacknowledged: an idle timeout resets it. */
int server_conn_mid_exchange(const struct tcp_pcb *pcb);

/* May an idle timeout close with a FIN (else it resets)? */
int server_conn_fin_affordable(void);

#endif
