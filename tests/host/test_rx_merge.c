/* Unit tests for the offload driver's receive merging
 * (firmware/ports/litex/rx_merge.c, compiled unchanged) on lwIP's real pbufs,
 * with the host build's lwipopts.h, under ASan/UBSan.
 *
 *   test_rx_merge [seed [sequences]]     (defaults: seed 1, 10000)
 *
 * First table-driven cases built from real Ethernet/IPv4/TCP frames, one
 * pbuf each: what is merged and how the merged segment reads, what is not
 * (the frame then untouched), the limits, Ethernet padding. Then seeded
 * random sequences of frames from 1-3 flows, fed through rx_poll's loop
 * (offload_netif.c) in random batches and checked against the header
 * comment of rx_merge.c: per flow the payload bytes come out as they went
 * in, duplicate ACKs come out one segment each, acknowledgment numbers do
 * not go back, merging happens whenever the rules allow it, and every pbuf
 * is accounted for (lwIP's pool statistics). The last line printed is
 * "N passed, M failed". */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lwip/inet_chksum.h"
#include "lwip/init.h"
#include "lwip/memp.h"
#include "lwip/pbuf.h"
#include "lwip/prot/ethernet.h"
#include "lwip/prot/ip.h"
#include "lwip/prot/tcp.h"
#include "lwip/stats.h"

#include "check.h"
#include "rx_merge.h"
#include "test_rng.h"

/* what the host port's arch/cc.h and NO_SYS lwIP expect from the program */
u32_t sys_now(void) { return 0; }
unsigned int litedav_rand(void) { return (unsigned int)rng_next(); }
void litedav_halt(void) { abort(); }

#define FRAME_MAX PBUF_POOL_BUFSIZE        /* one pool pbuf, as the driver's RX buffers */
#define PLAIN_HDRS 54                      /* Ethernet + IPv4 + TCP without options */
#define PAYLOAD_MAX (FRAME_MAX - PLAIN_HDRS)
#define PAD 0xEE                           /* Ethernet padding, recognisable in a payload */
#define NFRAMES 64                         /* frames alive at once (pool: PBUF_POOL_SIZE) */

/* ---- frames ------------------------------------------------------------- */

struct flow {
    u8_t src[4], dst[4];
    u16_t sport, dport;
};

/* 0 and 1 are flows of their own; 2..5 differ from flow 0 in one field each,
 * so a comparison that skipped a field would merge them */
static const struct flow flows[] = {
    {{192, 168, 1, 100}, {192, 168, 1, 50}, 40000, 80},
    {{192, 168, 1, 101}, {192, 168, 1, 50}, 51000, 80},
    {{192, 168, 1, 100}, {192, 168, 1, 50}, 40001, 80}, /* source port */
    {{192, 168, 1, 100}, {192, 168, 1, 50}, 40000, 81}, /* destination port */
    {{192, 168, 1, 102}, {192, 168, 1, 50}, 40000, 80}, /* source address */
    {{192, 168, 1, 100}, {192, 168, 1, 51}, 40000, 80}, /* destination address */
};
#define NFLOWS ((int)(sizeof(flows) / sizeof(flows[0])))

struct fspec {
    int flow;
    u32_t seq, ack;
    u16_t win;
    u8_t flags;       /* TCP flags byte */
    u16_t plen;       /* TCP payload */
    u8_t tcp_opt;     /* 32-bit words of TCP options */
    u8_t ip_opt;      /* 32-bit words of IPv4 options */
    u16_t frag;       /* IPv4 flags and fragment offset */
    u16_t ethertype;
    u8_t proto;
    u8_t ram;         /* PBUF_RAM instead of PBUF_POOL */
};

struct frame {
    struct fspec s;
    struct pbuf *p;   /* NULL once handed on (to rx_merge or freed) */
    u16_t len;        /* the frame as built, padding included */
    u8_t bytes[FRAME_MAX];
    u8_t nic_bad;     /* random test: the NIC flagged its checksums */
};

static struct frame fr[NFRAMES];
static u16_t ip_id;

static struct fspec data_spec(int flow, u32_t seq, u32_t ack, u16_t plen)
{
    struct fspec s = {flow, seq, ack, 29200, TCP_ACK, plen, 0, 0, 0x4000 /* DF */, ETHTYPE_IP,
                      IP_PROTO_TCP, 0};
    return s;
}

static struct fspec ack_spec(int flow, u32_t seq, u32_t ack, u16_t win)
{
    struct fspec s = data_spec(flow, seq, ack, 0);
    s.win = win;
    return s;
}

/* what rx_merge.c's header calls a plain segment, from the spec alone */
static int plain(const struct fspec *s)
{
    return s->ethertype == ETHTYPE_IP && s->proto == IP_PROTO_TCP && !s->ip_opt && !s->tcp_opt &&
           !(s->frag & 0x3fff) && (s->flags & TCP_ACK) && !(s->flags & ~(TCP_ACK | TCP_PSH));
}

static void put16(u8_t *b, u16_t v) { b[0] = (u8_t)(v >> 8); b[1] = (u8_t)v; }
static void put32(u8_t *b, u32_t v) { put16(b, (u16_t)(v >> 16)); put16(b + 2, (u16_t)v); }
static u16_t get16(const u8_t *b) { return (u16_t)(b[0] << 8 | b[1]); }
static u32_t get32(const u8_t *b) { return (u32_t)get16(b) << 16 | get16(b + 2); }

/* Build frame k from spec s (random payload) into a fresh one-pbuf frame. */
static struct pbuf *build(int k, struct fspec s)
{
    struct frame *f = &fr[k];
    const struct flow *fl = &flows[s.flow];
    u16_t ihl = (u16_t)(20 + 4 * s.ip_opt), thl = (u16_t)(20 + 4 * s.tcp_opt);
    u16_t total = (u16_t)(ihl + thl + s.plen), len = (u16_t)(SIZEOF_ETH_HDR + total), i;
    u8_t *b = f->bytes, *ip = b + SIZEOF_ETH_HDR, *tcp = ip + ihl;
    u16_t ck;

