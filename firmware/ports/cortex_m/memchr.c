/*
 * memchr for the Cortex-M3 ports, in place of newlib-nano's byte loop (about
 * five instructions a byte): the request parsers find every line end, colon
 * and comma of a request head with it. Four bytes at a time through unaligned
 * word loads (unaligned.h), so short spans pay no alignment prologue; the word that holds the byte is searched a byte at a
 * time.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "unaligned.h"

/* the byte loop below must not be turned back into a call to memchr */
#pragma GCC optimize("no-tree-loop-distribute-patterns")

#define ONES 0x01010101u
#define HIGHS 0x80808080u

void *memchr(const void *s, int c, size_t n)
{
    const uint8_t *p = s;
    uint8_t ch = (uint8_t)c;
    uint32_t pattern = ch * ONES;

    for (; n >= 4u; p += 4, n -= 4u) {
        uint32_t w = unaligned_load32(p) ^ pattern;
        if ((w - ONES) & ~w & HIGHS)   /* a byte of w is zero: ch is in these four */
            break;
    }
    for (; n; p++, n--)
        if (*p == ch)
            return (void *)p;
    return NULL;
}
