/* tcp_isn.c: SipHash-2-4 against its authors' vectors, and the properties
 * RFC 6528 asks of the ISNs. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "net/tcp_isn.h"

#define IP(a, b, c, d) ((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | (uint32_t)(d) << 24)

static void test_siphash_vectors(void)
{
    uint8_t key[16], msg[15];
    for (int i = 0; i < 16; i++)
        key[i] = (uint8_t)i;
    for (int i = 0; i < 15; i++)
        msg[i] = (uint8_t)i;
    /* "SipHash: a fast short-input PRF", appendix A, and the first entry of its vector table */
    CHECKF(siphash24(key, msg, 15) == 0xa129ca6149be45e5ull, "%016llx",
           (unsigned long long)siphash24(key, msg, 15));
    CHECKF(siphash24(key, msg, 0) == 0x726fdb47dd0e0e31ull, "%016llx",
           (unsigned long long)siphash24(key, msg, 0));
}

static void test_isn_properties(void)
{
    uint32_t server = IP(10, 0, 2, 15), client = IP(10, 0, 2, 2);
    uint32_t a = tcp_isn(server, 80, client, 40000, 1000);
    uint32_t diffs_seen = 0, prev, i, same = 0;

    CHECK(tcp_isn(server, 80, client, 40000, 1000) == a);          /* a function of its inputs */
    CHECK(tcp_isn(server, 80, client, 40000, 1001) - a == 250u);   /* M: 4 us ticks */
    CHECK(tcp_isn(server, 80, client, 40000, 1000 + 3600000) - a == 900000000u);
    CHECK(tcp_isn(server, 80, client, 40001, 1000) != a);
    CHECK(tcp_isn(server, 80, IP(10, 0, 2, 3), 40000, 1000) != a);
    CHECK(tcp_isn(server, 8080, client, 40000, 1000) != a);
    /* no counter between neighbouring connections: the steps from one client port to the
     * next at the same moment are all different (lwIP's own: one step, its tick count) */
    prev = tcp_isn(server, 80, client, 1024, 5000);
    for (i = 1025; i < 2048; i++) {
        uint32_t isn = tcp_isn(server, 80, client, (uint16_t)i, 5000);
        if (isn - prev == tcp_isn(server, 80, client, (uint16_t)(i + 1), 5000) - isn)
            same++;
        diffs_seen++;
        prev = isn;
    }
    CHECKF(same == 0 && diffs_seen == 1023, "%u equal steps", same);
}

static void test_stirring(void)
{
    uint32_t server = IP(10, 0, 2, 15), client = IP(10, 0, 2, 2);
    uint32_t before = tcp_isn(server, 80, client, 40000, 1000), after, i;
    uint8_t mac[6] = { 0x10, 0xe2, 0xd5, 0x00, 0x00, 0x00 };

    tcp_isn_stir(mac, sizeof(mac));
    after = tcp_isn(server, 80, client, 40000, 1000);
    CHECK(after != before);
    /* each of the first TCP_ISN_STIR_FRAMES arrivals changes the key, later ones do not */
    for (i = 0; i < TCP_ISN_STIR_FRAMES; i++) {
        tcp_isn_stir_arrival(12345u + i);
        CHECK(tcp_isn(server, 80, client, 40000, 1000) != after);
        after = tcp_isn(server, 80, client, 40000, 1000);
    }
    tcp_isn_stir_arrival(99999u);
    CHECK(tcp_isn(server, 80, client, 40000, 1000) == after);
}

int main(void)
{
    test_siphash_vectors();
    test_isn_properties();
    test_stirring();
    return check_summary();
}
