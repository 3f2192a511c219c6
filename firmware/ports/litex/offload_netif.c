/*
 * lwIP netif driver for the offload NIC (docs/nic.md, gateware/nic.py).
 *
 * RX is zero-copy: every RX descriptor points into a PBUF_POOL pbuf, and the
 * pbuf the NIC filled is the one handed to lwIP; its slot is refilled with a
 * fresh pbuf. The NIC verifies IPv4/TCP/UDP checksums and reports them in the
 * descriptor; lwIP's software check is switched off per frame when they are
 * good (netif checksum flags, LWIP_CHECKSUM_CTRL_PER_NETIF).
 *
 * TX is scatter-gather: one descriptor per pbuf of the chain, eop on the last,
 * with the NIC inserting the IPv4 header and TCP/UDP checksums (lwIP's
 * GEN_IP/UDP/TCP are off). The chain is held with pbuf_ref() until tx_head
 * passes its last descriptor; lwIP will not retransmit a segment whose pbuf
 * is still referenced (tcp_output_segment_busy), so a queued frame is never
 * rewritten under the NIC. A TCP segment larger than the MTU (offload_tso.c
 * makes lwIP build them) goes out as one TSO chain: its headers alone in the
 * first descriptor, the payload after, and the peer's MSS in the descriptor.
 *
 * Caches: VexRiscv's data cache is write-through, so everything the CPU
 * stores (TX data, descriptors) is in RAM before the CSR write that hands it
 * to the NIC (the CPU's bus is in order). DMA writes are not seen through
 * cache lines loaded earlier, so what the NIC wrote is invalidated before it
 * is read (the NIC writes a frame and its descriptor before it advances
 * rx_head). A CPU whose data cache invalidates single lines (a generated
 * VexRiscv: LITEDAV_DCACHE_LINE_INVALIDATE, soc/vexriscv_netlist.py) drops
 * each descriptor's line and then the lines of its frame's bytes; the
 * prebuilt netlists can only invalidate the whole cache, once per poll that
 * finds frames (and so does a build with LITEDAV_RX_INVALIDATE_WHOLE_CACHE,
 * to compare the two: bench/cpu_caches.py). Invalidating is harmless for the
 * CPU's own data because nothing in the cache is dirty.
 *
 * Polled from the main loop, like the LiteEth driver: the NIC's interrupt is
 * left disabled.
 */
#include "offload_netif.h"

#include <string.h>

#include <generated/csr.h>
#include <generated/soc.h>
#include <system.h>

#include "lwip/etharp.h"
#include "lwip/ip4.h"
#include "lwip/pbuf.h"
#include "lwip/prot/ethernet.h"
#include "lwip/prot/ip.h"
#include "netif/ethernet.h"

#include "offload_tso.h"
#include "platform/port.h"
#include "rx_merge.h"
#include "net/tcp_isn.h"

/* Ring sizes: RX takes pbufs from PBUF_POOL and must leave some for the
 * frames lwIP holds (TCP receive queues); TX needs one descriptor per pbuf.
 * RX holds a burst of a few frames from each of 100 clients that connect at
 * once: their SYNs arrive within microseconds at 1 Gbit/s, far faster than
 * the CPU takes them (tens of thousands of cycles each), and a SYN the ring
 * has no descriptor for is dropped and waits out the client's SYN
 * retransmission timeout (tests/test_sim_floods.py, ab -c 100). */
#define RX_RING_SIZE 256
#define TX_RING_SIZE 256
#define RX_RESERVE 8 /* pool pbufs kept back for small frames (rx_copy_out) */
#define RX_BUFFER_SIZE PBUF_POOL_BUFSIZE

#if !LWIP_CHECKSUM_CTRL_PER_NETIF
#error "the NIC's checksum offload needs LWIP_CHECKSUM_CTRL_PER_NETIF (lwipopts.h)"
#endif
#if RX_RING_SIZE + RX_RESERVE >= PBUF_POOL_SIZE
#error "the RX ring and its reserve (RX_RESERVE) would take every pbuf of PBUF_POOL"
#endif

/* Descriptor words (docs/nic.md, "Descriptor rings"). */
struct nic_descriptor {
    volatile uint32_t word[4];
};