    if (len > FRAME_MAX) {
        fprintf(stderr, "frame %d too large (%u)\n", k, len);
        exit(2);
    }
    if (len < 60)
        len = 60; /* the minimum Ethernet frame: padded */
    memset(b, PAD, len);
    memcpy(b, "\x02\x00\x00\x00\x00\x01\x02\x00\x00\x00\x00\x02", 12);
    put16(b + 12, s.ethertype);
    ip[0] = (u8_t)(0x40 | ihl / 4);
    ip[1] = 0;
    put16(ip + 2, total);
    put16(ip + 4, ip_id++);
    put16(ip + 6, s.frag);
    ip[8] = 64;
    ip[9] = s.proto;
    put16(ip + 10, 0);
    memcpy(ip + 12, fl->src, 4);
    memcpy(ip + 16, fl->dst, 4);
    for (i = 20; i < ihl; i++)
        ip[i] = 1; /* NOP options */
    ck = inet_chksum(ip, ihl);
    memcpy(ip + 10, &ck, 2);
    put16(tcp, fl->sport);
    put16(tcp + 2, fl->dport);
    put32(tcp + 4, s.seq);
    put32(tcp + 8, s.ack);
    tcp[12] = (u8_t)(thl / 4 << 4);
    tcp[13] = s.flags;
    put16(tcp + 14, s.win);
    put16(tcp + 16, (u16_t)rng_next()); /* the checksum: the NIC verified it, merging keeps the head's */
    put16(tcp + 18, (s.flags & TCP_URG) ? 1 : 0);
    for (i = 20; i < thl; i++)
        tcp[i] = 1; /* NOP options */
    if (s.tcp_opt >= 3) {
        tcp[22] = 8; /* timestamps, as Linux sends them */
        tcp[23] = 10;
    }
    for (i = 0; i < s.plen; i++)
        tcp[thl + i] = (u8_t)rng_next();

    f->s = s;
    f->len = len;
    f->nic_bad = 0;
    f->p = pbuf_alloc(PBUF_RAW, len, s.ram ? PBUF_RAM : PBUF_POOL);
    if (!f->p || f->p->next) {
        fprintf(stderr, "pbuf_alloc failed or chained for frame %d\n", k);
        exit(2);
    }
    pbuf_take(f->p, b, len);
    return f->p;
}

/* the IP datagram's end: where rx_merge trims a plain frame's padding */
static u16_t datagram_len(int k) { return (u16_t)(SIZEOF_ETH_HDR + get16(fr[k].bytes + 16)); }

static const u8_t *payload_of(int k)
{
    return fr[k].bytes + SIZEOF_ETH_HDR + 20 + 4 * fr[k].s.ip_opt + 20 + 4 * fr[k].s.tcp_opt;
}

/* pbufs in use: pool, ROM/REF descriptors and the heap (PBUF_RAM) */
static long pool_used(void) { return (long)lwip_stats.memp[MEMP_PBUF_POOL]->used; }
static long in_use(void)
{
    return pool_used() + (long)lwip_stats.memp[MEMP_PBUF]->used + (long)lwip_stats.mem.used;
}

static u8_t seg[65536]; /* tot_len is a u16_t, whatever rx_merge chains */

/* a segment's bytes, flattened */
static u16_t flatten(struct pbuf *p)
{
    return pbuf_copy_partial(p, seg, p->tot_len, 0);
}

/* Frame q after rx_merge_add returned 0: same pbuf, same bytes; only the
 * Ethernet padding of a plain frame may have been trimmed off. */
static int untouched(int k)
{
    struct pbuf *q = fr[k].p;
    u16_t len = q->len;
    return !q->next && q->ref == 1 && q->tot_len == len &&
           (len == fr[k].len || (plain(&fr[k].s) && len == datagram_len(k))) &&
           !memcmp(q->payload, fr[k].bytes, len);
}

static void free_frame(int k)
{
    if (fr[k].p)
        pbuf_free(fr[k].p);
    fr[k].p = NULL;
}

/* ---- the merged segment ------------------------------------------------- */

static int older(u32_t a, u32_t b) { return (s32_t)(a - b) < 0; }

/* Segment out, made of frames first..last (rx_poll took them in that order),
 * against the rules. Those frames are no longer the caller's afterwards: they
 * are in out, or rx_merge freed them. */
