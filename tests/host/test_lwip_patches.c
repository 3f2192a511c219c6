/* LiteDAV's patches to lwIP (firmware/lwip-patches, applied by `make deps`), each checked on
 * lwIP's own TCP input and output with the host build's lwipopts.h, under ASan/UBSan. Every
 * check here fails on lwIP without the patch it names.
 *
 * A netif with no link layer: the test writes IPv4 segments from a peer (10.0.0.2:40000) into
 * ip4_input() and reads what lwIP sends back from the netif's output. No timer runs unless a test
 * calls tcp_fasttmr(), so an ACK seen right after a segment was sent at once, not delayed.
 *
 *   0001 (tcp-ack-a-gap-filling-segment-at-once): a segment that fills a gap in the sequence
 *        space, segments waiting out of order beyond it, is acknowledged at once, up to the end
 *        of what it joined (RFC 5681 section 4.2); an in-order segment with no gap keeps lwIP's
 *        delayed ACK.
 *   0003 (tcp-send-mss-max): with TCP_SEND_MSS_MAX above TCP_MSS (this build sets it, the
 *        Makefile says why), a remote host's larger MSS is taken for what lwIP sends, while
 *        the MSS lwIP advertises stays TCP_MSS.
 *
 * The last line printed is "N passed, M failed". */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lwip/inet_chksum.h"
#include "lwip/init.h"
#include "lwip/ip4.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "lwip/priv/tcp_priv.h"
#include "lwip/prot/ip4.h"
#include "lwip/prot/tcp.h"
#include "lwip/tcp.h"

#include "check.h"

/* what the host port's arch/cc.h and NO_SYS lwIP expect from the program */
u32_t sys_now(void) { return 0; }
unsigned int litedav_rand(void) { return 12345u; }
void litedav_halt(void) { abort(); }

#define SERVER_PORT 80
static u16_t peer_port = 40000; /* a test of its own connection takes another */
#define PEER_ISN    1000000u
#define DATA        100        /* bytes per data segment */

static struct netif test_netif;
static ip4_addr_t server_ip, peer_ip;

/* ---- what lwIP sends ----------------------------------------------------- */

struct sent_segment {
    u32_t seqno, ackno;
    u8_t flags;
    u16_t data_len;
    u16_t mss_option;   /* 0: none */
};

static struct sent_segment sent[16];
static int sent_count;

static err_t capture_output(struct netif *netif, struct pbuf *p, const ip4_addr_t *dest)
{
    u8_t packet[1600];
    (void)netif;
    (void)dest;
    if (sent_count == (int)(sizeof(sent) / sizeof(sent[0])) || p->tot_len > sizeof(packet))
        return ERR_OK;
    pbuf_copy_partial(p, packet, p->tot_len, 0);
    const struct ip_hdr *ip = (const struct ip_hdr *)packet;
    const struct tcp_hdr *tcp = (const struct tcp_hdr *)(packet + IPH_HL_BYTES(ip));
    struct sent_segment *s = &sent[sent_count++];
    s->seqno = lwip_ntohl(tcp->seqno);
    s->ackno = lwip_ntohl(tcp->ackno);
    s->flags = TCPH_FLAGS(tcp);
    s->data_len = (u16_t)(p->tot_len - IPH_HL_BYTES(ip) - TCPH_HDRLEN_BYTES(tcp));
    s->mss_option = 0;
    for (const u8_t *o = (const u8_t *)(tcp + 1), *end = (const u8_t *)tcp + TCPH_HDRLEN_BYTES(tcp);
         o < end && *o != LWIP_TCP_OPT_EOL; o += *o == LWIP_TCP_OPT_NOP ? 1 : (o[1] ? o[1] : 1)) {
        if (*o == LWIP_TCP_OPT_MSS && o + 4 <= end)
            s->mss_option = (u16_t)(o[2] << 8 | o[3]);
    }
    return ERR_OK;
}

static err_t test_netif_init(struct netif *netif)
{
    netif->output = capture_output;
    netif->mtu = 1500;
    netif->flags = NETIF_FLAG_UP | NETIF_FLAG_LINK_UP;
    return ERR_OK;
}

/* ---- what the peer sends ------------------------------------------------- */

