/*
 * TCP segmentation offload for lwIP (the NIC's TSO core: gateware/tso.py).
 *
 * lwIP builds segments of at most pcb->mss payload bytes. Once a connection
 * is established, its real MSS (the peer's, as lwIP negotiated it) is kept
 * in a pcb extension argument and pcb->mss is raised to TSO_WIRE_SEGMENTS
 * times it, so tcp_write() builds segments that large; the driver hands each
 * such segment to the NIC as one TSO chain and the NIC cuts it into
 * wire-MSS frames (offload_netif.c). lwIP's TCP sees one segment: it is
 * acknowledged, timed and retransmitted as a whole (a retransmission is cut
 * again, so the peer gets the same bytes at the same sequence numbers; any
 * part it already has it drops, RFC 9293 section 3.10.7.4).
 *
 * Congestion control stays lwIP's, in bytes (slow start counts acked bytes,
 * RFC 3465), with one difference: lwIP's segments cannot be split to fit a
 * smaller window (only its persist timer does that, for the peer's window),
 * so the congestion window must always hold one whole segment or the sender
 * would wait forever. cwnd starts at one TSO segment (10 wire segments,
 * RFC 6928's initial window) and lwIP never lowers it below pcb->mss: after
 * a timeout the connection restarts from 10 wire segments instead of 1.
 *
 * The driver learns the wire MSS of a segment from the output hook, which
 * lwIP calls in tcp_output_segment() right before ip_output_if(); with
 * NO_SYS nothing else is sent in between. A segment that leaves later (ARP
 * queued it) finds no MSS there and is cut to the link's MTU instead.
 */
#include "offload_tso.h"

#include "lwip/priv/tcp_priv.h"
#include "lwip/tcp.h"

static u8_t wire_mss_arg = LWIP_TCP_PCB_NUM_EXT_ARG_ID_INVALID;
static u16_t pending_wire_mss;

void tso_init(void)
{
    if (wire_mss_arg == LWIP_TCP_PCB_NUM_EXT_ARG_ID_INVALID)
        wire_mss_arg = tcp_ext_arg_alloc_id();
}

static u16_t wire_mss_of(const struct tcp_pcb *pcb)
{
    if (wire_mss_arg == LWIP_TCP_PCB_NUM_EXT_ARG_ID_INVALID)
        return 0;
    return (u16_t)(uintptr_t)tcp_ext_arg_get(pcb, wire_mss_arg);
}

err_t tso_input_hook(struct tcp_pcb *pcb, const struct tcp_hdr *hdr, const struct pbuf *p)
{
    u32_t segment;
    u16_t wire_mss;

    if (pcb->state != ESTABLISHED || wire_mss_arg == LWIP_TCP_PCB_NUM_EXT_ARG_ID_INVALID)
        return ERR_OK;
    wire_mss = wire_mss_of(pcb);
    if (wire_mss) {
        /* rx_merge.c may have joined several wire segments into this one:
         * acknowledge it at once, as lwIP does every second wire segment,
         * so the sender's ACK clock does not wait for the delayed-ACK timer */
        if (p->tot_len > TCPH_HDRLEN_BYTES(hdr) + wire_mss)
            tcp_ack_now(pcb);
        return ERR_OK;
    }
    /* the largest lwIP segment, headers included, must stay within a pbuf's
     * 16-bit length */
    segment = (u32_t)pcb->mss * TSO_WIRE_SEGMENTS;
    if (segment > 0xffffu - 128u)
        segment = (0xffffu - 128u) / pcb->mss * pcb->mss;
    tcp_ext_arg_set(pcb, wire_mss_arg, (void *)(uintptr_t)pcb->mss);
    pcb->mss = (u16_t)segment;
    if (pcb->cwnd < segment)
        pcb->cwnd = (tcpwnd_size_t)segment;
    return ERR_OK;
}

u32_t *tso_output_hook(struct tcp_pcb *pcb, u32_t *opts)
{
    pending_wire_mss = wire_mss_of(pcb);
    return opts;
}

u16_t tso_take_wire_mss(void)
{
    u16_t mss = pending_wire_mss;
    pending_wire_mss = 0;
    return mss;
}
