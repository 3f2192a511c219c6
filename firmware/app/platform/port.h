/* What the portable application needs from a port (board or host). */
#ifndef LITEDAV_PORT_H
#define LITEDAV_PORT_H

#include <stdint.h>

/* Free-running cycle counter of the CPU's clock domain. */
uint64_t port_cycles(void);
/* Frequency of that counter in Hz. */
uint32_t port_cycles_hz(void);
/* A short name of the target, shown on the status page. */
const char *port_name(void);

/* The board's flash for the store, or NULL when it has none (the port then
 * keeps the store in a RAM flash, flash_ram.h, lost at reset). */
struct flash;
const struct flash *port_flash(void);

/* size bytes of RAM for the /bulk resource (bulk.c), the same on every
 * call, or NULL when the port has none to spare (then /bulk answers 404). */
uint8_t *port_bulk_buffer(uint32_t size);

/* Does the network driver still hold frames with bytes in [start, end)
 * (queued for its DMA, after lwIP let go of them)? Drivers that copy every
 * frame out at once say 0. */
int port_tx_holds(const void *start, const void *end);

/* Counters kept by the port's network driver and main loop. */
struct port_stats {
    uint64_t frames_in, frames_out;
    uint64_t bytes_in, bytes_out;
    uint64_t rx_dropped;   /* frames lost to pbuf exhaustion or MAC overrun */
    uint64_t tx_dropped;   /* frames too large for the MAC */
    uint64_t idle_cycles;  /* main-loop cycles that found no work */
    /* where busy cycles go, per frame: copying frames between MAC buffers and
     * pbufs, and lwIP + application handling of received frames (which
     * includes the transmit copies its replies cause) */
    uint64_t rx_copy_cycles, tx_copy_cycles, rx_handle_cycles;
    uint64_t rx_merged;    /* frames merged into the one before them for lwIP (offload driver) */
    /* of rx_dropped: frames that found every receive buffer taken (LiteEth's
     * slots, the offload NIC's ring), and frames the offload NIC's RX FIFO
     * overflowed on (its DMA behind) */
    uint64_t rx_dropped_full, rx_dropped_overrun;
    uint64_t rx_backlog_max;   /* offload driver: most completed frames waiting in the ring at a poll */
    uint64_t rx_refill_short;  /* offload driver: refills that found PBUF_POOL empty */
    /* PBUF_POOL empty: frames received into a reserve pbuf or lwIP's heap
     * instead (the offload driver keeps their ring buffers), and frames
     * dropped as nothing could hold them */
    uint64_t rx_copied_pool_empty, rx_dropped_pool_empty;
};
extern struct port_stats port_stats;

#endif
