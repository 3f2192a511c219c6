#ifndef LITEDAV_STELLARIS_ETH_H
#define LITEDAV_STELLARIS_ETH_H

#include "lwip/netif.h"

/* netif_add() init callback for the Stellaris on-chip MAC (FIFO interface). */
err_t stellaris_eth_init(struct netif *netif);
/* Pass received frames to lwIP; returns how many were handled. */
int stellaris_eth_poll(struct netif *netif);
/* Frames waiting in the RX FIFO (for the idle check). */
int stellaris_eth_rx_pending(void);
/* Follow the PHY's link state (real chip); call every few hundred ms. */
void stellaris_eth_link_poll(struct netif *netif);

#endif
