/* A repeated SYN-ACK reaches libslirp without its MSS option (synack_guard.h). */
#include <string.h>

#include "synack_guard.h"

#define ETH_HLEN 14
#define TH_SYN 0x02
#define TH_ACK 0x10
#define TCPOPT_EOL 0
#define TCPOPT_NOP 1
#define TCPOPT_MAXSEG 2

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* RFC 1624, eqn. 3: HC' = ~(~HC + ~m + m'), one 16-bit word changed */
static uint16_t csum_update(uint16_t sum, uint16_t old, uint16_t new)
{
    uint32_t s = (uint16_t)~sum + (uint32_t)(uint16_t)~old + new;
    s = (s & 0xffff) + (s >> 16);
    s = (s & 0xffff) + (s >> 16);
    return (uint16_t)~s;
}

static struct synack_seen *set_of(struct synack_guard *g, uint32_t src_ip, uint32_t dst_ip, uint16_t src_port,
                                  uint16_t dst_port)
{
    uint32_t h = src_ip * 2654435761u ^ dst_ip * 40503u ^ ((uint32_t)src_port << 16 | dst_port);
    h ^= h >> 16;
    h *= 2246822519u;
    h ^= h >> 13;
    h *= 3266489917u;
    h ^= h >> 16;
    return g->seen[h % SYNACK_GUARD_SETS];
}

/* 1 when this SYN-ACK (connection and sequence number) went through before */
static int seen_before(struct synack_guard *g, const uint8_t *ip, const uint8_t *tcp)
{
    uint32_t src_ip, dst_ip, seq = get32(tcp + 4);
    uint16_t src_port, dst_port;
    struct synack_seen *set, *e, *oldest;
    int i;

    memcpy(&src_ip, ip + 12, 4);
    memcpy(&dst_ip, ip + 16, 4);
    memcpy(&src_port, tcp, 2);
    memcpy(&dst_port, tcp + 2, 2);
    set = set_of(g, src_ip, dst_ip, src_port, dst_port);
    oldest = set;
    g->synacks++;
    for (i = 0; i < SYNACK_GUARD_WAYS; i++) {
        e = &set[i];
        if (e->stamp && e->src_ip == src_ip && e->dst_ip == dst_ip && e->src_port == src_port &&
            e->dst_port == dst_port) {
            int repeat = e->seq == seq; /* else the same ports on a new connection */
            e->seq = seq;
            e->stamp = g->synacks;
            return repeat;
        }
        if (e->stamp < oldest->stamp)
            oldest = e;
    }
    oldest->src_ip = src_ip;
    oldest->dst_ip = dst_ip;
    oldest->src_port = src_port;
    oldest->dst_port = dst_port;
    oldest->seq = seq;
    oldest->stamp = g->synacks;
    return 0;
}

int synack_guard_frame(struct synack_guard *g, uint8_t *frame, size_t len)
{
    uint8_t *ip, *tcp, *opt;
    size_t ihl, total, doff, i;

    if (len < ETH_HLEN + 20 + 20 || get16(frame + 12) != 0x0800)
        return 0;
    ip = frame + ETH_HLEN;
    ihl = (size_t)(ip[0] & 0x0f) * 4;
    total = get16(ip + 2);
    if ((ip[0] >> 4) != 4 || ip[9] != 6 || ihl < 20 || total > len - ETH_HLEN || total < ihl + 20 ||
        (get16(ip + 6) & 0x3fff)) /* a fragment: not ours to read */
        return 0;
    tcp = ip + ihl;
    if ((tcp[13] & (TH_SYN | TH_ACK)) != (TH_SYN | TH_ACK))
        return 0;
    doff = (size_t)(tcp[12] >> 4) * 4;
    if (doff < 20 || ihl + doff > total)
        return 0;

    if (!seen_before(g, ip, tcp))
        return 0;
    g->repeats++;

    /* the options: overwrite an MSS option with NOPs */
    opt = tcp + 20;
    for (i = 0; i < doff - 20;) {
        uint8_t kind = opt[i], olen;
        if (kind == TCPOPT_EOL)
            break;
        if (kind == TCPOPT_NOP) {
            i++;
            continue;
        }
        if (i + 1 >= doff - 20)
            break;
        olen = opt[i + 1];
        if (olen < 2 || i + olen > doff - 20)
            break;
        if (kind == TCPOPT_MAXSEG && olen == 4 && (i % 2) == 0) {
            /* two 16-bit words of the checksummed header change (i even: word-aligned,
             * as the option starts 20 + i bytes into the header) */
            uint16_t sum = get16(tcp + 16);
            sum = csum_update(sum, get16(opt + i), TCPOPT_NOP << 8 | TCPOPT_NOP);
            sum = csum_update(sum, get16(opt + i + 2), TCPOPT_NOP << 8 | TCPOPT_NOP);
            memset(opt + i, TCPOPT_NOP, 4);
            tcp[16] = (uint8_t)(sum >> 8);
            tcp[17] = (uint8_t)sum;
            g->stripped++;
            return 1;
        }
        i += olen;
    }
    return 0;
}