/* A segment from the peer, with an MSS option when mss is not 0. */
static void peer_sends_mss(u32_t seqno, u32_t ackno, u8_t flags, u16_t data_len, u16_t mss)
{
    u16_t hlen = (u16_t)(TCP_HLEN + (mss ? 4 : 0)), tcp_len = (u16_t)(hlen + data_len);
    struct pbuf *p = pbuf_alloc(PBUF_RAW, (u16_t)(IP_HLEN + tcp_len), PBUF_RAM);
    LWIP_ASSERT("pbuf", p != NULL && p->len == p->tot_len);
    memset(p->payload, 0, p->len);

    struct ip_hdr *ip = (struct ip_hdr *)p->payload;
    IPH_VHL_SET(ip, 4, IP_HLEN / 4);
    IPH_LEN_SET(ip, lwip_htons((u16_t)(IP_HLEN + tcp_len)));
    IPH_TTL_SET(ip, 64);
    IPH_PROTO_SET(ip, IP_PROTO_TCP);
    ip4_addr_copy(ip->src, peer_ip);
    ip4_addr_copy(ip->dest, server_ip);
    IPH_CHKSUM_SET(ip, inet_chksum(ip, IP_HLEN));

    struct tcp_hdr *tcp = (struct tcp_hdr *)((u8_t *)p->payload + IP_HLEN);
    tcp->src = lwip_htons(peer_port);
    tcp->dest = lwip_htons(SERVER_PORT);
    tcp->seqno = lwip_htonl(seqno);
    tcp->ackno = lwip_htonl(ackno);
    TCPH_HDRLEN_FLAGS_SET(tcp, hlen / 4, flags);
    tcp->wnd = lwip_htons(0xffff);
    if (mss) {
        u8_t *o = (u8_t *)tcp + TCP_HLEN;
        o[0] = LWIP_TCP_OPT_MSS;
        o[1] = LWIP_TCP_OPT_LEN_MSS;
        o[2] = (u8_t)(mss >> 8);
        o[3] = (u8_t)mss;
    }
    memset((u8_t *)tcp + hlen, 'x', data_len);
    pbuf_remove_header(p, IP_HLEN);
    tcp->chksum = ip_chksum_pseudo(p, IP_PROTO_TCP, tcp_len, &peer_ip, &server_ip);
    pbuf_add_header(p, IP_HLEN);

    sent_count = 0;
    ip4_input(p, &test_netif);
}

static void peer_sends(u32_t seqno, u32_t ackno, u8_t flags, u16_t data_len)
{
    peer_sends_mss(seqno, ackno, flags, data_len, 0);
}

/* ---- the server: accepts and reads everything ---------------------------- */

static err_t server_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
    (void)arg;
    (void)err;
    if (p != NULL) {
        tcp_recved(pcb, p->tot_len);
        pbuf_free(p);
    }
    return ERR_OK;
}

static struct tcp_pcb *accepted;

static err_t server_accept(void *arg, struct tcp_pcb *pcb, err_t err)
{
    (void)arg;
    (void)err;
    accepted = pcb;
    tcp_recv(pcb, server_recv);
    return ERR_OK;
}

/* The ACK lwIP sent alone, its acknowledgment number; 0 when it sent none or more than one. */
static u32_t only_ack(void)
{
    if (sent_count != 1 || sent[0].data_len != 0 || !(sent[0].flags & TCP_ACK))
        return 0;
    return sent[0].ackno;
}

