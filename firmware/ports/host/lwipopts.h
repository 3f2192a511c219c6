/* lwIP configuration for the host (Linux) build: the LiteX port's values
 * (raw API, NO_SYS, one Ethernet netif), so the native server behaves like the
 * appliance. Differences are marked "host:". */
#ifndef LITEDAV_LWIPOPTS_H
#define LITEDAV_LWIPOPTS_H

#define NO_SYS                      1
#define LWIP_SOCKET                 0
#define LWIP_NETCONN                0
#define SYS_LIGHTWEIGHT_PROT        0
#define LWIP_IPV4                   1
#define LWIP_IPV6                   0
#define LWIP_ARP                    1
#define LWIP_ETHERNET               1
#define LWIP_ICMP                   1
#define LWIP_UDP                    1
#define LWIP_TCP                    1
#define LWIP_DHCP                   0
#define LWIP_NETIF_STATUS_CALLBACK  0

/* host: 64-bit pointers live in lwIP's pools and heap; 8-byte alignment keeps
 * them naturally aligned (UBSan checks alignment). */
#define MEM_ALIGNMENT               8
#define MEM_SIZE                    (2 * 1024 * 1024)
#define MEMP_NUM_PBUF               256
#define MEMP_NUM_TCP_PCB            128
#define MEMP_NUM_TCP_PCB_LISTEN     4
#define MEMP_NUM_TCP_SEG            512
#define PBUF_POOL_SIZE              128
#define PBUF_POOL_BUFSIZE           1536

#define TCP_MSS                     1460
#define TCP_WND                     (8 * TCP_MSS)
#define TCP_SND_BUF                 (16 * TCP_MSS)
#define TCP_SND_QUEUELEN            (4 * TCP_SND_BUF / TCP_MSS)
#define TCP_LISTEN_BACKLOG          1
#define TCP_DEFAULT_LISTEN_BACKLOG  64
#define LWIP_TCP_KEEPALIVE          0
/* Same tick as the SoC, so timer behaviour (delayed ACKs, retransmissions,
 * the server's idle timeout) matches it; here it is real time. */
#define TCP_TMR_INTERVAL            50

#define LWIP_STATS                  1
#define MEM_STATS                   1
#define MEMP_STATS                  1
#define LWIP_STATS_DISPLAY          0
#define LINK_STATS                  1
#define ETHARP_STATS                1
#define IP_STATS                    1
#define TCP_STATS                   1

#define LWIP_CHKSUM_ALGORITHM       3
#define LWIP_NETIF_HOSTNAME         0
#define LWIP_SINGLE_NETIF           1

/* RFC 6528 initial sequence numbers (firmware/app/net/tcp_isn.h); main.c keys them from /dev/urandom */
#define LWIP_HOOK_FILENAME          "net/tcp_isn_lwip.h"
#define LWIP_HOOK_TCP_ISN           tcp_isn_hook

#endif
