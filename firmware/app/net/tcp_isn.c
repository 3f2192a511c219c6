/* RFC 6528 initial sequence numbers (tcp_isn.h). */
#include "net/tcp_isn.h"

#include <string.h>

static uint8_t key[16];
static uint32_t arrivals_stirred;

static uint64_t rotl(uint64_t x, unsigned b) { return (x << b) | (x >> (64 - b)); }

static uint64_t load_le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

#define SIPROUND                                                                   \
    do {                                                                           \
        v0 += v1; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32);                  \
        v2 += v3; v3 = rotl(v3, 16); v3 ^= v2;                                     \
        v0 += v3; v3 = rotl(v3, 21); v3 ^= v0;                                     \
        v2 += v1; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32);                  \
    } while (0)

uint64_t siphash24(const uint8_t k[16], const void *data, size_t len)
{
    const uint8_t *in = data;
    uint64_t k0 = load_le64(k), k1 = load_le64(k + 8);
    uint64_t v0 = k0 ^ 0x736f6d6570736575ull, v1 = k1 ^ 0x646f72616e646f6dull;
    uint64_t v2 = k0 ^ 0x6c7967656e657261ull, v3 = k1 ^ 0x7465646279746573ull;
    uint64_t m, last = (uint64_t)len << 56;
    size_t i, whole = len - len % 8;

    for (i = 0; i < whole; i += 8) {
        m = load_le64(in + i);
        v3 ^= m;
        SIPROUND;
        SIPROUND;
        v0 ^= m;
    }
    for (i = 0; i < len % 8; i++)
        last |= (uint64_t)in[whole + i] << (8 * i);
    v3 ^= last;
    SIPROUND;
    SIPROUND;
    v0 ^= last;
    v2 ^= 0xff;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

uint32_t tcp_isn(uint32_t local_ip, uint16_t local_port, uint32_t remote_ip, uint16_t remote_port,
                 uint32_t now_ms)
{
    uint8_t tuple[12];

    memcpy(tuple, &local_ip, 4);
    memcpy(tuple + 4, &remote_ip, 4);
    memcpy(tuple + 8, &local_port, 2);
    memcpy(tuple + 10, &remote_port, 2);
    /* M: 4 us ticks (wraps every 4.77 hours, as RFC 793's clock) */
    return now_ms * 250u + (uint32_t)siphash24(key, tuple, sizeof(tuple));
}

/* The new key is two outputs of the old one over the data: nothing of what
 * was stirred before is lost, and none of it can be read back. */
void tcp_isn_stir(const void *data, size_t len)
{
    uint8_t other[16];
    uint64_t lo, hi;
    int i;

    memcpy(other, key, sizeof(other));
    other[0] ^= 1;
    lo = siphash24(key, data, len);
    hi = siphash24(other, data, len);
    for (i = 0; i < 8; i++) {
        key[i] = (uint8_t)(lo >> (8 * i));
        key[8 + i] = (uint8_t)(hi >> (8 * i));
    }
}

void tcp_isn_stir_arrival(uint32_t cycles)
{
    if (arrivals_stirred >= TCP_ISN_STIR_FRAMES)
        return;
    arrivals_stirred++;
    tcp_isn_stir(&cycles, sizeof(cycles));
}
