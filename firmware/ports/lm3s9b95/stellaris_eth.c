/*
 * lwIP netif driver for the Stellaris (LM3S9B95 / LM3S6965) Ethernet
 * controller. The MAC has no DMA: both directions go through 2 KiB FIFOs
 * read and written one 32-bit word at a time through MACDATA.
 *
 * RX FIFO, per frame: a 16-bit length (the frame plus these 2 bytes plus the
 * 4-byte FCS), the frame, the FCS, packed little-endian into words.
 * TX FIFO: a 16-bit length of the payload (frame minus the 14-byte Ethernet
 * header), then the frame from its destination address on; MACTR.NEWTX
 * sends it, the MAC pads short frames and appends the FCS.
 *
 * Polled from the main loop; the RX interrupt only wakes the CPU from WFI
 * (its handler acknowledges it, cortex_m_idle() checks for frames first).
 * The PHY's link state is followed on the real chip; QEMU does not model the
 * MII (its link reads as down), so the QEMU build leaves the netif link up.
 */
#include "stellaris_eth.h"

#include <string.h>

#include "lwip/etharp.h"
#include "lwip/pbuf.h"
#include "netif/ethernet.h"

#include "lm3s_port.h"
#include "lm3s_regs.h"
#include "platform/port.h"
#include "net/tcp_isn.h"
#include "unaligned.h"

#define RX_HEADER_BYTES 2u       /* the length field */
#define FCS_BYTES 4u
#define ETH_HEADER_BYTES 14u
#define MAX_FRAME 1514u          /* without FCS */
#define TX_WAIT_SPINS 1000000u
#define MII_WAIT_SPINS 100000u
#define NVIC_ISER1 REG32(0xE000E104u)
#define ETH_IRQ 42u

/* The FIFOs take and give whole little-endian words, while a frame's bytes
 * sit in pbufs of any length and alignment. Both directions carry the bytes
 * of a word that straddles two pbufs in `carry`, and move the rest of each
 * pbuf as whole words: one LDR or STR each, unaligned where the payload is
 * (unaligned.h), four to a loop turn: about three instructions a word
 * (bench/README.md, lm3s_instructions). */

/* The bytes of a pbuf chain into MACDATA, after the `have` (1-3) low bytes
 * of `carry` that go first; a last partial word is padded with zeros. */
static void tx_fifo_write(const struct pbuf *q, uint32_t carry, unsigned have)
{
    for (; q; q = q->next) {
        const uint8_t *s = q->payload;
        uint32_t n = q->len;

        for (; have && n; n--) {
            carry |= (uint32_t)*s++ << (8u * have);
            if (++have == 4u) {
                MAC_DATA = carry;
                carry = 0;
                have = 0;
            }
        }
        for (; n >= 16u; n -= 16u, s += 16u) {
            MAC_DATA = unaligned_load32(s);
            MAC_DATA = unaligned_load32(s + 4);
            MAC_DATA = unaligned_load32(s + 8);
            MAC_DATA = unaligned_load32(s + 12);
        }
        for (; n >= 4u; n -= 4u, s += 4u)
            MAC_DATA = unaligned_load32(s);
        for (; n; n--)
            carry |= (uint32_t)*s++ << (8u * have++);
    }
    if (have)
        MAC_DATA = carry;
}

/* `words` more words of the frame out of MACDATA into the pbuf chain p
 * (NULL: read and dropped), after the `have` (2) low bytes of `carry`;
 * what the chain has no room for (the FCS) is read and dropped. */
static void rx_fifo_read(struct pbuf *q, uint32_t carry, unsigned have, uint32_t words)
{
    for (; q; q = q->next) {
        uint8_t *d = q->payload;
        uint32_t n = q->len;

        for (; have && n; n--, have--) {
            *d++ = (uint8_t)carry;
            carry >>= 8;
        }
        for (; n >= 16u && words >= 4u; n -= 16u, d += 16u, words -= 4u) {
            unaligned_store32(d, MAC_DATA);
            unaligned_store32(d + 4, MAC_DATA);
            unaligned_store32(d + 8, MAC_DATA);
            unaligned_store32(d + 12, MAC_DATA);
        }
        for (; n >= 4u && words; n -= 4u, d += 4u, words--)
            unaligned_store32(d, MAC_DATA);
        if (n && words) {
            carry = MAC_DATA;
            words--;
            for (have = 4u; n; n--, have--) {
                *d++ = (uint8_t)carry;
                carry >>= 8;
            }
        }
    }
    while (words--)
        (void)MAC_DATA;
}

/* Throw away the RX FIFO's contents after a length field we cannot trust. */
static void rx_fifo_reset(void)
{
    uint32_t rctl = MAC_RCTL;
    MAC_RCTL = rctl & ~MAC_RCTL_RXEN;
    MAC_RCTL = (rctl & ~MAC_RCTL_RXEN) | MAC_RCTL_RSTFIFO;
    MAC_RCTL = rctl;
}

static err_t stellaris_output(struct netif *netif, struct pbuf *p)
{
    uint32_t spins;
    uint64_t start = port_cycles();
    (void)netif;

    if (p->tot_len < ETH_HEADER_BYTES || p->tot_len > MAX_FRAME) {
        port_stats.tx_dropped++;
        return ERR_IF;
    }
    /* the previous frame must have left the FIFO */
    for (spins = 0; (MAC_TR & MAC_TR_NEWTX) && spins < TX_WAIT_SPINS; spins++)
        ;
    if (MAC_TR & MAC_TR_NEWTX) {
        port_stats.tx_dropped++;
        return ERR_IF;
    }

    /* the payload length field, then the frame */
    tx_fifo_write(p, (uint32_t)(p->tot_len - ETH_HEADER_BYTES), 2);
    MAC_TR = MAC_TR_NEWTX;

    port_stats.frames_out++;
    port_stats.bytes_out += p->tot_len;
    port_stats.tx_copy_cycles += port_cycles() - start;
    return ERR_OK;
}