#define TX_EOP     (1u << 16)
#define TX_IP_CSUM (1u << 17)
#define TX_L4_CSUM (1u << 18)
#define TX_TSO     (1u << 19)
#define TSO_MSS_MAX 1920u /* the longest segment the NIC's TSO stores (docs/nic.md) */

#define RX_LENGTH(w2)    ((w2) & 0xffffu)
#define RX_DONE          (1u << 16)
/* Frames dropped here: frame_error, runt, truncated, length_error, overflow,
 * and vlan (this lwIP has no 802.1Q support). */
#define RX_DROPPED_BITS  (0x3fu << 17)
#define RX_L3_STATUS(w2) (((w2) >> 24) & 3u)
#define RX_L4_STATUS(w2) (((w2) >> 26) & 3u)
#define STATUS_OK        1u

static struct nic_descriptor rx_ring[RX_RING_SIZE] __attribute__((aligned(16)));
static struct nic_descriptor tx_ring[TX_RING_SIZE] __attribute__((aligned(16)));
static struct pbuf *rx_pbuf[RX_RING_SIZE];  /* the pbuf behind each RX descriptor */
static struct pbuf *tx_pbuf[TX_RING_SIZE];  /* a sent chain, on its last descriptor */

static unsigned rx_next;  /* next descriptor the NIC completes */
static unsigned rx_tail;  /* one past the last descriptor handed to the NIC */
static unsigned tx_clean; /* oldest descriptor not yet reclaimed */
static unsigned tx_tail;  /* one past the last descriptor handed to the NIC */

/* The NIC's 16-bit drop counters, last values seen (they wrap; we take
 * differences): RX dropped for want of a descriptor, for a frame error, for
 * a full FIFO; TX chains refused (bad descriptors) and TSO chains cut. */
enum { RX_EMPTY, RX_ERROR, RX_OVERRUN, TX_ERRORS, TSO_ERRORS, NIC_COUNTERS };
static uint16_t counters_seen[NIC_COUNTERS];

/* Checksums the NIC inserts on TX; lwIP keeps ICMP's, which the NIC does not do. */
#define CHECKSUM_GEN_BY_NIC (NETIF_CHECKSUM_GEN_IP | NETIF_CHECKSUM_GEN_UDP | NETIF_CHECKSUM_GEN_TCP)
#define CHECKSUM_FLAGS_ALL_CHECKED (NETIF_CHECKSUM_ENABLE_ALL & ~CHECKSUM_GEN_BY_NIC)

static unsigned ring_next(unsigned index, unsigned size) { return index + 1 == size ? 0 : index + 1; }

#if defined(LITEDAV_DCACHE_LINE_INVALIDATE) && !defined(LITEDAV_RX_INVALIDATE_WHOLE_CACHE)
#define RX_INVALIDATE_LINES 1
#define DCACHE_LINE_BYTES 32u
/* Drop the data cache's lines over [p, p + len), len > 0: the cache's
 * management instruction with the first line's address in rs1 and the number
 * of lines after it in rs2 (soc/vexriscv-patches/0001), one cycle a line. */
static void dcache_invalidate(const volatile void *p, uint32_t len)
{
    uintptr_t first = (uintptr_t)p & ~(uintptr_t)(DCACHE_LINE_BYTES - 1);
    uintptr_t last = ((uintptr_t)p + len - 1) & ~(uintptr_t)(DCACHE_LINE_BYTES - 1);
    uint32_t more = (uint32_t)(last - first) / DCACHE_LINE_BYTES;
    __asm__ volatile(".insn r 0x0f, 5, 0, x0, %0, %1" ::"r"(first), "r"(more) : "memory");
}
#endif

/* The status word of RX descriptor `index`, as the NIC last wrote it; with
 * RX_DONE, the frame's bytes are readable too (their stale lines dropped). */
static uint32_t rx_status(unsigned index)
{
#ifdef RX_INVALIDATE_LINES
    uint32_t status;
    dcache_invalidate(&rx_ring[index], sizeof rx_ring[index]);
    status = rx_ring[index].word[2];
    if ((status & RX_DONE) && RX_LENGTH(status) && RX_LENGTH(status) <= RX_BUFFER_SIZE)
        dcache_invalidate(rx_pbuf[index]->payload, RX_LENGTH(status));
    return status;
#else
    return rx_ring[index].word[2]; /* rx_poll invalidated the whole cache */
#endif
}

