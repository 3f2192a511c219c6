/* Malformed traffic into the SoC: see malformed.h. */
#include "malformed.h"

#include <string.h>

#define ETH_HEADER 14
#define IP_HEADER 20
#define TCP_HEADER 20

static const uint8_t soc_mac[6] = {0x10, 0xe2, 0xd5, 0x00, 0x00, 0x01};     /* firmware */
static const uint8_t gateway_mac[6] = {0x52, 0x55, 0x0a, 0x00, 0x02, 0x02}; /* libslirp */
static const uint8_t gateway_ip[4] = {10, 0, 2, 2};
static const uint8_t soc_ip[4] = {10, 0, 2, 15};

const char *const malformed_names[MALFORMED_KINDS] = {
    [MALFORMED_RANDOM_BYTES] = "random_bytes",
    [MALFORMED_RUNT] = "runt",
    [MALFORMED_OVERSIZE] = "oversize",
    [MALFORMED_BAD_ETHERTYPE] = "bad_ethertype",
    [MALFORMED_BAD_IP_HEADER] = "bad_ip_header",
    [MALFORMED_IP_OPTIONS] = "ip_options",
    [MALFORMED_FRAGMENT] = "fragment",
    [MALFORMED_TCP_BAD_OFFSET] = "tcp_bad_offset",
    [MALFORMED_TCP_ODD_FLAGS] = "tcp_odd_flags",
    [MALFORMED_UDP_ICMP] = "udp_icmp",
};

static uint64_t next_random(struct malformed *m) /* xorshift64* */
{
    m->rng ^= m->rng >> 12;
    m->rng ^= m->rng << 25;
    m->rng ^= m->rng >> 27;
    return m->rng * 0x2545f4914f6cdd1dull;
}

/* uniform in [lo, hi] */
static uint64_t between(struct malformed *m, uint64_t lo, uint64_t hi)
{
    return lo + next_random(m) % (hi - lo + 1);
}

static void random_fill(struct malformed *m, uint8_t *p, size_t n)
{
    while (n--)
        *p++ = (uint8_t)next_random(m);
}

static void put16(uint8_t *p, unsigned v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
    put16(p, v >> 16);
    put16(p + 2, v & 0xffff);
}

/* RFC 1071 sum, not yet complemented */
static uint32_t sum16(const uint8_t *p, size_t n, uint32_t sum)
{
    size_t i;
    for (i = 0; i + 1 < n; i += 2)
        sum += (uint32_t)(p[i] << 8 | p[i + 1]);
    if (n & 1)
        sum += (uint32_t)p[n - 1] << 8;
    return sum;
}

static unsigned fold(uint32_t sum)
{
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return ~sum & 0xffff;
}

static void ethernet(uint8_t *f, const uint8_t *dst, unsigned ethertype)
{
    memcpy(f, dst, 6);
    memcpy(f + 6, gateway_mac, 6);
    put16(f + 12, ethertype);
}

/* IPv4 header at ip from the gateway to the SoC, options included (ihl words),
 * header checksum valid */
static void ipv4(uint8_t *ip, unsigned ihl, unsigned total, unsigned proto, unsigned frag)
{
    ip[0] = (uint8_t)(0x40 | ihl);
    ip[1] = 0;
    put16(ip + 2, total);
    put16(ip + 4, 0x4d31);
    put16(ip + 6, frag);
    ip[8] = 64;
    ip[9] = (uint8_t)proto;
    put16(ip + 10, 0);
    memcpy(ip + 12, gateway_ip, 4);
    memcpy(ip + 16, soc_ip, 4);
    put16(ip + 10, fold(sum16(ip, ihl * 4, 0)));
}

/* The L4 checksum (TCP, UDP: with the pseudo-header) over the segment l4..l4+len. */
static void l4_checksum(uint8_t *ip, uint8_t *l4, size_t len, unsigned proto, size_t field)
{
    uint8_t pseudo[12];
    memcpy(pseudo, ip + 12, 8);
    pseudo[8] = 0;
    pseudo[9] = (uint8_t)proto;
    put16(pseudo + 10, (unsigned)len);
    put16(l4 + field, 0);
    put16(l4 + field, fold(sum16(l4, len, sum16(pseudo, 12, 0))));
}

