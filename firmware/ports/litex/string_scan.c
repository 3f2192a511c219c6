/*
 * memchr, memcmp and strlen for the VexRiscv firmware, in place of
 * picolibc's, for the reason memcpy.c gives: Debian's picolibc is built for
 * size and goes a byte at a time, about seven cycles a byte. The request
 * parsers and the DAV layer scan and compare every href, header and XML
 * text this way. These go a word at a time once the first pointer is
 * aligned, with the second one's words shifted together when it is not
 * (RISC-V is little-endian), and never read a word that holds none of the
 * bytes asked about.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* the byte loops below must not be turned back into calls to these */
#pragma GCC optimize("no-tree-loop-distribute-patterns")

#define ONES 0x01010101u
#define HIGHS 0x80808080u
/* nonzero when a byte of w is zero (the lowest such byte's high bit is set) */
#define HAS_ZERO(w) (((w) - ONES) & ~(w) & HIGHS)

void *memchr(const void *s, int c, size_t n)
{
    const uint8_t *p = s;
    uint8_t ch = (uint8_t)c;
    uint32_t pattern = ch * ONES;
    while (n && ((uintptr_t)p & 3)) {
        if (*p == ch)
            return (void *)p;
        p++;
        n--;
    }
    for (; n >= 4; p += 4, n -= 4) {
        uint32_t w = *(const uint32_t *)p ^ pattern;
        if (HAS_ZERO(w))
            break;
    }
    for (; n; p++, n--)
        if (*p == ch)
            return (void *)p;
    return NULL;
}

int memcmp(const void *a, const void *b, size_t n)
{
    const uint8_t *p = a, *q = b;
    if (n >= 8) {
        while ((uintptr_t)p & 3) {
            if (*p != *q)
                return *p - *q;
            p++, q++, n--;
        }
        unsigned offset = (uintptr_t)q & 3;
        if (offset == 0) {
            for (; n >= 4; p += 4, q += 4, n -= 4)
                if (*(const uint32_t *)p != *(const uint32_t *)q)
                    break;
        } else {
            /* q's bytes from the words that hold them, as memcpy.c reads its source */
            const uint32_t *qw = (const uint32_t *)(q - offset) + 1;
            unsigned right = offset * 8, left = 32 - right;
            uint32_t low = qw[-1];
            for (; n >= 4; p += 4, q += 4, n -= 4) {
                uint32_t high = *qw++;
                if (*(const uint32_t *)p != ((low >> right) | (high << left)))
                    break;
                low = high;
            }
        }
    }
    for (; n; p++, q++, n--)
        if (*p != *q)
            return *p - *q;
    return 0;
}

size_t strlen(const char *s)
{
    const char *p = s;
    while ((uintptr_t)p & 3) {
        if (!*p)
            return (size_t)(p - s);
        p++;
    }
    for (;; p += 4) {
        uint32_t w = *(const uint32_t *)p;
        if (HAS_ZERO(w))
            break;
    }
    while (*p)
        p++;
    return (size_t)(p - s);
}
