/* lwIP netif driver for the host build: Ethernet frames go to and come from
 * an in-process libslirp (QEMU's user-mode network), which forwards a TCP port
 * on 127.0.0.1 to the guest, as the simulator's slirp_ethernet module does. */
#ifndef LITEDAV_SLIRP_NETIF_H
#define LITEDAV_SLIRP_NETIF_H

#include <signal.h>
#include <stdint.h>

#include "lwip/netif.h"

/* Pass a pointer to this as netif_add()'s state; the netif's IPv4 address is
 * the guest address (the slirp network is 10.0.2.0/24, gateway 10.0.2.2). */
struct slirp_netif_config {
    uint16_t host_port;   /* listening port on 127.0.0.1 */
    uint16_t guest_port;  /* forwarded to this port of the netif's address */
    uint32_t drop_every;  /* a lossy link: drop every Nth full-size frame each way (0: none) */
};

/* netif_add() init callback. Fails (netif_add returns NULL, reason on stderr)
 * if slirp cannot start or the host port cannot be bound. */
err_t slirp_netif_init(struct netif *netif);

/* The network's turn: hand frames lwIP sent to slirp, run slirp's timers, and
 * wait up to timeout_ms (less if slirp or a queued frame needs it) for host
 * sockets, with sigmask in force while waiting (ppoll). Returns -1 if the
 * wait was interrupted by a signal, else 0. */
int slirp_netif_wait(struct netif *netif, uint32_t timeout_ms, const sigset_t *sigmask);

/* Pass frames slirp sent to lwIP; returns how many were handled. */
int slirp_netif_input(struct netif *netif);

/* Close slirp (and the forwarded port) and free the driver's state. */
void slirp_netif_shutdown(struct netif *netif);

#endif