static uint32_t address_of(const void *p) { return (uint32_t)(uintptr_t)p; }

/* --- RX ------------------------------------------------------------------- */

/* The ring must not run dry when PBUF_POOL does. Frames lwIP and the server
 * hold (a paused request's body, data refused while a connection waits for
 * its state, out-of-order segments) are pool pbufs, and many clients sending
 * request bodies at once can hold every pbuf the ring does not. A ring
 * refilled only from the pool would then empty, and the NIC would drop every
 * frame, among them the ACKs that let the responses finish and the pbufs come
 * back: the server would never recover. So a frame leaves the ring only with
 * its slot's next buffer secured: a fresh pool pbuf (rx_spare), or else the
 * frame's own buffer, after its bytes are copied into one of RX_RESERVE pool
 * pbufs kept back for small frames (ACKs) or into lwIP's heap. Only a frame
 * that finds neither is dropped, and the ring stays full
 * (tests/test_sim_offload.py: 100 clients sending 16 KB REPORTs at once). */
#define RX_SMALL_FRAME 128
static struct pbuf *rx_spare[RX_RING_SIZE];  /* buffers secured for the slots just taken */
static unsigned rx_spares;
static struct pbuf *rx_reserve[RX_RESERVE];  /* for small frames while the pool is empty */
static unsigned rx_reserved;

static struct pbuf *pool_buffer(void)
{
    struct pbuf *p = pbuf_alloc(PBUF_RAW, RX_BUFFER_SIZE, PBUF_POOL);
    if (p && p->next) { /* PBUF_POOL_BUFSIZE too small for a frame: lwipopts.h */
        pbuf_free(p);
        return NULL;
    }
    return p;
}

/* A buffer for the slot of the frame about to leave the ring. */
static int rx_secure_slot(void)
{
    struct pbuf *p;
    if (rx_spares == RX_RING_SIZE)
        return 0;   /* cannot happen (one spare per frame taken since the last refill);
                     * as for an empty pool, the frame is copied out of the ring */
    p = pool_buffer();
    if (!p)
        return 0;
    rx_spare[rx_spares++] = p;
    return 1;
}

/* The frame in p (len bytes) copied out of its ring buffer, which goes back
 * to the ring; NULL (the frame dropped) when nothing can hold it. */
static struct pbuf *rx_copy_out(struct pbuf *p, uint32_t len)
{
    struct pbuf *copy = NULL;
    if (len <= RX_SMALL_FRAME && rx_reserved)
        copy = rx_reserve[--rx_reserved];
    else
        copy = pbuf_alloc(PBUF_RAW, (u16_t)len, PBUF_RAM);
    if (copy) {
        memcpy(copy->payload, p->payload, len);
        copy->len = copy->tot_len = (u16_t)len;
        port_stats.rx_copied_pool_empty++;
    } else {
        port_stats.rx_dropped++;
        port_stats.rx_dropped_pool_empty++;
    }
    if (rx_spares < RX_RING_SIZE)
        rx_spare[rx_spares++] = p;
    else
        pbuf_free(p);
    return copy;
}

/* Hand empty buffers to the NIC up to one short of a full ring, the reserve
 * topped up first. Returns 0 when PBUF_POOL is empty (the ring then runs
 * shorter until pbufs come back; rx_poll keeps what it has). */
static int rx_refill(void)
{
    unsigned tail = rx_tail;
    int ok = 1;

    while (rx_reserved < RX_RESERVE) {
        struct pbuf *p = pool_buffer();
        if (!p)
            break;
        rx_reserve[rx_reserved++] = p;
    }
    while (ring_next(tail, RX_RING_SIZE) != rx_next) {
        struct pbuf *p = rx_spares ? rx_spare[--rx_spares] : pool_buffer();
        struct nic_descriptor *d = &rx_ring[tail];
        if (!p) {
            port_stats.rx_refill_short++;
            ok = 0;
            break;
        }
        rx_pbuf[tail] = p;
        d->word[0] = address_of(p->payload);
        d->word[1] = RX_BUFFER_SIZE;
        d->word[2] = 0;
        d->word[3] = 0;
        tail = ring_next(tail, RX_RING_SIZE);
    }
    if (tail != rx_tail) {
        rx_tail = tail;
        nic_rx_ring_tail_write(tail);
    }
    return ok;
}