/* TCP header from a port below 1024 (never a host client's) to port 80 */
static void tcp(struct malformed *m, uint8_t *t, unsigned offset_words, unsigned flags)
{
    put16(t, (unsigned)between(m, 1, 1023));
    put16(t + 2, 80);
    put32(t + 4, (uint32_t)next_random(m));
    put32(t + 8, (uint32_t)next_random(m));
    t[12] = (uint8_t)(offset_words << 4);
    t[13] = (uint8_t)flags;
    put16(t + 14, 8192);
    put16(t + 16, 0);
    put16(t + 18, (flags & 0x20) ? (unsigned)between(m, 0, 0xffff) : 0);
}

/* A whole IPv4/TCP frame (ACK, payload bytes of random data) into f; returns its length. */
static size_t tcp_frame(struct malformed *m, uint8_t *f, size_t payload, unsigned flags)
{
    uint8_t *ip = f + ETH_HEADER, *t = ip + IP_HEADER;
    size_t len = IP_HEADER + TCP_HEADER + payload;

    ethernet(f, soc_mac, 0x0800);
    ipv4(ip, 5, (unsigned)len, 6, 0x4000);
    tcp(m, t, 5, flags);
    random_fill(m, t + TCP_HEADER, payload);
    l4_checksum(ip, t, TCP_HEADER + payload, 6, 16);
    return ETH_HEADER + len;
}

static size_t build_bad_ethertype(struct malformed *m, uint8_t *f)
{
    static const unsigned types[] = {0x0000, 0x002e, 0x05dc, 0x0600, 0x86dd, 0x8100, 0x88a8, 0x88cc,
                                     0x0806, 0x0806, 0x8863, 0xffff};
    unsigned type = types[between(m, 0, sizeof(types) / sizeof(types[0]) - 1)];
    size_t len = ETH_HEADER + between(m, 0, 200), i;

    if (next_random(m) & 1)
        type = (unsigned)between(m, 0, 0xffff) | 0x8000; /* any Ethernet II type not IPv4 */
    if (type == 0x0800)
        type = 0x0801;
    ethernet(f, next_random(m) & 1 ? soc_mac : (const uint8_t *)"\xff\xff\xff\xff\xff\xff", type);
    random_fill(m, f + ETH_HEADER, len - ETH_HEADER);
    if (type == 0x0806 && len >= ETH_HEADER + 8) {
        /* ARP for the SoC's address with an impossible hardware type or sizes: dropped, never
         * learnt (a well-formed one could move the gateway's ARP entry) */
        static const uint8_t arp[][4] = {{0, 2, 6, 4}, {0, 1, 8, 4}, {0, 1, 6, 16}, {0, 1, 0, 0}};
        const uint8_t *a = arp[between(m, 0, 3)];
        put16(f + ETH_HEADER, (unsigned)(a[0] << 8 | a[1]));
        put16(f + ETH_HEADER + 2, 0x0800);
        f[ETH_HEADER + 4] = a[2];
        f[ETH_HEADER + 5] = a[3];
        put16(f + ETH_HEADER + 6, (unsigned)between(m, 1, 2));
        for (i = ETH_HEADER + 8; i + 4 <= len && i < ETH_HEADER + 28; i += 4)
            memcpy(f + i, soc_ip, 4);
    }
    if (type == 0x8100 && len >= ETH_HEADER + 4 && (next_random(m) & 1))
        put16(f + ETH_HEADER + 2, 0x0800); /* a tagged "IPv4" frame of garbage */
    return len;
}

static size_t build_bad_ip_header(struct malformed *m, uint8_t *f)
{
    size_t payload = between(m, 0, 300);
    size_t len = tcp_frame(m, f, payload, 0x18);
    uint8_t *ip = f + ETH_HEADER;
    unsigned total = (unsigned)(len - ETH_HEADER);

    switch (between(m, 0, 7)) {
    case 0: ip[0] = (uint8_t)(between(m, 0, 15) << 4 | 5);       /* a version other than 4 */
        if ((ip[0] >> 4) == 4)
            ip[0] = 0x65;
        break;
    case 1: ip[0] = (uint8_t)(0x40 | between(m, 0, 4)); break;     /* IHL < 5 */
    case 2: ip[0] = (uint8_t)(0x40 | between(m, 6, 15));           /* IHL past the total length */
        put16(ip + 2, (unsigned)between(m, 20, 23)); break;
    case 3: put16(ip + 2, total + (unsigned)between(m, 1, 2000)); break; /* longer than the frame */
    case 4: put16(ip + 2, (unsigned)between(m, 0, 19)); break;     /* shorter than a header */
    case 5: put16(ip + 10, (ip[10] << 8 | ip[11]) ^ (unsigned)between(m, 1, 0xffff)); return len;
    case 6: memset(ip + 12, next_random(m) & 1 ? 0xff : 0x00, 4); break; /* source broadcast / 0 */
    default: ip[8] = 0; break;                                     /* TTL 0 */
    }
    put16(ip + 10, 0);
    put16(ip + 10, fold(sum16(ip, 20, 0)));
    return len;
}

