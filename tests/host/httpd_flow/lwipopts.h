/* lwIP for test_httpd_flow: NO_SYS, TCP over the loopback netif only, with
 * windows and send buffers small enough that every flow-control path runs. */
#ifndef LITEDAV_TEST_LWIPOPTS_H
#define LITEDAV_TEST_LWIPOPTS_H

/* no Ethernet, UDP or counters: set before the shared settings, which would turn them on */
#define LWIP_ETHERNET               0
#define LWIP_ARP                    0
#define LWIP_ICMP                   0
#define LWIP_UDP                    0
#define LWIP_STATS                  0
#include "../../../firmware/ports/lwipopts_base.h"

#define LWIP_RAW                    0
#define LWIP_IGMP                   0
#define LWIP_AUTOIP                 0
#define LWIP_DNS                    0
#define LWIP_HAVE_LOOPIF            1
#define LWIP_NETIF_LOOPBACK         1

#define MEM_ALIGNMENT               8
#define MEM_SIZE                    (512 * 1024)
#define MEMP_NUM_PBUF               128
#define MEMP_NUM_TCP_PCB            8
#define MEMP_NUM_TCP_SEG            256
#define PBUF_POOL_SIZE              64

#define TCP_MSS                     536
#define TCP_WND                     (4 * TCP_MSS)
#define TCP_SND_BUF                 (4 * TCP_MSS)
#define TCP_DEFAULT_LISTEN_BACKLOG  4

#endif
