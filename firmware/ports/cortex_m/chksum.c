/*
 * The Internet checksum (RFC 1071) for lwIP (LWIP_CHKSUM in a port's
 * lwipopts.h): the 16-bit one's-complement sum of the bytes, paired from the
 * first one, in host order and not inverted, as lwip_standard_chksum
 * returns it.
 *
 * The Cortex-M3 loads words at any alignment (unaligned.h), so the bytes are
 * summed as 32-bit words from wherever they start, four words to a loop turn through the carry flag (ADDS/ADCS), and
 * the 32-bit sum folds to 16 bits at the end: about 0.8 instructions a byte,
 * against about 2.5 for lwIP's 16-bit loop (bench/README.md).
 */
#include "cortex_m.h"
#include "unaligned.h"

/* sum + a + b + c + d in one's-complement arithmetic on 32 bits (the carry
 * out of bit 31 added back in) */
static inline uint32_t add_words(uint32_t sum, uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
#if defined(__arm__)
    __asm__("adds %0, %0, %1\n\t"
            "adcs %0, %0, %2\n\t"
            "adcs %0, %0, %3\n\t"
            "adcs %0, %0, %4\n\t"
            "adc  %0, %0, #0"
            : "+r"(sum) : "r"(a), "r"(b), "r"(c), "r"(d) : "cc");
    return sum;
#else /* the host's tests (tests/host/test_port_string.c) */
    uint64_t t = (uint64_t)sum + a + b + c + d;
    t = (t & 0xFFFFFFFFu) + (t >> 32);
    return (uint32_t)((t & 0xFFFFFFFFu) + (t >> 32));
#endif
}

uint16_t cortex_m_chksum(const void *data, int len)
{
    const uint8_t *p = data;
    uint32_t sum = 0;

    for (; len >= 16; len -= 16, p += 16)
        sum = add_words(sum, unaligned_load32(p), unaligned_load32(p + 4), unaligned_load32(p + 8), unaligned_load32(p + 12));
    for (; len >= 4; len -= 4, p += 4)
        sum = add_words(sum, unaligned_load32(p), 0, 0, 0);
    /* the last 0-3 bytes: little-endian, a lone last byte is the low half
     * of its pair; folded to 17 bits first, the sum has room for them */
    sum = (sum & 0xFFFFu) + (sum >> 16);
    if (len >= 2) {
        sum += (uint32_t)p[0] | (uint32_t)p[1] << 8;
        p += 2;
        len -= 2;
    }
    if (len)
        sum += p[0];
    sum = (sum & 0xFFFFu) + (sum >> 16);
    sum = (sum & 0xFFFFu) + (sum >> 16);
    return (uint16_t)sum;
}
