/*
 * memcpy and memmove for the VexRiscv firmware, in place of picolibc's.
 *
 * Debian's picolibc is built for size: its memcpy moves a byte at a time
 * unless source and destination share their alignment, and in this firmware
 * they rarely do (TCP payload in a pbuf starts 54 bytes into it, 2 mod 4).
 * With a write-through data cache every byte store is a bus write, so a
 * 1460-byte segment cost about ten thousand cycles. This one stores whole
 * words whatever the source alignment: it loads aligned source words and
 * shifts two of them together (RISC-V is little-endian).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* the byte loops below must not be turned back into calls to memcpy */
#pragma GCC optimize("no-tree-loop-distribute-patterns")

static void copy_bytes(uint8_t *d, const uint8_t *s, size_t n)
{
    while (n--)
        *d++ = *s++;
}

/* Word stores whatever the alignments, front to back; every source word is
 * loaded before the destination word at or below it is stored, so a copy to
 * a lower address that overlaps its source (memmove's) is correct too. No
 * restrict here: the compiler must keep that order. */
static void copy_forward(uint8_t *d, const uint8_t *s, size_t n)
{
    if (n < 16) {
        copy_bytes(d, s, n);
        return;
    }
    /* align the destination: every store below is a word */
    while ((uintptr_t)d & 3) {
        *d++ = *s++;
        n--;
    }
    uint32_t *dw = (uint32_t *)d;
    unsigned offset = (uintptr_t)s & 3;
    size_t words = n / 4;

    if (offset == 0) {
        const uint32_t *sw = (const uint32_t *)s;
        for (; words >= 4; words -= 4, dw += 4, sw += 4) {
            uint32_t a = sw[0], b = sw[1], c = sw[2], e = sw[3];
            dw[0] = a;
            dw[1] = b;
            dw[2] = c;
            dw[3] = e;
        }
        while (words--)
            *dw++ = *sw++;
    } else {
        /* every word read lies within the source's words (s rounded down
         * to a word, up to the word holding the last byte copied here) */
        const uint32_t *sw = (const uint32_t *)(s - offset);
        unsigned right = offset * 8, left = 32 - right;
        uint32_t low = *sw++;
        while (words--) {
            uint32_t high = *sw++;
            *dw++ = (low >> right) | (high << left);
            low = high;
        }
    }
    copy_bytes((uint8_t *)dw, s + (n & ~(size_t)3), n & 3);
}

void *memcpy(void *restrict dst, const void *restrict src, size_t n)
{
    copy_forward(dst, src, n);
    return dst;
}

/* picolibc's moves a byte at a time both ways; a move down (the usual one
 * here: a kept response's chunk closing up to its size line) goes by words */
void *memmove(void *dst, const void *src, size_t n)
{
    uint8_t *d = dst;
    const uint8_t *s = src;
    if (d <= s || d >= s + n) {
        copy_forward(d, s, n);
    } else {
        while (n--)
            d[n] = s[n];
    }
    return dst;
}