static void check_run(struct pbuf *out, int first, int last)
{
    int n = last - first + 1, k;
    const struct fspec *h = &fr[first].s, *t = &fr[last].s;
    const u8_t *hb = fr[first].bytes, *tb = fr[last].bytes;
    u16_t len = flatten(out);

    CHECKF(out->ref == 1, "segment of frames %d..%d: ref %u", first, last, out->ref);
    if (n == 1) {
        /* passed on as it came (a plain frame without its padding) */
        u16_t want = plain(h) && !fr[first].nic_bad ? datagram_len(first) : fr[first].len;
        CHECKF(out == fr[first].p && out->next == NULL, "frame %d: not the same pbuf", first);
        CHECKF(len == want && !memcmp(seg, hb, want), "frame %d changed (len %u, want %u)", first,
               len, want);
        fr[first].p = NULL;
        return;
    }
    for (k = first; k <= last; k++) {
        CHECKF(plain(&fr[k].s) && !fr[k].nic_bad, "frame %d (flags %02x) merged (%d..%d)", k,
               fr[k].s.flags, first, last);
        CHECKF(fr[k].s.flow == h->flow, "frame %d of flow %d merged into flow %d", k, fr[k].s.flow,
               h->flow);
        /* nothing absorbed acknowledged more than what goes on */
        CHECKF(!older(t->ack, fr[k].s.ack), "frame %d's ack %08x newer than the segment's %08x", k,
               fr[k].s.ack, t->ack);
    }
    if (h->plen == 0) {
        /* cumulative pure ACKs: only the last one is left */
        for (k = first + 1; k <= last; k++) {
            CHECKF(fr[k].s.plen == 0 && fr[k].s.seq == h->seq, "frame %d joined pure ACKs", k);
            CHECKF(older(fr[k - 1].s.ack, fr[k].s.ack), "ack %08x replaced by %08x (frame %d)",
                   fr[k - 1].s.ack, fr[k].s.ack, k);
        }
        CHECKF(out == fr[last].p && !out->next, "pure ACKs %d..%d: not the last frame's pbuf", first,
               last);
        CHECKF(len == PLAIN_HDRS && !memcmp(seg, tb, PLAIN_HDRS), "pure ACK %d changed", last);
    } else {
        u32_t sum = 0, off = PLAIN_HDRS;
        struct pbuf *q = out;
        u8_t psh = 0;
        for (k = first; k <= last; k++, q = q ? q->next : NULL) {
            const struct fspec *s = &fr[k].s;
            CHECKF(q == fr[k].p && q->ref == 1, "segment %d..%d: pbuf %d is not frame %d's", first,
                   last, k - first, k);
            CHECKF(s->plen > 0 && s->seq == h->seq + sum, "frame %d (seq %08x, %u bytes) not contiguous",
                   k, s->seq, s->plen);
            CHECKF(k == first || !older(s->ack, fr[k - 1].s.ack), "frame %d: ack went back", k);
            CHECKF(off + s->plen <= len && !memcmp(seg + off, payload_of(k), s->plen),
                   "frame %d's payload not where it belongs", k);
            off += s->plen;
            sum += s->plen;
            psh |= s->flags & TCP_PSH;
        }
        CHECKF(q == NULL, "segment %d..%d: more pbufs than frames", first, last);
        CHECKF(n <= RX_MERGE_MAX_FRAMES && sum <= RX_MERGE_MAX_PAYLOAD, "%d frames, %u bytes", n, sum);
        CHECKF(len == PLAIN_HDRS + sum, "segment %d..%d: %u bytes, want %u", first, last, len,
               PLAIN_HDRS + sum);
        /* headers: the head's, but the IPv4 length, and ACK, window and PSH of the last */
        CHECKF(!memcmp(seg, hb, 16) && get16(seg + 16) == 40 + sum && !memcmp(seg + 18, hb + 18, 24),
               "segment %d..%d: Ethernet/IPv4 header or TCP ports/seq wrong (length %u)", first, last,
               get16(seg + 16));
        CHECKF(get32(seg + 42) == t->ack && get16(seg + 48) == t->win,
               "segment %d..%d: ack %08x win %u, want %08x %u", first, last, get32(seg + 42),
               get16(seg + 48), t->ack, t->win);
        CHECKF(seg[46] == hb[46] && seg[47] == (hb[47] | psh) && !memcmp(seg + 50, hb + 50, 4),
               "segment %d..%d: flags %02x", first, last, seg[47]);
    }
    for (k = first; k <= last; k++)
        fr[k].p = NULL;
}

/* rx_poll's loop over frames first..end-1 for one segment: returns it, and
 * in *next the first frame not taken. */
static struct pbuf *merge_from(int first, int end, int *next, u32_t *merged)
{
    struct rx_merge m = {0};
    int k = first + 1;
    rx_merge_start(&m, fr[first].p);
    while (k < end && !fr[k].nic_bad && rx_merge_add(&m, fr[k].p))
        k++;
    *next = k;
    if (merged)
        *merged = m.merged;
    return rx_merge_finish(&m);
}

/* the whole loop over frames 0..n-1, each segment checked and freed;
 * returns the number of segments */
static int merge_all(int n)
{
    int i = 0, segments = 0;
    while (i < n) {
        int next;
        u32_t merged;
        struct pbuf *out = merge_from(i, n, &next, &merged);
        CHECKF(merged == (u32_t)(next - i - 1), "frames %d..%d: merged %u", i, next - 1, merged);
        check_run(out, i, next - 1);
        pbuf_free(out);
        segments++;
        i = next;
    }
    return segments;
}

/* ---- deterministic cases ------------------------------------------------- */

static long baseline;

static void expect_clean(const char *what)
{
    int k;
    for (k = 0; k < NFRAMES; k++)
        free_frame(k);
    CHECKF(in_use() == baseline, "%s: %ld pbuf units still in use", what, in_use() - baseline);
}

static void test_data_chain(void)
{
    static const u16_t sizes[] = {1460, 1000, 7, 300};
    static const u16_t wins[] = {100, 200, 300, 400};
    static const u32_t acks[] = {5000, 5000, 5010, 5020};
    struct rx_merge m = {0};
    struct pbuf *out;
    u32_t seq = 1000;
    int k, next;

    for (k = 0; k < 4; k++) {
        struct fspec s = data_spec(0, seq, acks[k], sizes[k]);
        s.win = wins[k];
        s.flags = k == 1 ? TCP_ACK | TCP_PSH : TCP_ACK;
        s.ram = k == 2; /* a heap pbuf among pool ones */
        build(k, s);
        seq += sizes[k];
    }
    build(4, data_spec(0, seq + 1, 5020, 100)); /* a gap: ends the segment */
    rx_merge_start(&m, fr[0].p);
    for (k = 1; k < 4; k++)
        CHECK(rx_merge_add(&m, fr[k].p) == 1);
    if (CHECK(rx_merge_add(&m, fr[4].p) == 0))
        CHECK(untouched(4));
    else
        fr[4].p = NULL; /* taken: not ours to free any more */
    CHECK(m.merged == 3 && m.frames == 4 && m.payload_len == 2767);
    out = rx_merge_finish(&m);
    CHECK(out == fr[0].p);
    CHECK(out->tot_len == PLAIN_HDRS + 2767 && pbuf_clen(out) == 4);
    flatten(out);
    CHECK(get16(seg + 16) == 40 + 2767);               /* IPv4 total length */
    CHECK(get32(seg + 38) == 1000);                    /* the first frame's seq */
    CHECK(get32(seg + 42) == 5020 && get16(seg + 48) == 400); /* the last's ACK and window */
    CHECK(seg[47] == (TCP_ACK | TCP_PSH));             /* PSH from frame 1 */
    CHECK(!memcmp(seg + 54, payload_of(0), 1460) && !memcmp(seg + 54 + 1460, payload_of(1), 1000) &&
          !memcmp(seg + 54 + 2460, payload_of(2), 7) && !memcmp(seg + 54 + 2467, payload_of(3), 300));
    check_run(out, 0, 3);
    pbuf_free(out);
    expect_clean("data chain");

    /* no PSH anywhere: none in the segment; PSH on the head alone: kept */
    for (k = 0; k < 3; k++)
        build(k, data_spec(0, 77 + 100u * k, 9, 100));
    CHECK(merge_all(3) == 1);
    expect_clean("no PSH");
    for (k = 0; k < 3; k++) {
        struct fspec s = data_spec(0, 77 + 100u * k, 9, 100);
        s.flags = k == 0 ? TCP_ACK | TCP_PSH : TCP_ACK;
        build(k, s);
    }
    out = merge_from(0, 3, &next, NULL);
    CHECK(next == 3 && ((u8_t *)out->payload)[47] == (TCP_ACK | TCP_PSH));
    check_run(out, 0, 2);
    pbuf_free(out);
    expect_clean("PSH on head");

    /* sequence numbers and acknowledgments wrapping around 2^32 */
    build(0, data_spec(0, 0xffffff00u, 0xfffffff0u, 256));
    build(1, data_spec(0, 0x00000000u, 0x00000010u, 200));
    build(2, data_spec(0, 0x000000c8u, 0x00000010u, 1));
    CHECK(merge_all(3) == 1);
    expect_clean("wrap");

    /* an ACK that went back ends the segment; an equal one does not */
    build(0, data_spec(0, 500, 9000, 100));
    build(1, data_spec(0, 600, 9000, 100));
    build(2, data_spec(0, 700, 8999, 100));
    out = merge_from(0, 3, &next, NULL);
    CHECK(next == 2 && untouched(2));
    check_run(out, 0, next - 1);
    pbuf_free(out);
    expect_clean("older ACK");
}