static size_t build_ip_options(struct malformed *m, uint8_t *f)
{
    unsigned ihl = (unsigned)between(m, 6, 15);
    size_t opt = ihl * 4 - IP_HEADER, payload = between(m, 0, 200);
    uint8_t *ip = f + ETH_HEADER, *t = ip + ihl * 4;
    size_t len = ihl * 4 + TCP_HEADER + payload;

    ethernet(f, soc_mac, 0x0800);
    random_fill(m, ip + IP_HEADER, opt);
    if (next_random(m) & 1) { /* an option whose length runs past the header, or is 0 or 1 */
        ip[IP_HEADER] = (uint8_t)between(m, 2, 0x9f);
        ip[IP_HEADER + 1] = (uint8_t)(next_random(m) & 1 ? between(m, 0, 1) : opt + between(m, 1, 40));
    }
    ipv4(ip, ihl, (unsigned)len, 6, 0x4000);
    tcp(m, t, 5, 0x10);
    random_fill(m, t + TCP_HEADER, payload);
    l4_checksum(ip, t, TCP_HEADER + payload, 6, 16);
    return ETH_HEADER + len;
}

static size_t build_fragment(struct malformed *m, uint8_t *f)
{
    static const unsigned protos[] = {6, 17, 1};
    unsigned proto = protos[between(m, 0, 2)];
    size_t payload = 8 * between(m, 1, 180); /* fragments other than the last: multiples of 8 */
    unsigned offset, frag;
    uint8_t *ip = f + ETH_HEADER;

    switch (between(m, 0, 2)) {
    case 0: offset = 0; frag = 0x2000; break;                               /* first, MF */
    case 1: offset = (unsigned)between(m, 1, 8000); frag = 0x2000; break;   /* middle */
    default: offset = (unsigned)between(m, 1, 8000); frag = 0; payload -= between(m, 0, 7); break;
    }
    ethernet(f, soc_mac, 0x0800);
    random_fill(m, ip + IP_HEADER, payload);
    if (offset == 0 && proto == 6)
        tcp(m, ip + IP_HEADER, 5, 0x18);
    ipv4(ip, 5, (unsigned)(IP_HEADER + payload), proto, frag | offset);
    put16(ip + 4, (unsigned)between(m, 0, 0xffff)); /* a datagram ID of its own */
    put16(ip + 10, 0);
    put16(ip + 10, fold(sum16(ip, 20, 0)));
    return ETH_HEADER + IP_HEADER + payload;
}

static size_t build_tcp_bad_offset(struct malformed *m, uint8_t *f)
{
    size_t payload = between(m, 0, 39);
    size_t len = tcp_frame(m, f, payload, next_random(m) & 1 ? 0x10 : 0x18);
    uint8_t *ip = f + ETH_HEADER, *t = ip + IP_HEADER;
    size_t segment = TCP_HEADER + payload;

    /* below the 5-word minimum, or more words than the segment holds (payload < 40: at most
     * 14 words, so 15 is always past it) */
    t[12] = (uint8_t)((next_random(m) & 1 ? between(m, 0, 4) : between(m, segment / 4 + 1, 15)) << 4);
    l4_checksum(ip, t, segment, 6, 16);
    return len;
}

static size_t build_tcp_odd_flags(struct malformed *m, uint8_t *f)
{
    static const unsigned flags[] = {0x03 /* SYN FIN */, 0x06 /* SYN RST */, 0x05 /* FIN RST */,
                                     0xff, 0x00, 0x20 /* URG */, 0x30 /* URG ACK */, 0x29 /* URG PSH FIN */,
                                     0xc0 /* ECE CWR */, 0x07};
    return tcp_frame(m, f, between(m, 0, 100), flags[between(m, 0, 9)]);
}

