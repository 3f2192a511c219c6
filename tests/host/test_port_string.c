/* The LiteX port's memchr, memcmp and strlen (firmware/ports/litex/string_scan.c)
 * and memcpy and memmove (memcpy.c), and the Cortex-M3 ports' memchr and
 * Internet checksum (firmware/ports/cortex_m/memchr.c, chksum.c; its carry
 * chain in C here), built here under other names, against the C library's
 * (the checksum against a sum of byte pairs): every length up to 40 at every alignment of both pointers, the
 * byte looked for (or the first difference) at every place, bytes with the
 * high bit set, and moves overlapping their source by every distance both
 * ways; and flash_window_copy (flash_window.h) from a window of words at
 * every flash address and destination alignment. Last line: "N passed, M failed". */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

#define memchr port_memchr
#define memcmp port_memcmp
#define strlen port_strlen
#include "../../firmware/ports/litex/string_scan.c"
#undef memchr
#undef memcmp
#undef strlen
#define memcpy port_memcpy
#define memmove port_memmove
#include "../../firmware/ports/litex/memcpy.c"
#undef memcpy
#undef memmove
#define memchr cortex_m_memchr
#include "../../firmware/ports/cortex_m/memchr.c"
#undef memchr
#include "../../firmware/ports/cortex_m/chksum.c"
#include "../../firmware/ports/litex/flash_window.h"

/* RFC 1071's sum of the bytes paired from the first, little-endian, folded
 * to 16 bits and not inverted, as lwIP's LWIP_CHKSUM returns it */
static uint16_t pair_sum(const uint8_t *p, unsigned len)
{
    uint32_t sum = 0;
    unsigned i;
    for (i = 0; i + 1 < len; i += 2)
        sum += (uint32_t)p[i] | (uint32_t)p[i + 1] << 8;
    if (len & 1)
        sum += p[len - 1];
    while (sum >> 16)
        sum = (sum & 0xFFFFu) + (sum >> 16);
    return (uint16_t)sum;
}

static int sign(int v) { return (v > 0) - (v < 0); }

int main(void)
{
    static uint8_t a[128], b[128];
    unsigned len, oa, ob, at;
    for (unsigned i = 0; i < sizeof(a); i++)
        a[i] = (uint8_t)(0x41 + i * 37 % 150);
    for (len = 0; len <= 40; len++) {
        for (oa = 0; oa < 4; oa++) {
            /* memchr: a byte at every place, and one that is not there */
            for (at = 0; at <= len; at++) {
                uint8_t *s = a + 8 + oa, ch = 0xfe, keep = at < len ? s[at] : 0;
                const void *want, *got;
                if (at < len)
                    s[at] = ch;
                want = memchr(s, ch, len);
                got = port_memchr(s, ch, len);
                CHECKF(want == got, "memchr len %u align %u at %u", len, oa, at);
                got = cortex_m_memchr(s, ch, len);
                CHECKF(want == got, "Cortex-M3 memchr len %u align %u at %u", len, oa, at);
                if (at < len)
                    s[at] = keep;
            }
            /* strlen: the terminator at every place */
            {
                char str[64];
                memset(str, 'x', sizeof(str));
                str[oa + len] = 0;
                CHECKF(strlen(str + oa) == port_strlen(str + oa), "strlen len %u align %u", len, oa);
            }
            for (ob = 0; ob < 4; ob++) {
                uint8_t *p = a + 8 + oa, *q = b + 8 + ob;
                memcpy(q, p, len);
                CHECKF(port_memcmp(p, q, len) == 0, "memcmp equal len %u align %u/%u", len, oa, ob);
                for (at = 0; at < len; at++) {
                    uint8_t keep = q[at];
                    q[at] = (uint8_t)(keep ^ 0x80);
                    CHECKF(sign(memcmp(p, q, len)) == sign(port_memcmp(p, q, len)),
                           "memcmp len %u align %u/%u at %u", len, oa, ob, at);
                    q[at] = (uint8_t)(keep + 1);
                    CHECKF(sign(memcmp(p, q, len)) == sign(port_memcmp(p, q, len)),
                           "memcmp len %u align %u/%u at %u (+1)", len, oa, ob, at);
                    q[at] = keep;
                }
            }
        }
    }
    /* the checksum: every length to 100 at every alignment, over bytes that
     * make the sum carry (0xff runs) and over mixed ones */
    {
        static uint8_t data[128];
        unsigned fill;
        for (fill = 0; fill < 2; fill++) {
            for (unsigned i = 0; i < sizeof(data); i++)
                data[i] = fill ? 0xff : (uint8_t)(i * 151 + 7);
            for (len = 0; len <= 100; len++)
                for (oa = 0; oa < 4; oa++)
                    CHECKF(cortex_m_chksum(data + oa, (int)len) == pair_sum(data + oa, len),
                           "checksum len %u align %u fill %u", len, oa, fill);
        }
    }
    /* memcpy and memmove: every length and alignment; moves by -12..12 bytes */
    for (len = 0; len <= 40; len++) {
        for (oa = 0; oa < 4; oa++) {
            for (int dist = -12; dist <= 12; dist++) {
                uint8_t want[128], got[128];
                unsigned from = 40 + oa;
                for (unsigned i = 0; i < sizeof(want); i++)
                    want[i] = got[i] = (uint8_t)(i * 7 + 3);
                memmove(want + from + dist, want + from, len);
                port_memmove(got + from + dist, got + from, len);
                CHECKF(memcmp(want, got, sizeof(want)) == 0, "memmove len %u align %u by %d", len, oa, dist);
                if (dist == 0)
                    continue;
                for (unsigned i = 0; i < sizeof(want); i++)
                    want[i] = got[i] = (uint8_t)(i * 5 + 1);
                if ((unsigned)(dist < 0 ? -dist : dist) >= len) { /* no overlap: memcpy's case */
                    memcpy(want + from + dist, want + from, len);
                    port_memcpy(got + from + dist, got + from, len);
                    CHECKF(memcmp(want, got, sizeof(want)) == 0, "memcpy len %u align %u by %d", len, oa, dist);
                }
            }
        }
    }
    /* flash_window_copy: what the window's words hold, little-endian */
    {
        static uint32_t window[32];
        uint8_t flat[128];
        for (unsigned i = 0; i < sizeof(flat); i++)
            flat[i] = (uint8_t)(i * 11 + 5);
        for (unsigned i = 0; i < 32; i++)
            window[i] = flat[4 * i] | (uint32_t)flat[4 * i + 1] << 8 | (uint32_t)flat[4 * i + 2] << 16 |
                        (uint32_t)flat[4 * i + 3] << 24;
        for (len = 0; len <= 40; len++)
            for (unsigned addr = 0; addr < 8; addr++)
                for (oa = 0; oa < 4; oa++) {
                    uint32_t outw[16];
                    uint8_t *out = (uint8_t *)outw + oa;
                    memset(outw, 0xAA, sizeof(outw));
                    flash_window_copy(window, addr, out, len);
                    CHECKF(memcmp(out, flat + addr, len) == 0 && out[len] == 0xAA && (oa == 0 || out[-1] == 0xAA),
                           "flash_window_copy len %u addr %u align %u", len, addr, oa);
                }
    }
    return check_summary();
}