/* A frame lwIP may see: no error flag, a sane length. */
static int rx_frame_ok(uint32_t status)
{
    uint32_t len = RX_LENGTH(status);
    return !(status & RX_DROPPED_BITS) && len >= SIZEOF_ETH_HDR && len <= RX_BUFFER_SIZE;
}

/* IPv4 and TCP/UDP checksums both verified good by the NIC. */
static int rx_checksums_good(uint32_t status)
{
    return RX_L3_STATUS(status) == STATUS_OK && RX_L4_STATUS(status) == STATUS_OK;
}

/* lwIP verifies in software only what the NIC did not find good. */
static u16_t rx_checksum_flags(uint32_t status)
{
    u16_t flags = CHECKSUM_FLAGS_ALL_CHECKED;
    if (RX_L3_STATUS(status) == STATUS_OK)
        flags &= ~NETIF_CHECKSUM_CHECK_IP;
    if (RX_L4_STATUS(status) == STATUS_OK)
        flags &= ~(NETIF_CHECKSUM_CHECK_TCP | NETIF_CHECKSUM_CHECK_UDP);
    return flags;
}

static void read_nic_counters(uint16_t now[NIC_COUNTERS])
{
    now[RX_EMPTY] = (uint16_t)nic_rx_dropped_empty_read();
    now[RX_ERROR] = (uint16_t)nic_rx_dropped_error_read();
    now[RX_OVERRUN] = (uint16_t)nic_rx_dropped_overrun_read();
    now[TX_ERRORS] = (uint16_t)nic_tx_errors_read();
    now[TSO_ERRORS] = (uint16_t)nic_tso_errors_read();
}

/* Frames the NIC lost go to the status page's rx_dropped / tx_dropped. */
static void count_nic_drops(void)
{
    uint16_t now[NIC_COUNTERS];
    read_nic_counters(now);
    for (unsigned i = 0; i < NIC_COUNTERS; i++) {
        uint16_t delta = (uint16_t)(now[i] - counters_seen[i]);
        if (i <= RX_OVERRUN)
            port_stats.rx_dropped += delta;
        if (i == RX_EMPTY)
            port_stats.rx_dropped_full += delta;
        else if (i == RX_OVERRUN)
            port_stats.rx_dropped_overrun += delta;
        else if (i > RX_OVERRUN)
            port_stats.tx_dropped += delta;
        counters_seen[i] = now[i];
    }
}