static void test_pure_acks(void)
{
    struct rx_merge m = {0};
    struct pbuf *out;
    int k, next;
    long before;

    /* a later cumulative ACK replaces the earlier one, whose pbuf is freed */
    build(0, ack_spec(0, 7000, 100000, 1000));
    build(1, ack_spec(0, 7000, 101460, 2000));
    before = pool_used();
    rx_merge_start(&m, fr[0].p);
    CHECK(rx_merge_add(&m, fr[1].p) == 1);
    CHECK(pool_used() == before - 1);
    fr[0].p = NULL;
    out = rx_merge_finish(&m);
    CHECK(out == fr[1].p && out->ref == 1 && m.merged == 1);
    CHECK(out->tot_len == PLAIN_HDRS && !memcmp(out->payload, fr[1].bytes, PLAIN_HDRS));
    check_run(out, 0, 1);
    pbuf_free(out);
    expect_clean("ACK replaced");

    /* a run of them longer than RX_MERGE_MAX_FRAMES: all but the last freed (the
     * segment stays one frame, so the frame limit does not stop it) */
    for (k = 0; k < RX_MERGE_MAX_FRAMES + 4; k++)
        build(k, ack_spec(0, 7000, 0xfffff000u + 512u * (u32_t)k, (u16_t)(1000 + k)));
    before = pool_used();
    out = merge_from(0, RX_MERGE_MAX_FRAMES + 4, &next, NULL);
    CHECK(next == RX_MERGE_MAX_FRAMES + 4 && out == fr[next - 1].p);
    CHECK(pool_used() == before - (next - 1) && pbuf_clen(out) == 1);
    check_run(out, 0, next - 1);
    pbuf_free(out);
    expect_clean("ACK run");

    /* duplicate ACKs: never merged, each one reaches lwIP */
    for (k = 0; k < 4; k++)
        build(k, ack_spec(0, 7000, 100000, 1000));
    memset(&m, 0, sizeof(m));
    rx_merge_start(&m, fr[0].p);
    next = rx_merge_add(&m, fr[1].p);
    CHECK(next == 0 && untouched(1));
    out = rx_merge_finish(&m);
    CHECK(out == fr[0].p);
    check_run(out, 0, next);
    pbuf_free(out);
    expect_clean("duplicate ACK");
    for (k = 0; k < 4; k++) /* through the loop: one segment each */
        build(k, ack_spec(0, 7000, 100000, 1000));
    CHECK(merge_all(4) == 4);
    expect_clean("duplicate ACKs");

    /* a window update (same ACK, other window) is not merged either */
    build(0, ack_spec(0, 7000, 100000, 1000));
    build(1, ack_spec(0, 7000, 100000, 3000));
    CHECK(merge_all(2) == 2);
    expect_clean("window update");

    /* nor an older ACK (reordered) */
    build(0, ack_spec(0, 7000, 100000, 1000));
    build(1, ack_spec(0, 7000, 99999, 1000));
    CHECK(merge_all(2) == 2);
    expect_clean("older pure ACK");

    /* nor an ACK of the same flow at another sequence number (a keepalive) */
    build(0, ack_spec(0, 6999, 100000, 1000));
    build(1, ack_spec(0, 7000, 100100, 1000));
    CHECK(merge_all(2) == 2);
    expect_clean("keepalive");

    /* duplicates, then a cumulative ACK: the duplicates before the last one
     * still come out; the last is the one the new ACK supersedes (the header
     * comment: an ACK is dropped when the next one acknowledges more) */
    for (k = 0; k < 4; k++)
        build(k, ack_spec(0, 7000, 100000, 1000));
    build(4, ack_spec(0, 7000, 102920, 1000));
    CHECK(merge_all(5) == 4);
    expect_clean("duplicates then new ACK");
}

/* a variant of a contiguous frame that must not be merged */
struct variant {
    const char *name;
    void (*apply)(struct fspec *s);
};