static size_t build_udp_icmp(struct malformed *m, uint8_t *f)
{
    uint8_t *ip = f + ETH_HEADER, *l4 = ip + IP_HEADER;
    size_t payload = between(m, 0, 600), seg;

    ethernet(f, soc_mac, 0x0800);
    if (next_random(m) & 1) { /* UDP whose length field disagrees with the packet */
        seg = 8 + payload;
        random_fill(m, l4, seg);
        put16(l4, (unsigned)between(m, 1, 1023));
        put16(l4 + 2, (unsigned)between(m, 1, 0xffff));
        put16(l4 + 4, next_random(m) & 1 ? (unsigned)(seg + between(m, 1, 1000)) : (unsigned)between(m, 0, 7));
        ipv4(ip, 5, (unsigned)(IP_HEADER + seg), 17, 0x4000);
        l4_checksum(ip, l4, seg, 17, 6);
    } else { /* ICMP of any type (echo requests of odd sizes among them) or too short */
        seg = next_random(m) & 1 ? between(m, 0, 7) : 8 + payload;
        random_fill(m, l4, seg);
        if (seg >= 2 && (next_random(m) & 1)) {
            l4[0] = 8; /* echo request */
            l4[1] = 0;
        }
        ipv4(ip, 5, (unsigned)(IP_HEADER + seg), 1, 0x4000);
        if (seg >= 4) {
            put16(l4 + 2, 0);
            put16(l4 + 2, fold(sum16(l4, seg, 0)));
        }
    }
    return ETH_HEADER + IP_HEADER + seg;
}

size_t malformed_build(struct malformed *m, int k, uint8_t *f, int *flags)
{
    size_t len;

    *flags = FRAME_INJECTED;
    switch (k) {
    case MALFORMED_RANDOM_BYTES:
        len = between(m, 1, 1600);
        random_fill(m, f, len);
        if ((next_random(m) & 1) && len >= 6)
            memcpy(f, soc_mac, 6);
        *flags |= FRAME_TRUNCATED; /* as it is, not padded */
        return len;
    case MALFORMED_RUNT: {
        size_t cut = between(m, 1, 59);
        tcp_frame(m, f, 40, 0x18);
        *flags |= FRAME_TRUNCATED;
        return cut;
    }
    case MALFORMED_OVERSIZE: {
        size_t len = between(m, 1519, MALFORMED_MAX_FRAME);
        size_t claimed = next_random(m) & 1 ? len - ETH_HEADER : between(m, 40, 1500);
        uint8_t *ip = f + ETH_HEADER;
        tcp_frame(m, f, len - ETH_HEADER - IP_HEADER - TCP_HEADER, 0x18);
        put16(ip + 2, claimed > 0xffff ? 0xffff : (unsigned)claimed);
        put16(ip + 10, 0);
        put16(ip + 10, fold(sum16(ip, 20, 0)));
        return len;
    }
    case MALFORMED_BAD_ETHERTYPE:
        len = build_bad_ethertype(m, f);
        break;
    case MALFORMED_BAD_IP_HEADER:
        len = build_bad_ip_header(m, f);
        break;
    case MALFORMED_IP_OPTIONS:
        len = build_ip_options(m, f);
        break;
    case MALFORMED_FRAGMENT:
        len = build_fragment(m, f);
        break;
    case MALFORMED_TCP_BAD_OFFSET:
        len = build_tcp_bad_offset(m, f);
        break;
    case MALFORMED_TCP_ODD_FLAGS:
        len = build_tcp_odd_flags(m, f);
        break;
    default:
        len = build_udp_icmp(m, f);
        break;
    }
    return len; /* padded to 60 bytes by the module, as a MAC pads */
}

void malformed_init(struct malformed *m, frame_sink sink, void *opaque)
{
    memset(m, 0, sizeof(*m));
    m->sink = sink;
    m->opaque = opaque;
}