static int rx_poll(struct netif *netif)
{
    unsigned head = nic_rx_ring_head_read();
    int handled = 0;

    if (head >= RX_RING_SIZE) /* the NIC never reports this; do not index past the ring */
        return 0;
    if (head != rx_next) {
        unsigned backlog = (head + RX_RING_SIZE - rx_next) % RX_RING_SIZE;
        if (backlog > port_stats.rx_backlog_max)
            port_stats.rx_backlog_max = backlog;
#ifndef RX_INVALIDATE_LINES
        flush_cpu_dcache(); /* drop stale lines of the descriptors and buffers the NIC wrote */
        __asm__ volatile("" ::: "memory"); /* and keep the compiler's loads after it */
#endif
    }

    while (rx_next != head) {
        uint64_t start = port_cycles(), handed;
        uint32_t status = rx_status(rx_next);
        struct pbuf *p = rx_pbuf[rx_next];
        uint32_t len = RX_LENGTH(status);

        if (!(status & RX_DONE))
            break; /* cannot happen if the NIC keeps its order: look again next poll */
        tcp_isn_stir_arrival((uint32_t)start);
        rx_pbuf[rx_next] = NULL;
        rx_next = ring_next(rx_next, RX_RING_SIZE);
        handled++;

        if (!rx_frame_ok(status)) {
            pbuf_free(p);
            port_stats.rx_dropped++;
            port_stats.rx_copy_cycles += port_cycles() - start;
            continue;
        }
        p->len = p->tot_len = (u16_t)len; /* one pbuf (rx_refill), so no pbuf_realloc walk */
        port_stats.frames_in++;
        port_stats.bytes_in += len;
        if (!rx_secure_slot()) {
            p = rx_copy_out(p, len); /* PBUF_POOL is empty: the buffer stays with the ring */
            if (!p) {
                port_stats.rx_copy_cycles += port_cycles() - start;
                rx_refill();
                continue;
            }
        } else if (rx_checksums_good(status)) {
            /* frames of the same flow waiting behind this one join it (rx_merge.c) */
            struct rx_merge merge = {0};
            rx_merge_start(&merge, p);
            while (rx_next != head) {
                uint32_t next_status = rx_status(rx_next);
                struct pbuf *q = rx_pbuf[rx_next];
                if (!(next_status & RX_DONE) || !rx_frame_ok(next_status) || !rx_checksums_good(next_status))
                    break;
                q->len = q->tot_len = (u16_t)RX_LENGTH(next_status);
                if (!rx_secure_slot())
                    break; /* the next turn copies it out of the ring */
                if (!rx_merge_add(&merge, q)) {
                    /* q stays in the ring: the buffer secured for it goes back, or
                     * every refused merge would keep one more pool pbuf in rx_spare
                     * until the pool ran dry */
                    pbuf_free(rx_spare[--rx_spares]);
                    break;
                }
                rx_pbuf[rx_next] = NULL;
                rx_next = ring_next(rx_next, RX_RING_SIZE);
                handled++;
                port_stats.frames_in++;
                port_stats.bytes_in += RX_LENGTH(next_status);
            }
            port_stats.rx_merged += merge.merged;
            p = rx_merge_finish(&merge);
        }
        NETIF_SET_CHECKSUM_CTRL(netif, rx_checksum_flags(status));
        handed = port_cycles();
        /* the descriptor work counts as the driver's RX cost (there is no copy) */
        port_stats.rx_copy_cycles += handed - start;
        if (netif->input(p, netif) != ERR_OK)
            pbuf_free(p);
        start = port_cycles();
        port_stats.rx_handle_cycles += start - handed;
        /* a buffer back for each frame taken, not only after the batch: handling
         * a frame costs thousands of cycles, and the ring would shrink for as
         * long as the batch lasts, dropping frames for want of a descriptor */
        rx_refill();
        port_stats.rx_copy_cycles += port_cycles() - start;
    }
    /* back to the default for whatever else passes the netif */
    NETIF_SET_CHECKSUM_CTRL(netif, CHECKSUM_FLAGS_ALL_CHECKED);

    if (ring_next(rx_tail, RX_RING_SIZE) != rx_next) {
        uint64_t start = port_cycles();
        rx_refill();
        port_stats.rx_copy_cycles += port_cycles() - start;
    }
    return handled;
}

/* --- TX ------------------------------------------------------------------- */

/* Free the chains whose descriptors the NIC has passed. */
static int tx_reclaim(void)
{
    unsigned head = nic_tx_ring_head_read();
    int completed = 0;

    if (head >= TX_RING_SIZE)
        return 0;
    while (tx_clean != head) {
        if (tx_pbuf[tx_clean]) {
            pbuf_free(tx_pbuf[tx_clean]);
            tx_pbuf[tx_clean] = NULL;
            completed++;
        }
        tx_clean = ring_next(tx_clean, TX_RING_SIZE);
    }
    return completed;
}

int offload_netif_tx_holds(const void *start, const void *end)
{
    unsigned i;
    for (i = 0; i < TX_RING_SIZE; i++) {
        const struct pbuf *q;
        for (q = tx_pbuf[i]; q; q = q->next)
            if ((const uint8_t *)q->payload < (const uint8_t *)end &&
                (const uint8_t *)q->payload + q->len > (const uint8_t *)start)
                return 1;
    }
    return 0;
}

static unsigned tx_free_descriptors(void)
{
    unsigned used = (tx_tail + TX_RING_SIZE - tx_clean) % TX_RING_SIZE;
    return TX_RING_SIZE - 1 - used;
}

