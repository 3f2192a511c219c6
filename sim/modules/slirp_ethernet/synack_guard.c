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

static struct synack_seen *slot_of(struct synack_guard *g, const struct synack_seen *k)
{
    uint32_t h = k->src_ip * 2654435761u ^ k->dst_ip * 40503u ^ ((uint32_t)k->src_port << 16 | k->dst_port);
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    return &g->seen[h % SYNACK_GUARD_SLOTS];
}

int synack_guard_frame(struct synack_guard *g, uint8_t *frame, size_t len)
{
    uint8_t *ip, *tcp, *opt;
    size_t ihl, total, doff, i;
    struct synack_seen key, *slot;
    int repeat;

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

    memset(&key, 0, sizeof(key));
    memcpy(&key.src_ip, ip + 12, 4);
    memcpy(&key.dst_ip, ip + 16, 4);
    memcpy(&key.src_port, tcp, 2);
    memcpy(&key.dst_port, tcp + 2, 2);
    key.seq = get32(tcp + 4);
    key.used = 1;
    g->synacks++;
    slot = slot_of(g, &key);
    repeat = memcmp(slot, &key, sizeof(key)) == 0;
    *slot = key;
    if (!repeat)
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
