/* TCP segmentation offload for lwIP, which has none upstream (offload_tso.c).
 *
 * Read by lwIP's sources through LWIP_HOOK_FILENAME (lwipopts.h, offload
 * NIC builds only), so it declares no more than the two hooks need. */
#ifndef LITEDAV_OFFLOAD_TSO_H
#define LITEDAV_OFFLOAD_TSO_H

#include "lwip/arch.h"
#include "lwip/err.h"

struct tcp_pcb;
struct tcp_hdr;
struct pbuf;

/* Wire segments per TSO segment: lwIP builds segments of this many times the
 * peer's MSS and the NIC cuts them. 10 is RFC 6928's initial window. */
#define TSO_WIRE_SEGMENTS 10

/* LWIP_HOOK_TCP_INPACKET_PCB: every received segment with its pcb. */
err_t tso_input_hook(struct tcp_pcb *pcb, const struct tcp_hdr *hdr, const struct pbuf *p);
/* LWIP_HOOK_TCP_OUT_ADD_TCPOPTS: every segment about to go to IP. */
u32_t *tso_output_hook(struct tcp_pcb *pcb, u32_t *opts);

/* The peer's MSS for the TCP segment being handed to the netif now (the one
 * whose output hook ran last), or 0 if unknown; reading it forgets it. */
u16_t tso_take_wire_mss(void);

/* Call once after lwip_init(). */
void tso_init(void);

#endif
