/*
 * memset for the VexRiscv firmware, in place of picolibc's.
 *
 * Debian's picolibc is built for size: its memset stores a byte at a time.
 * crt0 clears .bss with it (2.7 MB here: lwIP's PCB and pbuf pools, the
 * HTTP and DAV states), and with a write-through data cache every byte
 * store is a bus write: about 15 million cycles before main() on every
 * boot. This one stores whole words between the unaligned ends.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* the byte loops below must not be turned back into calls to memset */
#pragma GCC optimize("no-tree-loop-distribute-patterns")

void *memset(void *dst, int c, size_t n)
{
    uint8_t *d = dst;
    uint8_t byte = (uint8_t)c;

    if (n >= 8) {
        uint32_t word = byte * 0x01010101u;
        while ((uintptr_t)d & 3) {
            *d++ = byte;
            n--;
        }
        uint32_t *dw = (uint32_t *)d;
        for (; n >= 16; n -= 16, dw += 4) {
            dw[0] = word;
            dw[1] = word;
            dw[2] = word;
            dw[3] = word;
        }
        for (; n >= 4; n -= 4)
            *dw++ = word;
        d = (uint8_t *)dw;
    }
    while (n--)
        *d++ = byte;
    return dst;
}