static void v_sport(struct fspec *s) { s->flow = 2; }
static void v_dport(struct fspec *s) { s->flow = 3; }
static void v_saddr(struct fspec *s) { s->flow = 4; }
static void v_daddr(struct fspec *s) { s->flow = 5; }
static void v_syn(struct fspec *s) { s->flags |= TCP_SYN; }
static void v_fin(struct fspec *s) { s->flags |= TCP_FIN; }
static void v_rst(struct fspec *s) { s->flags |= TCP_RST; }
static void v_urg(struct fspec *s) { s->flags |= TCP_URG; }
static void v_ece(struct fspec *s) { s->flags |= TCP_ECE; }
static void v_cwr(struct fspec *s) { s->flags |= TCP_CWR; }
static void v_no_ack(struct fspec *s) { s->flags = TCP_PSH; }
static void v_tcp_opt(struct fspec *s) { s->tcp_opt = 3; }
static void v_tcp_opt1(struct fspec *s) { s->tcp_opt = 1; }
static void v_ip_opt(struct fspec *s) { s->ip_opt = 1; }
static void v_more_frags(struct fspec *s) { s->frag = 0x2000; }
static void v_frag_offset(struct fspec *s) { s->frag = 0x0001; }
static void v_frag_offset_hi(struct fspec *s) { s->frag = 0x1000; }
static void v_ipv6(struct fspec *s) { s->ethertype = ETHTYPE_IPV6; }
static void v_arp(struct fspec *s) { s->ethertype = ETHTYPE_ARP; }
static void v_vlan(struct fspec *s) { s->ethertype = ETHTYPE_VLAN; }
static void v_udp(struct fspec *s) { s->proto = IP_PROTO_UDP; }
static void v_seq_gap(struct fspec *s) { s->seq += 1; }
static void v_seq_back(struct fspec *s) { s->seq -= 1; }
static void v_retransmit(struct fspec *s) { s->seq -= 1460; }

static const struct variant variants[] = {
    {"other source port", v_sport}, {"other destination port", v_dport},
    {"other source address", v_saddr}, {"other destination address", v_daddr},
    {"SYN", v_syn}, {"FIN", v_fin}, {"RST", v_rst}, {"URG", v_urg}, {"ECE", v_ece}, {"CWR", v_cwr},
    {"no ACK", v_no_ack}, {"TCP timestamps", v_tcp_opt}, {"TCP option word", v_tcp_opt1},
    {"IPv4 options", v_ip_opt}, {"more fragments", v_more_frags}, {"fragment offset", v_frag_offset},
    {"fragment offset high bits", v_frag_offset_hi}, {"IPv6 ethertype", v_ipv6},
    {"ARP ethertype", v_arp}, {"802.1Q ethertype", v_vlan}, {"UDP", v_udp},
    {"sequence gap", v_seq_gap}, {"sequence overlap", v_seq_back}, {"retransmission", v_retransmit},
};
#define NVARIANTS (sizeof(variants) / sizeof(variants[0]))

/* head k=0, candidate k=1: not merged, candidate untouched, head as it came */
static void expect_not_merged(const char *what, const char *variant)
{
    struct rx_merge m = {0};
    struct pbuf *out;
    int taken;
    rx_merge_start(&m, fr[0].p);
    taken = rx_merge_add(&m, fr[1].p);
    CHECKF(taken == 0, "%s: %s merged", what, variant);
    CHECKF(taken || untouched(1), "%s: %s changed", what, variant);
    out = rx_merge_finish(&m);
    CHECKF(m.merged == 0 && out == fr[0].p, "%s: %s", what, variant);
    check_run(out, 0, taken); /* what was taken is the segment's now */
    pbuf_free(out);
    expect_clean(variant);
}

static void test_not_merged(void)
{
    size_t v;
    for (v = 0; v < NVARIANTS; v++) {
        struct fspec s;
        /* after data: would continue it */
        build(0, data_spec(0, 3000, 40000, 500));
        s = data_spec(0, 3500, 40000, 700);
        variants[v].apply(&s);
        build(1, s);
        expect_not_merged("after data", variants[v].name);

        /* after a pure ACK: would acknowledge more */
        build(0, ack_spec(0, 3000, 40000, 1000));
        s = ack_spec(0, 3000, 41460, 1000);
        variants[v].apply(&s);
        if (v_retransmit == variants[v].apply)
            s.plen = 1460; /* a retransmission carries data */
        build(1, s);
        expect_not_merged("after a pure ACK", variants[v].name);

        /* the variant first: nothing joins it, even what would continue it */
        s = data_spec(0, 3000, 40000, 3);
        variants[v].apply(&s);
        if (plain(&s))
            continue; /* another flow or sequence number: still a plain segment */
        build(0, s);
        build(1, data_spec(s.flow, s.seq + 3, 40000, 700));
        expect_not_merged("as the head", variants[v].name);
    }

    /* data after a pure ACK, and a pure ACK after data (same sequence space) */
    build(0, ack_spec(0, 3000, 40000, 1000));
    build(1, data_spec(0, 3000, 41460, 500));
    expect_not_merged("pure ACK", "then data");
    build(0, data_spec(0, 3000, 40000, 500));
    build(1, ack_spec(0, 3500, 41460, 1000));
    expect_not_merged("data", "then a pure ACK");

    /* a truncated frame (the IPv4 length says more than arrived) */
    build(0, data_spec(0, 3000, 40000, 500));
    build(1, data_spec(0, 3500, 40000, 500));
    fr[1].p->len = fr[1].p->tot_len = fr[1].len = 300;
    expect_not_merged("data", "truncated frame");
    /* a runt shorter than the headers */
    build(0, data_spec(0, 3000, 40000, 500));
    build(1, ack_spec(0, 3500, 40000, 1000));
    fr[1].p->len = fr[1].p->tot_len = fr[1].len = 50;
    expect_not_merged("data", "runt");
}

static void test_limits(void)
{
    struct pbuf *out;
    int k, next;

    /* RX_MERGE_MAX_FRAMES: 20 small frames make two segments, 16 and 4 */
    for (k = 0; k < 20; k++)
        build(k, data_spec(0, 100u * (u32_t)k, 1, 100));
    out = merge_from(0, 20, &next, NULL);
    CHECK(next == RX_MERGE_MAX_FRAMES && out->tot_len == PLAIN_HDRS + 100 * RX_MERGE_MAX_FRAMES);
    CHECK(untouched(RX_MERGE_MAX_FRAMES));
    check_run(out, 0, next - 1);
    pbuf_free(out);
    if (next < 20) {
        out = merge_from(next, 20, &k, NULL);
        CHECK(k == 20);
        check_run(out, next, 19);
        pbuf_free(out);
    }
    expect_clean("frame limit");

    /* RX_MERGE_MAX_PAYLOAD: reached exactly, then exceeded by one byte (with
     * fewer frames than RX_MERGE_MAX_FRAMES, so it is the byte limit that acts) */
    for (k = 0; k < 2; k++) {
        u16_t full = PAYLOAD_MAX, big = 15 * PAYLOAD_MAX;
        u16_t rest = (u16_t)(RX_MERGE_MAX_PAYLOAD - big + (u32_t)k);
        int i;
        if (big >= RX_MERGE_MAX_PAYLOAD || rest > PAYLOAD_MAX) {
            CHECKF(0, "limits changed: adapt the payload-limit case");
            return;
        }
        for (i = 0; i < 15; i++)
            build(i, data_spec(1, (u32_t)i * full, 7, full));
        build(15, data_spec(1, big, 7, rest));
        out = merge_from(0, 16, &next, NULL);
        CHECKF(next == (k ? 15 : 16), "payload limit%s: %d frames taken", k ? " + 1" : "", next);
        CHECK(out->tot_len == PLAIN_HDRS + (k ? big : RX_MERGE_MAX_PAYLOAD));
        check_run(out, 0, next - 1);
        pbuf_free(out);
        expect_clean("payload limit");
    }
}

