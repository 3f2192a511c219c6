/* The LiteX port's memchr, memcmp and strlen (firmware/ports/litex/string_scan.c),
 * built here under other names, against the C library's: every length up to
 * 40 at every alignment of both pointers, the byte looked for (or the first
 * difference) at every place, and bytes with the high bit set. Last line:
 * "N passed, M failed". */
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
    return check_summary();
}