int stellaris_eth_rx_pending(void)
{
    return (MAC_NP & MAC_NP_M) != 0;
}

/* One frame out of the RX FIFO into a pbuf (NULL: dropped). */
static struct pbuf *rx_frame(uint32_t *frame_len)
{
    uint32_t word = MAC_DATA, field = word & 0xFFFFu, words, len;
    struct pbuf *p = NULL;

    if (field < RX_HEADER_BYTES + ETH_HEADER_BYTES + FCS_BYTES || field > MAC_FIFO_BYTES) {
        rx_fifo_reset();
        *frame_len = 0;
        return NULL;
    }
    len = field - RX_HEADER_BYTES - FCS_BYTES;
    *frame_len = len;
    words = (field + 3u) / 4u;   /* including the first */
    if (len <= MAX_FRAME)
        p = pbuf_alloc(PBUF_RAW, (u16_t)len, PBUF_POOL);
    /* the first word carries the frame's first two bytes */
    rx_fifo_read(p, word >> 16, 2, words - 1u);
    return p;
}

int stellaris_eth_poll(struct netif *netif)
{
    int handled = 0;

    if (MAC_RIS & MAC_INT_FOV) {       /* frames lost: the FIFO was full */
        port_stats.rx_dropped++;
        MAC_IACK = MAC_INT_FOV;
    }
    while (MAC_NP & MAC_NP_M) {
        uint64_t start = port_cycles(), copied;
        tcp_isn_stir_arrival((uint32_t)start);
        uint32_t len;
        struct pbuf *p = rx_frame(&len);

        copied = port_cycles();
        port_stats.rx_copy_cycles += copied - start;
        handled++;
        if (!p) {
            port_stats.rx_dropped++;
            if (!len)
                break;                 /* FIFO was reset */
            continue;
        }
        port_stats.frames_in++;
        port_stats.bytes_in += len;
        if (netif->input(p, netif) != ERR_OK)
            pbuf_free(p);
        port_stats.rx_handle_cycles += port_cycles() - copied;
    }
    return handled;
}

/* The RX interrupt only ends a WFI: acknowledge it, the main loop reads. */
void Ethernet_Handler(void);
void Ethernet_Handler(void)
{
    MAC_IACK = MAC_INT_RX;
}

#ifndef LM3S_QEMU
static int mii_read(unsigned reg, uint32_t *value)
{
    uint32_t spins;
    MAC_MCTL = (reg << MAC_MCTL_REGADR_SHIFT) | MAC_MCTL_START;
    for (spins = 0; (MAC_MCTL & MAC_MCTL_START) && spins < MII_WAIT_SPINS; spins++)
        ;
    if (MAC_MCTL & MAC_MCTL_START)
        return -1;
    *value = MAC_MRXD & 0xFFFFu;
    return 0;
}
#endif

void stellaris_eth_link_poll(struct netif *netif)
{
#ifdef LM3S_QEMU
    (void)netif;   /* no MII model: the link stays up as set at init */
#else
    uint32_t status;
    int up;
    if (mii_read(PHY_MR1_STATUS, &status) != 0)
        return;
    up = (status & PHY_MR1_LINK) != 0;
    if (up && !netif_is_link_up(netif)) {
        cortex_m_printf("eth: link up\n");
        netif_set_link_up(netif);
    } else if (!up && netif_is_link_up(netif)) {
        cortex_m_printf("eth: link down\n");
        netif_set_link_down(netif);
    }
#endif
}

err_t stellaris_eth_init(struct netif *netif)
{
    /* locally administered, fixed: one board per network for now */
    static const uint8_t mac[6] = {0x02, 0x1a, 0xb6, 0x00, 0x00, 0x01};
    volatile uint32_t settle;

    SYSCTL_RCGC2 |= SYSCTL_RCGC2_EMAC0 | SYSCTL_RCGC2_EPHY0;
    for (settle = 0; settle < 8; settle++)
        ;

    netif->name[0] = 's';
    netif->name[1] = 'e';
    netif->output = etharp_output;
    netif->linkoutput = stellaris_output;
    netif->mtu = 1500;
    netif->hwaddr_len = 6;
    memcpy(netif->hwaddr, mac, 6);
    netif->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP | NETIF_FLAG_ETHERNET | NETIF_FLAG_LINK_UP;

    MAC_IM = 0;
    MAC_IACK = 0x7Fu;
    /* MII clock at most 2.5 MHz: core / (2 * (MDV + 1)) */
    MAC_MDV = LM3S_CORE_HZ / (2u * 2500000u);
    MAC_IA0 = mac[0] | (uint32_t)mac[1] << 8 | (uint32_t)mac[2] << 16 | (uint32_t)mac[3] << 24;
    MAC_IA1 = mac[4] | (uint32_t)mac[5] << 8;
    MAC_TCTL = MAC_TCTL_TXEN | MAC_TCTL_PADEN | MAC_TCTL_CRC | MAC_TCTL_DUPLEX;
    MAC_RCTL = MAC_RCTL_RSTFIFO;
    MAC_RCTL = MAC_RCTL_RXEN | MAC_RCTL_AMUL | MAC_RCTL_BADCRC;
    MAC_IM = MAC_INT_RX;
    NVIC_ISER1 = 1u << (ETH_IRQ - 32u);
    return ERR_OK;
}
