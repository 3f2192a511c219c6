/* lwIP configuration for the Gowin EMCU port: raw API, NO_SYS, one Ethernet
 * netif, sized for the EMCU's 8 KiB of SRAM (lwIP gets about 5 KiB of it).
 * TCP_MSS of 536 keeps every frame below 600 bytes, so pool pbufs stay
 * small; peers learn it from our SYN's MSS option. */
#ifndef LITEDAV_LWIPOPTS_H
#define LITEDAV_LWIPOPTS_H

/* left out of the base settings to save flash and SRAM */
#define LWIP_UDP                    0
#define LWIP_STATS                  0
#include "../lwipopts_base.h"

#define MEM_ALIGNMENT               4
#define MEM_SIZE                    1536
#define MEMP_NUM_PBUF               4
#define MEMP_NUM_TCP_PCB            2
#define MEMP_NUM_TCP_PCB_LISTEN     1
#define MEMP_NUM_TCP_SEG            8
#define MEMP_NUM_RAW_PCB            0
#define MEMP_NUM_SYS_TIMEOUT        4
#define MEMP_NUM_ARP_QUEUE          2
#define ARP_TABLE_SIZE              2
#define IP_REASSEMBLY               0
#define IP_FRAG                     0
#define PBUF_POOL_SIZE              4
#define PBUF_POOL_BUFSIZE           LWIP_MEM_ALIGN_SIZE(TCP_MSS + 40 + PBUF_LINK_HLEN)

#define TCP_MSS                     536
#define TCP_WND                     (2 * TCP_MSS)
#define TCP_SND_BUF                 (2 * TCP_MSS)
#define TCP_LISTEN_BACKLOG          0
#define TCP_OVERSIZE                0

#define LWIP_NOASSERT               1

#endif