static void test_padding(void)
{
    static const u16_t sizes[] = {1, 5, 2, 100, 3};
    struct pbuf *out;
    int k, next;
    u32_t seq = 0x10000;

    for (k = 0; k < 5; k++) {
        build(k, data_spec(0, seq, 1, sizes[k]));
        seq += sizes[k];
    }
    CHECK(fr[0].len == 60 && fr[1].len == 60 && fr[4].len == 60); /* padded */
    out = merge_from(0, 5, &next, NULL);
    CHECK(next == 5 && out->tot_len == PLAIN_HDRS + 111);
    flatten(out);
    CHECK(get16(seg + 16) == 40 + 111);
    check_run(out, 0, 4); /* the payload is exactly the frames' payloads */
    pbuf_free(out);
    expect_clean("padded data");

    /* one padded frame alone: trimmed to its datagram, otherwise as it came */
    build(0, data_spec(0, 5, 1, 3));
    out = merge_from(0, 1, &next, NULL);
    CHECK(out->tot_len == PLAIN_HDRS + 3 && get16((u8_t *)out->payload + 16) == 43);
    check_run(out, 0, 0);
    pbuf_free(out);
    expect_clean("padded frame");

    /* padded pure ACKs replacing each other */
    build(0, ack_spec(0, 5, 100, 10));
    build(1, ack_spec(0, 5, 200, 10));
    out = merge_from(0, 2, &next, NULL);
    CHECK(next == 2 && out == fr[1].p && out->tot_len == PLAIN_HDRS);
    check_run(out, 0, 1);
    pbuf_free(out);
    expect_clean("padded ACKs");

    /* a non-TCP frame: start/finish hand it back untouched, nothing joins it */
    {
        struct fspec s = data_spec(0, 5, 1, 0);
        s.ethertype = ETHTYPE_ARP;
        build(0, s);
        build(1, data_spec(0, 5, 1, 100));
        expect_not_merged("ARP", "then data");
    }
}

/* ---- randomized sequences ------------------------------------------------ */

struct flow_state {
    int id;            /* index into flows[] */
    u32_t snd_nxt;     /* the sender's next sequence number */
    u32_t ack;         /* the newest acknowledgment it sent */
    u16_t win;
    int last;          /* its last frame in this sequence, or -1 */
};

#define STREAM_MAX (NFRAMES * PAYLOAD_MAX)
static u8_t stream_in[NFLOWS][STREAM_MAX], stream_out[NFLOWS][STREAM_MAX];
static u32_t stream_in_len[NFLOWS], stream_out_len[NFLOWS];
static u32_t last_ack_in[NFLOWS], last_ack_out[NFLOWS], backs_in[NFLOWS], backs_out[NFLOWS];
static u8_t seen_in[NFLOWS], seen_out[NFLOWS];

static struct {
    unsigned long frames, segments, merged_data, merged_acks, dup_acks, dup_acks_out, superseded_dups,
        not_plain, nic_bad, frame_limit, payload_limit;
} stats;

/* A frame's flow and TCP payload by its own headers (IPv4, TCP, not a
 * fragment), for the per-flow byte streams; -1 if it has none. */
static int flow_payload(const u8_t *b, u32_t len, u32_t *off, u32_t *plen)
{
    u32_t ihl, thl, total;
    int f;
    if (len < 54 || get16(b + 12) != ETHTYPE_IP || (b[14] >> 4) != 4 || b[23] != IP_PROTO_TCP ||
        (get16(b + 20) & 0x3fff))
        return -1;
    ihl = 4u * (b[14] & 15);
    total = get16(b + 16);
    if (SIZEOF_ETH_HDR + total > len || total < ihl + 20)
        return -1;
    thl = 4u * (b[SIZEOF_ETH_HDR + ihl + 12] >> 4);
    for (f = 0; f < NFLOWS; f++) {
        const struct flow *fl = &flows[f];
        const u8_t *t = b + SIZEOF_ETH_HDR + ihl;
        if (!memcmp(b + 26, fl->src, 4) && !memcmp(b + 30, fl->dst, 4) && get16(t) == fl->sport &&
            get16(t + 2) == fl->dport)
            break;
    }
    if (f == NFLOWS || total < ihl + thl)
        return -1;
    *off = SIZEOF_ETH_HDR + ihl + thl;
    *plen = total - ihl - thl;
    return f;
}

/* per flow: payload bytes, and how often the acknowledgment number went back */
static void account(const u8_t *b, u32_t len, int out)
{
    u32_t off, plen, ack;
    int f = flow_payload(b, len, &off, &plen);
    if (f < 0)
        return;
    if (out) {
        if (stream_out_len[f] + plen <= STREAM_MAX) /* more than went in: counted, not kept */
            memcpy(stream_out[f] + stream_out_len[f], b + off, plen);
        stream_out_len[f] += plen;
    } else {
        memcpy(stream_in[f] + stream_in_len[f], b + off, plen);
        stream_in_len[f] += plen;
    }
    if (!(b[SIZEOF_ETH_HDR + 4 * (b[14] & 15) + 13] & TCP_ACK))
        return;
    ack = get32(b + SIZEOF_ETH_HDR + 4 * (b[14] & 15) + 8);
    if (out) {
        backs_out[f] += seen_out[f] && older(ack, last_ack_out[f]);
        last_ack_out[f] = ack;
        seen_out[f] = 1;
    } else {
        backs_in[f] += seen_in[f] && older(ack, last_ack_in[f]);
        last_ack_in[f] = ack;
        seen_in[f] = 1;
    }
}

