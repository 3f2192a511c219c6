/*
 * Receive-side merging of TCP frames (what Linux calls GRO), done by the
 * offload driver on each batch of frames the NIC has written.
 *
 * lwIP's cost per received TCP segment is a few thousand cycles of header
 * checks, PCB lookup and bookkeeping whatever the segment's size, and on
 * this CPU most of it is instruction-cache refills. A bulk sender's frames
 * arrive back to back, and a bulk receiver's ACKs one per poll of its
 * stack; whenever the CPU is behind, several of them wait in the RX ring.
 * Merging them there hands lwIP one segment for many frames:
 *
 * - payload: frames of one flow that continue each other's sequence are
 *   chained into one segment (the later frames' headers dropped, the IPv4
 *   length rewritten, ACK, window and PSH taken from the last), so lwIP
 *   sees the same bytes at the same sequence numbers in fewer segments;
 * - pure ACKs: an ACK is dropped when the next frame is a pure ACK of the
 *   same flow that acknowledges more (ACKs are cumulative, RFC 9293 section
 *   3.4). Equal acknowledgment numbers are never merged: duplicate ACKs
 *   signal loss (RFC 5681 section 3.2) and lwIP must count every one.
 *
 * Only plain segments qualify: IPv4 without options, unfragmented, TCP
 * without options, flags ACK or ACK|PSH, and checksums the NIC found good.
 * Anything else (SYN, FIN, RST, URG, ECN, timestamps...) goes to lwIP as it
 * came, in order.
 */
#include "rx_merge.h"

#include <string.h>

#include "lwip/prot/ethernet.h"
#include "lwip/prot/ip.h"
#include "lwip/prot/tcp.h"

#define IP_OFFSET SIZEOF_ETH_HDR
#define TCP_OFFSET (IP_OFFSET + 20)
#define PAYLOAD_OFFSET (TCP_OFFSET + 20)
#define FLOW_BYTES 12 /* source and destination addresses, then ports: 26..37 */

struct tcp_frame {
    u32_t seq, ack;
    u16_t payload_len;
    u8_t flags;
};

static u32_t be32(const u8_t *b) { return (u32_t)b[0] << 24 | (u32_t)b[1] << 16 | (u32_t)b[2] << 8 | b[3]; }

static u16_t be16(const u8_t *b) { return (u16_t)(b[0] << 8 | b[1]); }

/* A plain TCP segment in one pbuf: fills f and trims p to the IP datagram
 * (short frames carry Ethernet padding). Returns 0 for anything else. */
static int parse(struct pbuf *p, struct tcp_frame *f)
{
    const u8_t *b = p->payload;
    u16_t total;

    if (p->next || p->len < PAYLOAD_OFFSET || be16(b + 12) != ETHTYPE_IP)
        return 0;
    if (b[IP_OFFSET] != 0x45 || b[IP_OFFSET + 9] != IP_PROTO_TCP)
        return 0; /* IPv4 with options, or not TCP */
    if ((b[IP_OFFSET + 6] & 0x3f) || b[IP_OFFSET + 7])
        return 0; /* a fragment */
    total = be16(b + IP_OFFSET + 2);
    if (total < 40 || IP_OFFSET + total > p->len)
        return 0;
    if ((b[TCP_OFFSET + 12] >> 4) != 5)
        return 0; /* TCP options */
    f->flags = b[TCP_OFFSET + 13];
    if ((f->flags & ~(TCP_ACK | TCP_PSH)) || !(f->flags & TCP_ACK))
        return 0;
    f->seq = be32(b + TCP_OFFSET + 4);
    f->ack = be32(b + TCP_OFFSET + 8);
    f->payload_len = (u16_t)(total - 40);
    p->len = p->tot_len = (u16_t)(IP_OFFSET + total);
    return 1;
}

static void start(struct rx_merge *m, struct pbuf *p, const struct tcp_frame *f)
{
    m->head = p;
    m->mergeable = f != NULL;
    if (f) {
        m->payload_len = f->payload_len;
        m->next_seq = f->seq + f->payload_len;
        m->ack = f->ack;
    }
}

void rx_merge_start(struct rx_merge *m, struct pbuf *p)
{
    struct tcp_frame f;
    m->frames = 1;
    start(m, p, parse(p, &f) ? &f : NULL);
}

static int acknowledges_more(u32_t later, u32_t earlier)
{
    return (s32_t)(later - earlier) > 0;
}

int rx_merge_add(struct rx_merge *m, struct pbuf *q)
{
    struct tcp_frame f;
    u8_t *head;

    if (!m->mergeable || m->frames >= RX_MERGE_MAX_FRAMES || !parse(q, &f))
        return 0;
    head = m->head->payload;
    if (memcmp(head + IP_OFFSET + 12, (u8_t *)q->payload + IP_OFFSET + 12, FLOW_BYTES) || f.seq != m->next_seq)
        return 0;

    if (m->payload_len == 0 && f.payload_len == 0) {
        if (!acknowledges_more(f.ack, m->ack))
            return 0; /* a duplicate ACK (or a window update): lwIP sees each */
        pbuf_free(m->head);
        start(m, q, &f);
        m->merged++;
        return 1;
    }
    if (m->payload_len == 0 || f.payload_len == 0 || acknowledges_more(m->ack, f.ack) ||
        m->payload_len + f.payload_len > RX_MERGE_MAX_PAYLOAD)
        return 0;
    /* the later frame's view of our side wins: its ACK, window and PSH */
    memcpy(head + TCP_OFFSET + 8, (u8_t *)q->payload + TCP_OFFSET + 8, 4);
    memcpy(head + TCP_OFFSET + 14, (u8_t *)q->payload + TCP_OFFSET + 14, 2);
    head[TCP_OFFSET + 13] |= f.flags & TCP_PSH;
    pbuf_remove_header(q, PAYLOAD_OFFSET);
    pbuf_cat(m->head, q);
    m->payload_len += f.payload_len;
    m->next_seq += f.payload_len;
    m->ack = f.ack;
    m->frames++;
    m->merged++;
    return 1;
}

struct pbuf *rx_merge_finish(struct rx_merge *m)
{
    u8_t *head = m->head->payload;
    if (m->mergeable && m->frames > 1 && m->payload_len) {
        u16_t total = (u16_t)(40 + m->payload_len);
        head[IP_OFFSET + 2] = (u8_t)(total >> 8);
        head[IP_OFFSET + 3] = (u8_t)total;
    }
    return m->head;
}
