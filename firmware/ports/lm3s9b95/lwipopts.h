/* lwIP configuration for the LM3S9B95 port: raw API, NO_SYS, one Ethernet
 * netif, sized so lwIP takes about a third of QEMU's 64 KiB SRAM. TCP_MSS of
 * 536 keeps every frame below 600 bytes, so pool pbufs stay small; peers
 * learn it from our SYN's MSS option. */
#ifndef LITEDAV_LWIPOPTS_H
#define LITEDAV_LWIPOPTS_H

#include "../lwipopts_base.h"

#define MEM_ALIGNMENT               4
/* The checksums the MAC does not compute, summed a word at a time
 * (ports/cortex_m/chksum.c) */
#include "cortex_m.h"
#define LWIP_CHKSUM                 cortex_m_chksum
/* How many clients are served at once is HTTPD_CONNS_MAX
 * (app_port_config.h): httpd's static pool of connection states (about
 * 3.2 KiB each). The heap holds their send data and the clients that wait.
 * PCBs (about 160 bytes) are more: a client accepted while every state is
 * taken waits in httpd with a heap copy of its request head, and a SYN that
 * finds every PCB taken waits in syn_queue.c, instead of being dropped and
 * retried by the peer only seconds later (QEMU's user-mode network: 6 s, 18 s,
 * 42 s). */
/* Each PCB costs about 348 bytes of SRAM: 156 in lwIP's PCB pool and 192 of
 * heap (MEM_SIZE below). The chip's 96 KiB hold 96 with ~6 KB to spare; the
 * QEMU build's 64 KiB hold 24 beside its 8 KiB RAM store (the bench's
 * semihosted-store build, bench/lm3s_scale.py, sets 40 with -D). */
#ifndef LM3S_TCP_PCBS
#ifdef LM3S_QEMU                     /* 64 KiB of SRAM */
#define LM3S_TCP_PCBS               24
#else                                 /* the LM3S9B95's 96 KiB */
#define LM3S_TCP_PCBS               96
#endif
#endif
#define MEMP_NUM_TCP_PCB            LM3S_TCP_PCBS
/* per PCB, room for a waiting client's record and a copy of a small request
 * head (about 170 bytes for a 100-byte GET), or for the unacknowledged end
 * of a response sent just before the close */
#define MEM_SIZE                    (HTTPD_CONNS_MAX * (TCP_SND_BUF + 256) + \
                                     LM3S_TCP_PCBS * 192 + 1024)
#define MEMP_NUM_PBUF               16
#define MEMP_NUM_TCP_PCB_LISTEN     1
/* each closing PCB holds its response's segments until they are ACKed */
#define MEMP_NUM_TCP_SEG            48
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
/* Segments sent come from the heap or by reference, not the pool: as large
 * as the peer takes (lwIP patch 0003), so a small GET's response is one
 * frame, not two and an extra ACK */
#define TCP_SEND_MSS_MAX            1460
#define TCP_WND                     (2 * TCP_MSS)
#define TCP_SND_BUF                 (2 * TCP_MSS)
#define TCP_LISTEN_BACKLOG          1
#define TCP_DEFAULT_LISTEN_BACKLOG  MEMP_NUM_TCP_PCB
#define TCP_OVERSIZE                0

/* SYNs that find every PCB taken wait in syn_queue.c (app_port_config.h
 * sizes it) instead of being dropped */
#define LWIP_HOOK_FILENAME          "lm3s_hooks.h"
#define LWIP_HOOK_TCP_INPACKET_PCB(pcb, hdr, optlen, opt1len, opt2, p) \
    syn_queue_input_hook(pcb, hdr, optlen, opt1len, opt2, p)
/* and half-open connections lwIP ends itself are counted (syn_half_open_dropped) */
#define LWIP_HOOK_TCP_OUT_ADD_TCPOPTS(p, hdr, pcb, opts) syn_queue_output_hook(pcb, opts)
/* RFC 6528 initial sequence numbers (firmware/app/net/tcp_isn.h) */
#define LWIP_HOOK_TCP_ISN           tcp_isn_hook

#endif