static u16_t random_plen(void)
{
    switch (rnd(6)) {
    case 0: return 1460;
    case 1: return PAYLOAD_MAX;
    case 2: return (u16_t)(1 + rnd(5)); /* padded */
    default: return (u16_t)(1 + rnd(PAYLOAD_MAX));
    }
}

/* the next frame of flow st (frame k); bulk: mostly a sender's full-size
 * or small segments back to back, which reach the merge limits */
static void random_frame(int k, struct flow_state *st, int bulk)
{
    struct fspec s;
    unsigned r = (unsigned)rnd(100);

    if (bulk && r < 85)
        r = 0;
    if (r < 38) {                                    /* new data */
        if (chance(30))
            st->ack += (u32_t)rnd(3000);
        if (chance(10))
            st->win = (u16_t)(1000 + rnd(60000));
        s = data_spec(st->id, st->snd_nxt, st->ack,
                      bulk == 1 ? 1460 : bulk == 2 ? PAYLOAD_MAX : bulk == 3 ? (u16_t)(1 + rnd(200))
                                                                     : random_plen());
        s.win = st->win;
        if (chance(5))
            s.ack -= (u32_t)(1 + rnd(2000));         /* an ACK from before (reordered) */
        if (chance(30))
            s.flags |= TCP_PSH;
        st->snd_nxt += s.plen;
    } else if (r < 56) {                             /* a cumulative ACK */
        st->ack += chance(10) ? 1 : (u32_t)(1 + rnd(3 * 1460));
        if (chance(30))
            st->win = (u16_t)(1000 + rnd(60000));
        s = ack_spec(st->id, st->snd_nxt, st->ack, st->win);
        if (chance(5))
            s.flags |= TCP_PSH;
    } else if (r < 70) {                             /* a duplicate ACK */
        s = ack_spec(st->id, st->snd_nxt, st->ack, st->win);
    } else if (r < 74) {                             /* a window update */
        st->win = (u16_t)(st->win + 1 + rnd(1000));
        s = ack_spec(st->id, st->snd_nxt, st->ack, st->win);
    } else if (r < 77) {                             /* an older ACK (reordered) */
        s = ack_spec(st->id, st->snd_nxt, st->ack - (u32_t)(1 + rnd(3000)), st->win);
    } else if (r < 84) {                             /* a retransmission */
        s = data_spec(st->id, st->snd_nxt - (u32_t)rnd(3 * 1460), st->ack, random_plen());
    } else if (r < 86) {                             /* a keepalive (or zero window probe) */
        s = data_spec(st->id, st->snd_nxt - 1, st->ack, (u16_t)rnd(2));
    } else {                                         /* something else, in sequence */
        s = data_spec(st->id, st->snd_nxt, st->ack, chance(50) ? 0 : random_plen());
        variants[rnd(NVARIANTS)].apply(&s);
        if ((s.tcp_opt || s.ip_opt) && s.plen > PAYLOAD_MAX - 12)
            s.plen = PAYLOAD_MAX - 12;
        if (s.flow == st->id && s.seq == st->snd_nxt && s.ethertype == ETHTYPE_IP && !(s.frag & 0x3fff))
            st->snd_nxt += s.plen + ((s.flags & (TCP_SYN | TCP_FIN)) ? 1 : 0);
    }
    s.ram = chance(10);
    build(k, s);
    fr[k].nic_bad = chance(3);
}

/* would frame j join the segment of frames first..j-1 (the header comment's
 * rules)? limits: 0 to leave out RX_MERGE_MAX_FRAMES and RX_MERGE_MAX_PAYLOAD */
static int should_merge(int first, int j, int limits)
{
    const struct fspec *h = &fr[first].s, *p = &fr[j - 1].s, *s = &fr[j].s;
    u32_t sum = 0;
    int k;
    if (!plain(h) || !plain(s) || fr[first].nic_bad || fr[j].nic_bad || s->flow != h->flow)
        return 0;
    for (k = first; k < j; k++)
        sum += fr[k].s.plen;
    if (h->plen == 0)
        return s->plen == 0 && s->seq == p->seq && older(p->ack, s->ack);
    return s->plen > 0 && s->seq == h->seq + sum && !older(s->ack, p->ack) &&
           (!limits || (j - first < RX_MERGE_MAX_FRAMES && sum + s->plen <= RX_MERGE_MAX_PAYLOAD));
}

