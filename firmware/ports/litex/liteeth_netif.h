#ifndef LITEDAV_LITEETH_NETIF_H
#define LITEDAV_LITEETH_NETIF_H

#include "lwip/netif.h"

/* netif_add() init callback for the LiteEth MAC (SRAM slots, CPU copies). */
err_t liteeth_netif_init(struct netif *netif);
/* Pass received frames to lwIP; returns how many were handled. */
int liteeth_netif_poll(struct netif *netif);

#endif
