/* lwIP configuration for the host (Linux) build: the LiteX port's values
 * (raw API, NO_SYS, one Ethernet netif), so the native server behaves like the
 * appliance. Differences are marked "host:". */
#ifndef LITEDAV_LWIPOPTS_H
#define LITEDAV_LWIPOPTS_H

#include "../lwipopts_base.h"

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
#define TCP_LISTEN_BACKLOG          1
#define TCP_DEFAULT_LISTEN_BACKLOG  64
/* Same tick as the SoC, so timer behaviour (delayed ACKs, retransmissions,
 * the server's idle timeout) matches it; here it is real time. */
#define TCP_TMR_INTERVAL            50

/* RFC 6528 initial sequence numbers (firmware/app/net/tcp_isn.h); main.c keys them from /dev/urandom */
#define LWIP_HOOK_FILENAME          "net/tcp_isn_lwip.h"
#define LWIP_HOOK_TCP_ISN           tcp_isn_hook

#endif