static void test_gap_filling_segment_acked_at_once(void)
{
    struct tcp_pcb *listener = tcp_new();
    CHECK(tcp_bind(listener, &server_ip, SERVER_PORT) == ERR_OK);
    listener = tcp_listen(listener);
    tcp_accept(listener, server_accept);

    /* handshake */
    peer_sends(PEER_ISN, 0, TCP_SYN, 0);
    CHECKF(sent_count == 1 && (sent[0].flags & (TCP_SYN | TCP_ACK)) == (TCP_SYN | TCP_ACK),
           "%d segments, flags %02x", sent_count, sent_count ? sent[0].flags : 0);
    u32_t server_next = sent[0].seqno + 1, next = PEER_ISN + 1;
    peer_sends(next, server_next, TCP_ACK, 0);
    CHECK(sent_count == 0);

    /* in order with no gap: lwIP's delayed ACK, sent by the fast timer */
    peer_sends(next, server_next, TCP_ACK | TCP_PSH, DATA);
    CHECKF(sent_count == 0, "%d segments sent at once for an in-order segment", sent_count);
    sent_count = 0;
    tcp_fasttmr();
    CHECKF(only_ack() == next + DATA, "ack %u, expected %u", (unsigned)only_ack(),
           (unsigned)(next + DATA));
    next += DATA;

    /* one segment lost: the one after it is out of order and acknowledged at once (lwIP's own) */
    peer_sends(next + DATA, server_next, TCP_ACK | TCP_PSH, DATA);
    CHECKF(only_ack() == next, "duplicate ack %u, expected %u", (unsigned)only_ack(),
           (unsigned)next);

    /* 0001: the retransmission fills the gap: acknowledged at once, up to the end of both */
    peer_sends(next, server_next, TCP_ACK | TCP_PSH, DATA);
    CHECKF(only_ack() == next + 2 * DATA, "%d segments sent at once for the gap-filling one, "
           "ack %u, expected %u", sent_count, (unsigned)only_ack(), (unsigned)(next + 2 * DATA));
    next += 2 * DATA;

    /* and after it, in order again: delayed as before */
    peer_sends(next, server_next, TCP_ACK | TCP_PSH, DATA);
    CHECKF(sent_count == 0, "%d segments sent at once for an in-order segment", sent_count);
    sent_count = 0;
    tcp_fasttmr();
    CHECK(only_ack() == next + DATA);
    next += DATA;

    /* two segments lost, the first retransmission fills part of the gap: acknowledged at once
       up to the second hole */
    peer_sends(next + 2 * DATA, server_next, TCP_ACK | TCP_PSH, DATA);
    CHECK(only_ack() == next);
    peer_sends(next, server_next, TCP_ACK | TCP_PSH, DATA);
    CHECKF(only_ack() == next + DATA, "ack %u, expected %u", (unsigned)only_ack(),
           (unsigned)(next + DATA));
    peer_sends(next + DATA, server_next, TCP_ACK | TCP_PSH, DATA);
    CHECKF(only_ack() == next + 3 * DATA, "ack %u, expected %u", (unsigned)only_ack(),
           (unsigned)(next + 3 * DATA));
}

/* 0003: the peer advertises an MSS above TCP_MSS on a link that carries it */
static void test_send_mss_above_tcp_mss(void)
{
    const u16_t peer_mss = 8000;
    u16_t mtu = test_netif.mtu;
    test_netif.mtu = 9000;
    peer_port = 40001;
    accepted = NULL;

    peer_sends_mss(PEER_ISN, 0, TCP_SYN, 0, peer_mss);
    CHECKF(sent_count == 1 && sent[0].mss_option == TCP_MSS,
           "%d segments, the SYN-ACK's MSS %u, expected TCP_MSS %u", sent_count,
           sent_count ? sent[0].mss_option : 0, (unsigned)TCP_MSS);
    u32_t server_next = sent_count ? sent[0].seqno + 1 : 0;
    peer_sends(PEER_ISN + 1, server_next, TCP_ACK, 0);
    CHECK(accepted != NULL);
    if (accepted)
        CHECKF(accepted->mss == peer_mss, "send MSS %u, expected the peer's %u (TCP_MSS %u)",
               accepted->mss, peer_mss, (unsigned)TCP_MSS);
    test_netif.mtu = mtu;
}

int main(void)
{
    lwip_init();
    IP4_ADDR(&server_ip, 10, 0, 0, 1);
    IP4_ADDR(&peer_ip, 10, 0, 0, 2);
    ip4_addr_t netmask;
    IP4_ADDR(&netmask, 255, 255, 255, 0);
    netif_add(&test_netif, &server_ip, &netmask, IP4_ADDR_ANY4, NULL, test_netif_init, ip4_input);
    netif_set_default(&test_netif);
    netif_set_up(&test_netif);

    test_gap_filling_segment_acked_at_once();
    test_send_mss_above_tcp_mss();
    return check_summary();
}