static void random_sequence(void)
{
    struct flow_state st[3];
    int nflows = 1 + (int)rnd(3), n = 1 + (int)rnd(NFRAMES - 8), k, f, i, end;
    /* bulk 1: 1460-byte frames (16 reach both limits at once), 2: larger ones
     * (the payload limit comes first), 3: small ones (the frame limit) */
    int bulk = chance(70) ? 0 : 1 + (int)rnd(3);
    int prev_of[NFRAMES];
    long pool0 = pool_used();

    memset(stream_in_len, 0, sizeof(stream_in_len));
    memset(stream_out_len, 0, sizeof(stream_out_len));
    memset(backs_in, 0, sizeof(backs_in));
    memset(backs_out, 0, sizeof(backs_out));
    memset(seen_in, 0, sizeof(seen_in));
    memset(seen_out, 0, sizeof(seen_out));
    for (f = 0; f < nflows; f++) {
        int dup;
        do { /* distinct flows, often ones that differ from flow 0 in one field */
            st[f].id = (int)rnd(NFLOWS);
            for (dup = 0, k = 0; k < f; k++)
                dup |= st[k].id == st[f].id;
        } while (dup);
        st[f].snd_nxt = chance(20) ? 0u - (u32_t)rnd(20000) : (u32_t)rng_next();
        st[f].ack = chance(20) ? 0u - (u32_t)rnd(20000) : (u32_t)rng_next();
        st[f].win = (u16_t)(1000 + rnd(60000));
        st[f].last = -1;
    }
    for (f = 0, k = 0; k < n; k++) {
        /* bursts of one flow, as a bulk sender makes them */
        if (!chance(bulk ? 95 : 70))
            f = (int)rnd((size_t)nflows);
        random_frame(k, &st[f], bulk);
        prev_of[k] = st[f].last;
        st[f].last = k;
        account(fr[k].bytes, fr[k].len, 0);
        stats.frames++;
        stats.not_plain += !plain(&fr[k].s);
        stats.nic_bad += fr[k].nic_bad;
    }

    /* rx_poll: batches up to the ring's head, each frame starting a segment
     * unless merged into the one before */
    for (i = 0; i < n; i = end) {
        end = i + 1 + (int)rnd(chance(50) ? (size_t)(n - i) : 8);
        if (end > n)
            end = n;
        while (i < end) {
            int next = i + 1;
            u32_t merged = 0;
            long expect_pool = pool0;
            struct pbuf *out;
            if (fr[i].nic_bad) {
                out = fr[i].p; /* to lwIP as it came */
            } else {
                out = merge_from(i, end, &next, &merged);
                CHECKF(merged == (u32_t)(next - i - 1), "merged %u for %d frames", merged, next - i);
            }
            /* every frame taken is in the segment or freed (ACKs replaced) */
            for (k = next; k < n; k++)
                expect_pool += !fr[k].s.ram;
            if (fr[i].s.plen || next == i + 1) {
                for (k = i; k < next; k++)
                    expect_pool += !fr[k].s.ram;
            } else {
                expect_pool += !fr[next - 1].s.ram;
                stats.merged_acks += (unsigned long)(next - i - 1);
            }
            if (fr[i].s.plen)
                stats.merged_data += (unsigned long)(next - i - 1);
            CHECKF(pool_used() == expect_pool, "pool: %ld in use, want %ld", pool_used(), expect_pool);
            if (next < end && should_merge(i, next, 0)) { /* stopped by a limit */
                stats.frame_limit += next - i == RX_MERGE_MAX_FRAMES;
                stats.payload_limit += next - i < RX_MERGE_MAX_FRAMES;
            }
            if (next < end)
                CHECKF(!should_merge(i, next, 1),
                       "frame %d (seq %08x ack %08x, %u bytes) not merged into %d..%d (%08x %08x, %u)",
                       next, fr[next].s.seq, fr[next].s.ack, fr[next].s.plen, i, next - 1,
                       fr[next - 1].s.seq, fr[next - 1].s.ack, fr[next - 1].s.plen);
            /* duplicate ACKs (same ack and window as the flow's previous frame,
             * a pure ACK too): each comes out, unless the very next frame is a
             * cumulative ACK of the flow that replaced it, as the rules say */
            for (k = i; k < next; k++) {
                int p = prev_of[k];
                if (p < 0 || fr[p].s.flow != fr[k].s.flow || !plain(&fr[k].s) || fr[k].s.plen ||
                    !plain(&fr[p].s) || fr[p].s.plen ||
                    fr[p].s.ack != fr[k].s.ack || fr[p].s.win != fr[k].s.win || fr[k].nic_bad)
                    continue;
                stats.dup_acks++;
                if (k == next - 1)
                    stats.dup_acks_out++;
                else
                    stats.superseded_dups++;
                CHECKF(k == next - 1 || (fr[k + 1].s.plen == 0 && older(fr[k].s.ack, fr[k + 1].s.ack)),
                       "duplicate ACK %d (ack %08x) lost in %d..%d", k, fr[k].s.ack, i, next - 1);
            }
            if (!fr[i].nic_bad) {
                u16_t len = flatten(out);
                account(seg, len, 1);
                check_run(out, i, next - 1);
            } else {
                account(fr[i].bytes, fr[i].len, 1);
                fr[i].p = NULL;
            }
            pbuf_free(out);
            stats.segments++;
            i = next;
        }
    }

    for (f = 0; f < NFLOWS; f++) {
        CHECKF(stream_out_len[f] == stream_in_len[f] &&
               !memcmp(stream_out[f], stream_in[f], stream_in_len[f]),
               "flow %d: %u payload bytes in, %u out (or different)", f, stream_in_len[f],
               stream_out_len[f]);
        CHECKF(backs_out[f] <= backs_in[f], "flow %d: ACK went back %u times out, %u in", f,
               backs_out[f], backs_in[f]);
    }
    for (k = 0; k < n; k++)
        CHECKF(fr[k].p == NULL, "frame %d never handed on", k);
    CHECKF(in_use() == baseline, "%ld pbuf units leaked", in_use() - baseline);
}

int main(int argc, char **argv)
{
    uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 1;
    unsigned long sequences = argc > 2 ? strtoul(argv[2], NULL, 0) : 10000, s;
    clock_t t0 = clock();

    printf("test_rx_merge: seed %llu, %lu sequences\n", (unsigned long long)seed, sequences);
    rng_seed(seed);
    lwip_init();
    baseline = in_use();

    test_data_chain();
    test_pure_acks();
    test_not_merged();
    test_limits();
    test_padding();

    for (s = 0; s < sequences && check_failed < 100; s++) /* a broken build fails everywhere */
        random_sequence();
    printf("%lu frames in %lu segments: %lu data frames merged, %lu ACKs replaced; duplicate ACKs "
           "%lu (%lu handed on, %lu replaced by a cumulative ACK); %lu not plain, %lu NIC-flagged; "
           "segments at the frame limit %lu, at the payload limit %lu (%.2f s)\n",
           stats.frames, stats.segments, stats.merged_data, stats.merged_acks, stats.dup_acks,
           stats.dup_acks_out, stats.superseded_dups, stats.not_plain, stats.nic_bad,
           stats.frame_limit, stats.payload_limit,
           (double)(clock() - t0) / CLOCKS_PER_SEC);
    /* every kind of outcome must be reached, or the random part proves little */
    if (sequences >= 1000) {
        CHECK(stats.merged_data > stats.frames / 20);
        CHECK(stats.merged_acks > stats.frames / 100);
        CHECK(stats.dup_acks_out > stats.frames / 100);
        CHECK(stats.not_plain > 0 && stats.nic_bad > 0);
        CHECK(stats.frame_limit > 0 && stats.payload_limit > 0);
    }
    CHECK(in_use() == baseline);
    return check_summary();
}
