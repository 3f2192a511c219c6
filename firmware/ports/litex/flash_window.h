/* Reading a memory-mapped flash window (the sim flash, LiteSPI's SPI flash):
 * both are uncached word loads, each costly, and with a write-through data
 * cache each store is a bus write. So every window word is loaded once, and
 * out is written in whole words: once out is aligned, window words are
 * shifted together when the flash address is not (records start anywhere;
 * RISC-V is little-endian). Only words holding bytes asked for are loaded. */
#ifndef LITEDAV_FLASH_WINDOW_H
#define LITEDAV_FLASH_WINDOW_H

#include <stdint.h>

static inline uint8_t flash_window_byte(const volatile uint32_t *window, uint32_t addr)
{
    return (uint8_t)(window[addr / 4] >> (8 * (addr & 3)));
}

static inline void flash_window_copy(const volatile uint32_t *window, uint32_t addr, uint8_t *out,
                                     uint32_t len)
{
    for (; len && ((uintptr_t)out & 3); addr++, out++, len--)
        *out = flash_window_byte(window, addr);
    if (len >= 4) {
        uint32_t skip = addr & 3;
        if (skip == 0) {
            for (; len >= 4; addr += 4, out += 4, len -= 4)
                *(uint32_t *)out = window[addr / 4];
        } else {
            uint32_t right = 8 * skip, left = 32 - right, low = window[addr / 4];
            for (; len >= 4; addr += 4, out += 4, len -= 4) {
                uint32_t high = window[addr / 4 + 1];
                *(uint32_t *)out = (low >> right) | (high << left);
                low = high;
            }
        }
    }
    for (; len; addr++, out++, len--)
        *out = flash_window_byte(window, addr);
}

#endif
