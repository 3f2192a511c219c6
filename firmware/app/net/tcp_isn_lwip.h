/* tcp_isn() as lwIP's LWIP_HOOK_TCP_ISN (tcp_isn.h), for a port's
 * LWIP_HOOK_FILENAME:
 *   #define LWIP_HOOK_TCP_ISN tcp_isn_hook */
#ifndef LITEDAV_TCP_ISN_LWIP_H
#define LITEDAV_TCP_ISN_LWIP_H

#include "lwip/ip_addr.h"
#include "lwip/netif.h"
#include "lwip/sys.h"

#include "net/tcp_isn.h"

static inline u32_t tcp_isn_hook(const ip_addr_t *local_ip, u16_t local_port, const ip_addr_t *remote_ip,
                                 u16_t remote_port)
{
    return tcp_isn(ip4_addr_get_u32(ip_2_ip4(local_ip)), local_port, ip4_addr_get_u32(ip_2_ip4(remote_ip)),
                   remote_port, sys_now());
}

/* At boot, the netif up: what differs between devices and between boots (the
 * MAC; the cycle counter after the store's mount, whose time depends on what
 * the store holds). The first frames' arrivals follow, from the driver. */
static inline void tcp_isn_stir_boot(const struct netif *netif, uint64_t cycles)
{
    tcp_isn_stir(netif->hwaddr, netif->hwaddr_len);
    tcp_isn_stir(&cycles, sizeof(cycles));
}

#endif
