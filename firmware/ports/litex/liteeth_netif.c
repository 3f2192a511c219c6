/*
 * lwIP netif driver for LiteEth's wishbone MAC: received frames land in RX
 * SRAM slots that the CPU copies into pbufs; frames to send are copied into a
 * TX slot and started. Polled from the main loop: with no DMA every byte is a
 * CPU copy anyway, and polling avoids interrupt entry cost per frame.
 */
#include "liteeth_netif.h"

#include <string.h>

#include <generated/csr.h>
#include <generated/mem.h>
#include <generated/soc.h>

#include "lwip/etharp.h"
#include "lwip/pbuf.h"
#include "netif/ethernet.h"

#include "platform/port.h"
#include "net/tcp_isn.h"

#define RX_SLOT(n) ((const uint8_t *)(ETHMAC_BASE + (n) * ETHMAC_SLOT_SIZE))
#define TX_SLOT(n) ((uint8_t *)(ETHMAC_BASE + (ETHMAC_RX_SLOTS + (n)) * ETHMAC_SLOT_SIZE))
#define EV_PENDING 1

static unsigned tx_slot;
static uint32_t mac_errors_seen; /* MAC's count of frames lost for want of a free slot */

static err_t liteeth_output(struct netif *netif, struct pbuf *p)
{
    uint8_t *dst;
    uint16_t len;
    uint64_t start = port_cycles();

    if (p->tot_len > ETHMAC_SLOT_SIZE) {
        port_stats.tx_dropped++;
        return ERR_IF;
    }
    while (!ethmac_sram_reader_ready_read())
        ;
    dst = TX_SLOT(tx_slot);
    len = pbuf_copy_partial(p, dst, p->tot_len, 0);
    ethmac_sram_reader_slot_write(tx_slot);
    ethmac_sram_reader_length_write(len);
    ethmac_sram_reader_start_write(1);
    tx_slot = (tx_slot + 1) % ETHMAC_TX_SLOTS;

    port_stats.frames_out++;
    port_stats.bytes_out += len;
    port_stats.tx_copy_cycles += port_cycles() - start;
    return ERR_OK;
}

int liteeth_netif_poll(struct netif *netif)
{
    int handled = 0;
    uint32_t mac_errors = ethmac_sram_writer_errors_read();

    /* the MAC counts frames that found every slot full */
    port_stats.rx_dropped += mac_errors - mac_errors_seen;
    port_stats.rx_dropped_full += mac_errors - mac_errors_seen;
    mac_errors_seen = mac_errors;

    /* At most a slot-load of frames per call, as the offload driver takes its
     * ring's frames up to the head it read: while frames kept coming faster
     * than lwIP handled them (a flood), an unbounded loop never gave the main
     * loop back, so lwIP's timers (delayed ACKs, timeouts) and app_poll (a
     * waiting client's connection state) stopped until the flood did: a
     * request queued 8 M cycles behind a half-open flood's frames. */
    while (handled < ETHMAC_RX_SLOTS && (ethmac_sram_writer_ev_pending_read() & EV_PENDING)) {
        unsigned slot = ethmac_sram_writer_slot_read();
        uint32_t len = ethmac_sram_writer_length_read();
        struct pbuf *p = NULL;
        uint64_t start = port_cycles(), copied;
#ifdef LWIP_HOOK_TCP_ISN /* not on the Tang Nano 4K's bring-up image (gowin_emcu) */
        tcp_isn_stir_arrival((uint32_t)start);
#endif

        if (len >= 14 && len <= ETHMAC_SLOT_SIZE) {
            p = pbuf_alloc(PBUF_RAW, (u16_t)len, PBUF_POOL);
            if (!p) {
                /* PBUF_POOL taken by frames lwIP and the server hold: lwIP's heap,
                 * so the ACKs that let them go still come in (offload_netif.c) */
                p = pbuf_alloc(PBUF_RAW, (u16_t)len, PBUF_RAM);
                if (p)
                    port_stats.rx_copied_pool_empty++;
                else
                    port_stats.rx_dropped_pool_empty++;
            }
        }
        if (p) {
            pbuf_take(p, RX_SLOT(slot), (u16_t)len);
        }
        /* the slot is free again once its bytes are copied */
        ethmac_sram_writer_ev_pending_write(EV_PENDING);
        copied = port_cycles();
        port_stats.rx_copy_cycles += copied - start;

        if (!p) {
            port_stats.rx_dropped++;
        } else {
            port_stats.frames_in++;
            port_stats.bytes_in += len;
            if (netif->input(p, netif) != ERR_OK)
                pbuf_free(p);
            port_stats.rx_handle_cycles += port_cycles() - copied;
        }
        handled++;
    }
    return handled;
}

err_t liteeth_netif_init(struct netif *netif)
{
    static const uint8_t mac[6] = {0x10, 0xe2, 0xd5, 0x00, 0x00, 0x01};

    netif->name[0] = 'e';
    netif->name[1] = 'l';
    netif->output = etharp_output;
    netif->linkoutput = liteeth_output;
    netif->mtu = 1500;
    netif->hwaddr_len = 6;
    memcpy(netif->hwaddr, mac, 6);
    netif->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP | NETIF_FLAG_ETHERNET | NETIF_FLAG_LINK_UP;

    /* drop whatever arrived before the stack was ready */
    while (ethmac_sram_writer_ev_pending_read() & EV_PENDING)
        ethmac_sram_writer_ev_pending_write(EV_PENDING);
    mac_errors_seen = ethmac_sram_writer_errors_read();
    ethmac_sram_writer_ev_enable_write(0);
    ethmac_sram_reader_ev_enable_write(0);
    return ERR_OK;
}