int malformed_configure(struct malformed *m, json_object *cfg, char *err, size_t err_len)
{
    int k, any_kinds = 0;
    uint64_t seed = 1, z;

    if (!json_object_is_type(cfg, json_type_object)) {
        snprintf(err, err_len, "the inject argument must be an object");
        return -1;
    }
    json_object_object_foreach(cfg, key, value) {
        if (!strcmp(key, "seed")) {
            seed = (uint64_t)json_object_get_int64(value);
        } else if (!strcmp(key, "interval_cycles")) {
            int64_t v = json_object_get_int64(value);
            if (!json_object_is_type(value, json_type_int) || v < 1) {
                snprintf(err, err_len, "interval_cycles must be a whole number >= 1");
                return -1;
            }
            m->interval_cycles = (uint64_t)v;
        } else if (!strcmp(key, "kinds")) {
            size_t i, n;
            if (!json_object_is_type(value, json_type_array)) {
                snprintf(err, err_len, "kinds must be a list of names");
                return -1;
            }
            n = json_object_array_length(value);
            for (i = 0; i < n; i++) {
                const char *name = json_object_get_string(json_object_array_get_idx(value, i));
                for (k = 0; k < MALFORMED_KINDS; k++)
                    if (name && !strcmp(name, malformed_names[k]))
                        break;
                if (k == MALFORMED_KINDS) {
                    snprintf(err, err_len, "unknown kind \"%s\"", name ? name : "");
                    return -1;
                }
                m->enabled[k] = 1;
                any_kinds = 1;
            }
        } else if (strcmp(key, "stats")) {
            snprintf(err, err_len, "unknown key \"%s\" (seed, interval_cycles, kinds, stats)", key);
            return -1;
        }
    }
    if (!m->interval_cycles) {
        snprintf(err, err_len, "interval_cycles is needed");
        return -1;
    }
    m->nenabled = 0;
    for (k = 0; k < MALFORMED_KINDS; k++) {
        if (!any_kinds)
            m->enabled[k] = 1;
        m->nenabled += m->enabled[k];
    }
    m->seed = seed;
    z = seed + 0x9e3779b97f4a7c15ull * 3; /* not either fault link's stream */
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    m->rng = (z ^ (z >> 31)) | 1;
    m->next_cycle = between(m, m->interval_cycles / 2, m->interval_cycles * 3 / 2);
    return 0;
}

void malformed_tick(struct malformed *m, uint64_t cycle)
{
    static uint8_t frame[MALFORMED_MAX_FRAME];

    while (m->interval_cycles && cycle >= m->next_cycle) {
        int pick = (int)between(m, 0, (uint64_t)m->nenabled - 1), k, flags;
        size_t len;
        for (k = 0; k < MALFORMED_KINDS; k++)
            if (m->enabled[k] && pick-- == 0)
                break;
        len = malformed_build(m, k, frame, &flags);
        m->count[k]++;
        m->bytes += len;
        m->changed = 1;
        m->sink(frame, len, flags, m->opaque);
        m->next_cycle += between(m, m->interval_cycles / 2, m->interval_cycles * 3 / 2);
    }
}

void malformed_report(const struct malformed *m, FILE *out)
{
    int k;
    uint64_t total = 0;
    for (k = 0; k < MALFORMED_KINDS; k++)
        total += m->count[k];
    fprintf(out, "[slirp_ethernet] malformed frames injected: %llu", (unsigned long long)total);
    for (k = 0; k < MALFORMED_KINDS; k++)
        if (m->enabled[k])
            fprintf(out, ", %s %llu", malformed_names[k], (unsigned long long)m->count[k]);
    fprintf(out, "\n");
}

int malformed_write_stats(struct malformed *m, const char *path)
{
    char tmp[4096];
    FILE *f;
    int k, first = 1;
    uint64_t total = 0;

    if (!path || !*path)
        return 0;
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    f = fopen(tmp, "w");
    if (!f)
        return -1;
    for (k = 0; k < MALFORMED_KINDS; k++)
        total += m->count[k];
    fprintf(f, "{\"seed\": %llu, \"interval_cycles\": %llu, \"frames\": %llu, \"bytes\": %llu, \"kinds\": {",
            (unsigned long long)m->seed, (unsigned long long)m->interval_cycles,
            (unsigned long long)total, (unsigned long long)m->bytes);
    for (k = 0; k < MALFORMED_KINDS; k++) {
        if (!m->enabled[k])
            continue;
        fprintf(f, "%s\"%s\": %llu", first ? "" : ", ", malformed_names[k], (unsigned long long)m->count[k]);
        first = 0;
    }
    fprintf(f, "}}\n");
    m->changed = 0;
    if (fclose(f) != 0)
        return -1;
    return rename(tmp, path);
}
