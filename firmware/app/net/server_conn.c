/* What every holder of an accepted TCP connection does with its PCB (server_conn.h). */
#include "net/server_conn.h"

#include "lwip/memp.h"
#include "lwip/priv/tcp_priv.h"
#include "lwip/stats.h"

#include "platform/app_config.h"

#define POLL_MS (SERVER_CONN_POLL_INTERVAL * TCP_SLOW_INTERVAL)
/* in polls: the slow timer's period is the port's (LiteX: TCP_TMR_INTERVAL 50 ms, a poll every
 * 200 ms, 300 polls; lwIP's default 250 ms: 60), so the timeout is 60 s on every port */
#define IDLE_TIMEOUT_POLLS (HTTPD_IDLE_TIMEOUT_MS / POLL_MS)
/* 2: the HTTP server lets an idle connection's state go after two quiet polls, before the timeout */
_Static_assert(IDLE_TIMEOUT_POLLS >= 2 && IDLE_TIMEOUT_POLLS < 65535, "idle_polls is 16 bits");

void server_conn_unhook(struct tcp_pcb *pcb)
{
    tcp_arg(pcb, NULL);
    tcp_recv(pcb, NULL);
    tcp_sent(pcb, NULL);
    tcp_err(pcb, NULL);
    tcp_poll(pcb, NULL, 0);
}

/* A connection we closed whose bare FIN goes unanswered (all data before it
 * acknowledged): its peer has most likely vanished. Reset after
 * HTTPD_ORPHAN_RETRIES retransmissions, as Linux's tcp_orphan_retries does;
 * lwIP alone retransmits TCP_MAXRTX times, minutes of backoffs, and 4,400
 * vanished idle peers held PCBs and segments that long. A response still
 * being delivered keeps lwIP's own limit. arg: the counter of such resets. */
static err_t orphan_poll(void *arg, struct tcp_pcb *pcb)
{
    uint64_t *orphans_reset = arg;
    if (pcb->nrtx < HTTPD_ORPHAN_RETRIES || pcb->unsent || !pcb->unacked || pcb->unacked->len ||
        pcb->unacked->next)
        return ERR_OK;
    (*orphans_reset)++;
    tcp_abort(pcb);
    return ERR_ABRT;
}

err_t server_conn_close(struct tcp_pcb *pcb, uint64_t *orphans_reset)
{
    /* before: a closed PCB may be gone already */
    tcp_arg(pcb, orphans_reset);
    tcp_poll(pcb, orphan_poll, 2);
    if (tcp_close(pcb) == ERR_OK)
        return ERR_OK;
    tcp_abort(pcb);
    return ERR_ABRT;
}

int server_conn_idle_poll(uint16_t *idle_polls)
{
    return ++*idle_polls > IDLE_TIMEOUT_POLLS;
}

uint32_t server_conn_idle_since(uint32_t now, uint16_t idle_polls)
{
    return now - (uint32_t)idle_polls * POLL_MS;
}

/* A connection idle for the timeout in the middle of an exchange (data of
 * ours not acknowledged) is reset rather than closed: its peer has most
 * likely vanished, and a FIN would be retransmitted to it for many minutes
 * (TCP_MAXRTX backoffs), its PCB held all that time. */
int server_conn_mid_exchange(const struct tcp_pcb *pcb)
{
    return pcb->unacked || pcb->unsent;
}

/* A FIN to a peer that vanished holds its PCB and a segment for TCP_MAXRTX
 * backoffs, a minute and more: 4,400 silent peers closed that way took every
 * segment (MEMP_NUM_TCP_SEG), and the responses of live clients could not be
 * queued. Past half the segment pool the timeout resets instead, as Linux
 * resets orphans past tcp_max_orphans. */
int server_conn_fin_affordable(void)
{
#if MEMP_STATS
    return lwip_stats.memp[MEMP_TCP_SEG]->used * 2 < lwip_stats.memp[MEMP_TCP_SEG]->avail;
#else
    return 1;
#endif
}