/* The IPv4 protocol of an Ethernet frame, or -1 if it is not IPv4. */
static int ipv4_protocol(struct pbuf *p)
{
    if (p->tot_len < SIZEOF_ETH_HDR + IP_HLEN ||
        pbuf_get_at(p, 12) != (ETHTYPE_IP >> 8) || pbuf_get_at(p, 13) != (ETHTYPE_IP & 0xff))
        return -1;
    return pbuf_get_at(p, SIZEOF_ETH_HDR + 9);
}

/* Offload flags of the chain's first descriptor: the IPv4 header checksum for
 * every IPv4 frame, the TCP/UDP checksum for unfragmented TCP and UDP (lwIP
 * wrote 0 in the fields it left to the NIC; a UDP datagram that lwIP had to
 * fragment keeps checksum 0, "none", RFC 768). */
static uint32_t tx_offload_flags(struct pbuf *p)
{
    uint32_t flags = TX_IP_CSUM;
    u8_t fragment_high, fragment_low;
    int proto = ipv4_protocol(p);
    if (proto < 0)
        return 0;
    /* flags and fragment offset (RFC 791 section 3.1): MF set or offset != 0 */
    fragment_high = pbuf_get_at(p, SIZEOF_ETH_HDR + 6) & 0x3f;
    fragment_low = pbuf_get_at(p, SIZEOF_ETH_HDR + 7);
    if ((proto == IP_PROTO_TCP || proto == IP_PROTO_UDP) && !fragment_high && !fragment_low)
        flags |= TX_L4_CSUM;
    return flags;
}

/* The NIC drains the ring at wire speed; this bounds the wait for room if it
 * ever stops (the frame is then dropped and counted, never a hang). */
#define TX_WAIT_CYCLES (CONFIG_CLOCK_FREQUENCY / 100)

/* A frame larger than the MTU: an IPv4 TCP segment from offload_tso.c.
 * Returns the TSO flags and sets *header_len and *mss for the descriptors,
 * or 0 if the NIC cannot cut it (then it is dropped: IP_FRAG is off). */
static uint32_t tso_flags(struct netif *netif, struct pbuf *p, unsigned *header_len, unsigned *mss)
{
    unsigned ip_header, tcp_header, link_mss, wire_mss = tso_take_wire_mss();

    if (ipv4_protocol(p) != IP_PROTO_TCP || p->len < SIZEOF_ETH_HDR + IP_HLEN)
        return 0;
    ip_header = (pbuf_get_at(p, SIZEOF_ETH_HDR) & 0x0f) * 4u;
    if (ip_header < IP_HLEN || p->len < SIZEOF_ETH_HDR + ip_header + 20u)
        return 0;
    tcp_header = (pbuf_get_at(p, SIZEOF_ETH_HDR + ip_header + 12) >> 4) * 4u;
    *header_len = SIZEOF_ETH_HDR + ip_header + tcp_header;
    /* lwIP keeps a segment's headers in its first pbuf; the NIC wants them alone */
    if (tcp_header < 20u || p->len < *header_len || p->tot_len <= *header_len)
        return 0;
    /* payload per wire segment: the peer's MSS counts options (RFC 9293
     * section 3.7.1), and no frame may exceed the MTU */
    link_mss = netif->mtu - ip_header - tcp_header;
    *mss = link_mss;
    if (wire_mss && wire_mss > ip_header + tcp_header - 40u &&
        wire_mss - (ip_header + tcp_header - 40u) < link_mss)
        *mss = wire_mss - (ip_header + tcp_header - 40u);
    if (*mss == 0 || *mss > TSO_MSS_MAX)
        return 0;
    return TX_IP_CSUM | TX_L4_CSUM | TX_TSO;
}

static void tx_descriptor(unsigned index, const void *data, unsigned len, uint32_t flags, uint32_t mss)
{
    struct nic_descriptor *d = &tx_ring[index];
    d->word[0] = address_of(data);
    d->word[1] = len | flags;
    d->word[2] = mss;
    d->word[3] = 0;
}

