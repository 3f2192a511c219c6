#ifndef LITEDAV_OFFLOAD_NETIF_H
#define LITEDAV_OFFLOAD_NETIF_H

#include "lwip/netif.h"

/* netif_add() init callback for the offload NIC (docs/nic.md): DMA rings,
 * zero-copy RX into PBUF_POOL pbufs, scatter-gather TX from pbuf chains,
 * IPv4/TCP/UDP checksums in the NIC. */
err_t offload_netif_init(struct netif *netif);
/* Pass received frames to lwIP and reclaim sent ones; returns how many
 * frames were handled (received or completed). */
int offload_netif_poll(struct netif *netif);
/* Are frames with bytes in [start, end) still queued for the NIC's DMA? */
int offload_netif_tx_holds(const void *start, const void *end);

#endif
