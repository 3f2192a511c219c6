/* At most TCP_TIME_WAIT_MAX connections in TIME-WAIT (tcp_time_wait.h). */
#include "tcp_time_wait.h"

#include "lwip/priv/tcp_priv.h"
#include "lwip/tcp.h"

#include "app_config.h"

struct tcp_time_wait_stats tcp_time_wait_stats;

#if TCP_TIME_WAIT_MAX > 0

/* lwIP puts a connection entering TIME-WAIT at the front of tcp_tw_pcbs
 * (TCP_REG), takes one out from anywhere and never reorders the list: it is
 * newest first, and a new front is the only way it grows. (A front taken out
 * and its PCB back at the front before the next call would go unseen: it takes
 * a new connection several segments to reach TIME-WAIT.) */
static const struct tcp_pcb *front_seen;

void tcp_time_wait_trim(void)
{
    struct tcp_pcb *last_kept;
    uint32_t kept;

    if (tcp_tw_pcbs == front_seen)
        return;
    front_seen = tcp_tw_pcbs;
    for (last_kept = tcp_tw_pcbs, kept = 1; last_kept && kept < TCP_TIME_WAIT_MAX;
         last_kept = last_kept->next, kept++)
        ;
    if (!last_kept)
        return;
    while (last_kept->next) {
        tcp_abort(last_kept->next);   /* in TIME-WAIT: freed, no reset sent */
        tcp_time_wait_stats.recycled++;
    }
}

#else /* no bound: lwIP recycles the oldest only once every PCB is taken */

void tcp_time_wait_trim(void)
{
}

#endif
