/* The lwIP settings every LiteDAV build shares; each port's lwipopts.h
 * includes this file, then sets its sizes and hooks.
 *
 * The raw API without an operating system (NO_SYS): the main loop calls lwIP,
 * so there are no threads, sockets, netconns or locks. IPv4 and TCP, the
 * address set by the port (no DHCP), one Ethernet netif (the port's MAC
 * driver) with ARP and ICMP echo, and lwIP's counters, which the status page,
 * httpd and the SYN queue read.
 *
 * A build that leaves out more defines the setting before the #include, as
 * lwipopts.h does for lwIP's own defaults (lwip/opt.h): the EMCU port has no
 * UDP and no counters; the host's flow-control test (tests/host/httpd_flow)
 * has no Ethernet, only lwIP's loopback netif. */
#ifndef LITEDAV_LWIPOPTS_BASE_H
#define LITEDAV_LWIPOPTS_BASE_H

#define NO_SYS                      1
#define LWIP_SOCKET                 0
#define LWIP_NETCONN                0
#define SYS_LIGHTWEIGHT_PROT        0
#define LWIP_IPV4                   1
#define LWIP_IPV6                   0
#define LWIP_TCP                    1
#define LWIP_DHCP                   0
#define LWIP_NETIF_STATUS_CALLBACK  0
#define LWIP_NETIF_LINK_CALLBACK    0
#define LWIP_TCP_KEEPALIVE          0
#define TCP_SND_QUEUELEN            (4 * TCP_SND_BUF / TCP_MSS)

/* the appliance's network: one Ethernet netif, the port's MAC driver */
#ifndef LWIP_ETHERNET
#define LWIP_ETHERNET               1
#define LWIP_ARP                    1
#define LWIP_ICMP                   1
#define LWIP_SINGLE_NETIF           1
#define LWIP_NETIF_HOSTNAME         0
/* lwIP's unrolled checksum loop (8 bytes a turn) */
#define LWIP_CHKSUM_ALGORITHM       3
#endif

#ifndef LWIP_UDP
#define LWIP_UDP                    1
#endif

#ifndef LWIP_STATS
#define LWIP_STATS                  1
#define MEM_STATS                   1
#define MEMP_STATS                  1
#define LWIP_STATS_DISPLAY          0
#define LINK_STATS                  1
#define ETHARP_STATS                1
#define IP_STATS                    1
#define TCP_STATS                   1
#endif

#endif
