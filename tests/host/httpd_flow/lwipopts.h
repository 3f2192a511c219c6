/* lwIP for test_httpd_flow: NO_SYS, TCP over the loopback netif only, with
 * windows and send buffers small enough that every flow-control path runs. */
#ifndef LITEDAV_TEST_LWIPOPTS_H
#define LITEDAV_TEST_LWIPOPTS_H

#define NO_SYS                      1
#define SYS_LIGHTWEIGHT_PROT        0
#define LWIP_SOCKET                 0
#define LWIP_NETCONN                0
#define LWIP_IPV4                   1
#define LWIP_IPV6                   0
#define LWIP_ARP                    0
#define LWIP_ETHERNET               0
#define LWIP_ICMP                   0
#define LWIP_RAW                    0
#define LWIP_UDP                    0
#define LWIP_IGMP                   0
#define LWIP_DHCP                   0
#define LWIP_AUTOIP                 0
#define LWIP_DNS                    0
#define LWIP_TCP                    1
#define LWIP_HAVE_LOOPIF            1
#define LWIP_NETIF_LOOPBACK         1
#define LWIP_TCP_KEEPALIVE          0

#define MEM_ALIGNMENT               8
#define MEM_SIZE                    (512 * 1024)
#define MEMP_NUM_PBUF               128
#define MEMP_NUM_TCP_PCB            8
#define MEMP_NUM_TCP_SEG            256
#define PBUF_POOL_SIZE              64

#define TCP_MSS                     536
#define TCP_WND                     (4 * TCP_MSS)
#define TCP_SND_BUF                 (4 * TCP_MSS)
#define TCP_SND_QUEUELEN            (4 * TCP_SND_BUF / TCP_MSS)
#define TCP_DEFAULT_LISTEN_BACKLOG  4

#define LWIP_STATS                  0

#endif
