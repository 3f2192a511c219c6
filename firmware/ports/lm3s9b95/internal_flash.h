/* The LM3S9B95's internal flash as a flash.h device, for the store.
 *
 * A region of the on-chip flash (1 KiB erase blocks, 32-bit words) is handed
 * to the store as a device of its own: addresses are offsets from the start
 * of the region. Geometry: 1 KiB blocks (the controller's erase size) and
 * 128-byte pages (the 32-word write buffer's window), so one flash.h program
 * is at most one buffered write.
 *
 * Programming and erasing go through the flash controller (FMA/FMD/FMC,
 * FMC2 + FWBn, FCRIS/FCMISC); every operation has finished and been read back
 * before the call returns. sync() programs the one word a program may leave
 * held in RAM (below). */
#ifndef LITEDAV_INTERNAL_FLASH_H
#define LITEDAV_INTERNAL_FLASH_H

#include <stdint.h>

#include "platform/flash.h"

#define INTERNAL_FLASH_BYTES (256u * 1024u)   /* LM3S9B95: 256 KiB at address 0 */
#define INTERNAL_FLASH_BLOCK 1024u            /* erase block */
#define INTERNAL_FLASH_PAGE 128u              /* write buffer: 32 words, 128-byte aligned */

struct internal_flash {
    struct flash flash;   /* hand &f->flash to the store */
    uint32_t base;        /* address of the region in the chip's flash */
    /* A program that ends inside a word whose remaining bytes are still
     * erased leaves that word here instead of programming it: the next
     * program usually continues it (the store appends), and the word is
     * then programmed once. Reads see it; sync(), an erase or a program
     * elsewhere programs it first, so operations still land in order. */
    uint32_t held_addr;   /* chip address of the held word */
    uint32_t held_word;   /* its value once programmed */
    int held;
};

/* The region [base, base + size) of the chip's flash: both multiples of the
 * erase block, inside the 256 KiB. Returns FLASH_OK or FLASH_ERR_RANGE. */
int internal_flash_init(struct internal_flash *f, uint32_t base, uint32_t size);

#endif