static err_t offload_output(struct netif *netif, struct pbuf *chain)
{
    uint64_t start = port_cycles();
    unsigned needed = 0, index, header_len = 0, mss = 0, first_len;
    uint32_t flags;
    struct pbuf *q;

    if (chain->tot_len > SIZEOF_ETH_HDR + netif->mtu) {
        flags = tso_flags(netif, chain, &header_len, &mss);
        if (!flags) {
            port_stats.tx_dropped++;
            return ERR_IF;
        }
    } else {
        tso_take_wire_mss(); /* belongs to this frame, which needs no cutting */
        flags = tx_offload_flags(chain);
    }
    for (q = chain; q; q = q->next)
        if (q->len)
            needed++;
    if (header_len && chain->len > header_len)
        needed++; /* the headers get a descriptor of their own */
    if (needed == 0 || needed > TX_RING_SIZE - 1) {
        port_stats.tx_dropped++;
        return ERR_IF;
    }
    tx_reclaim();
    while (tx_free_descriptors() < needed) {
        if (port_cycles() - start > TX_WAIT_CYCLES) {
            port_stats.tx_dropped++;
            return ERR_IF;
        }
        tx_reclaim();
    }

    index = tx_tail;
    first_len = header_len ? header_len : chain->len;
    for (q = chain; q; q = q->next) {
        const uint8_t *data = q->payload;
        unsigned len = q == chain ? first_len : q->len;
        while (len) {
            needed--;
            /* offload flags and the MSS are read from the first descriptor only */
            tx_descriptor(index, data, len, flags | (needed == 0 ? TX_EOP : 0), mss);
            flags = 0;
            mss = 0;
            if (needed == 0) {
                pbuf_ref(chain);
                tx_pbuf[index] = chain;
            }
            index = ring_next(index, TX_RING_SIZE);
            data += len;
            len = q == chain && data < (const uint8_t *)q->payload + q->len
                      ? (unsigned)((const uint8_t *)q->payload + q->len - data) : 0;
        }
    }
    /* write-through cache: the descriptors and data are in RAM before this */
    tx_tail = index;
    nic_tx_ring_tail_write(index);

    port_stats.frames_out++;
    port_stats.bytes_out += chain->tot_len;
    port_stats.tx_copy_cycles += port_cycles() - start;
    return ERR_OK;
}

/* --- netif ------------------------------------------------------------------ */

int offload_netif_poll(struct netif *netif)
{
    int work = tx_reclaim();
    count_nic_drops();
    return rx_poll(netif) + work;
}

err_t offload_netif_init(struct netif *netif)
{
    static const uint8_t mac[6] = {0x10, 0xe2, 0xd5, 0x00, 0x00, 0x01};

    netif->name[0] = 'o';
    netif->name[1] = 'n';
    netif->output = etharp_output;
    netif->linkoutput = offload_output;
    netif->mtu = 1500;
    netif->hwaddr_len = 6;
    memcpy(netif->hwaddr, mac, 6);
    netif->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP | NETIF_FLAG_ETHERNET | NETIF_FLAG_LINK_UP;
    NETIF_SET_CHECKSUM_CTRL(netif, CHECKSUM_FLAGS_ALL_CHECKED);
    tso_init();

    /* stop both engines (heads back to 0) before pointing them at the rings */
    nic_ev_enable_write(0);
    nic_rx_control_write(0);
    nic_tx_control_write(0);
    for (uint64_t start = port_cycles(); nic_rx_ring_head_read() != 0 || nic_tx_ring_head_read() != 0;)
        if (port_cycles() - start > TX_WAIT_CYCLES)
            return ERR_IF; /* an engine did not stop */

    memset((void *)rx_ring, 0, sizeof rx_ring);
    memset((void *)tx_ring, 0, sizeof tx_ring);
    rx_next = rx_tail = tx_clean = tx_tail = 0;
    nic_rx_ring_base_write(address_of(rx_ring));
    nic_rx_ring_size_write(RX_RING_SIZE);
    nic_rx_ring_tail_write(0);
    nic_tx_ring_base_write(address_of(tx_ring));
    nic_tx_ring_size_write(TX_RING_SIZE);
    nic_tx_ring_tail_write(0);
    if (!rx_refill())
        return ERR_MEM;

    read_nic_counters(counters_seen);
    nic_tx_control_write(1 << CSR_NIC_TX_CONTROL_ENABLE_OFFSET);
    nic_rx_control_write(1 << CSR_NIC_RX_CONTROL_ENABLE_OFFSET);
    return ERR_OK;
}
