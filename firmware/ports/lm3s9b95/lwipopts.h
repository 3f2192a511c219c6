/* lwIP configuration for the LM3S9B95 port: raw API, NO_SYS, one Ethernet
 * netif, sized so lwIP takes about a third of QEMU's 64 KiB SRAM. TCP_MSS of
 * 536 keeps every frame below 600 bytes, so pool pbufs stay small; peers
 * learn it from our SYN's MSS option. */
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
#define LWIP_NETIF_LINK_CALLBACK    0

#define MEM_ALIGNMENT               4
/* Every TCP PCB must find its httpd connection (about 3.2 KiB with
 * app_port_config.h) and its send data in the heap: httpd answers a failed
 * allocation with a reset, while a SYN that finds no free PCB is dropped
 * silently and retried by the client. So MEM_SIZE follows MEMP_NUM_TCP_PCB. */
#ifndef MEMP_NUM_TCP_PCB
#define MEMP_NUM_TCP_PCB            4
#endif
#ifndef MEM_SIZE
#define MEM_SIZE                    (MEMP_NUM_TCP_PCB * (3300 + TCP_SND_BUF) + 1024)
#endif
#define MEMP_NUM_PBUF               16
#define MEMP_NUM_TCP_PCB_LISTEN     1
#define MEMP_NUM_TCP_SEG            24
#define MEMP_NUM_UDP_PCB            1
#define MEMP_NUM_RAW_PCB            0
#define MEMP_NUM_SYS_TIMEOUT        6
#define MEMP_NUM_ARP_QUEUE          4
#define MEMP_NUM_REASSDATA          1
#define MEMP_NUM_FRAG_PBUF          2
#define ARP_TABLE_SIZE              4
#define IP_REASSEMBLY               0
#define IP_FRAG                     0
#define PBUF_POOL_SIZE              8
#define PBUF_POOL_BUFSIZE           LWIP_MEM_ALIGN_SIZE(TCP_MSS + 40 + PBUF_LINK_HLEN)

#define TCP_MSS                     536
#define TCP_WND                     (2 * TCP_MSS)
#define TCP_SND_BUF                 (2 * TCP_MSS)
#define TCP_SND_QUEUELEN            (4 * TCP_SND_BUF / TCP_MSS)
#define TCP_LISTEN_BACKLOG          1
#define TCP_DEFAULT_LISTEN_BACKLOG  4
#define LWIP_TCP_KEEPALIVE          0
#define TCP_OVERSIZE                0

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

#endif
