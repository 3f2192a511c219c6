/* Host flash: a SPI NOR model kept in a file, with power-cut injection.
 *
 * The model enforces NOR semantics (flash.h): a program that would set a bit
 * from 0 to 1, cross a page boundary or leave the device is refused (and
 * aborts the program when abort_on_misuse is set, the default outside NDEBUG:
 * the store must never do that). Power loss is injected by a budget of bytes:
 * once `power_budget` more bytes have been programmed the power goes, and the
 * operation in progress is torn:
 *   - a program writes its first bytes within the budget, then one byte gets a
 *     random subset of its programmed bits, and nothing after it;
 *   - an erase (which costs `erase_cost` bytes of budget) leaves the block
 *     half erased: every 0 bit turns to 1 with a random probability, or a
 *     random subset of its pages is erased and the rest intact, or nothing
 *     or everything is erased.
 * After the cut every operation fails with FLASH_ERR_POWER until
 * flash_file_power_on(); the file keeps what was "on the chip". */
#ifndef LITEDAV_FLASH_FILE_H
#define LITEDAV_FLASH_FILE_H

#include <stdint.h>

#include "platform/flash.h"

struct flash_file {
    struct flash flash;        /* hand &ff->flash to the store */
    int fd;
    int durable;               /* fsync on sync(); tests turn it off for speed */
    int abort_on_misuse;
    int64_t power_budget;      /* program bytes left before the cut; < 0: never */
    uint32_t erase_cost;       /* budget bytes one erase consumes */
    int powered_off;
    uint64_t rng;              /* xorshift state for the torn bytes */
    /* counters since open */
    uint64_t programs, bytes_programmed, erases, syncs, reads, misuse;
};

/* Open a flash of the given geometry in `path`, created filled with 0xFF when
 * absent or empty. Returns FLASH_OK, FLASH_ERR_IO, or FLASH_ERR_RANGE for a bad
 * geometry or a file of another size (an image is refused, never resized). */
int flash_file_open(struct flash_file *ff, const char *path, uint32_t size,
                    uint32_t block_size, uint32_t page_size);
void flash_file_close(struct flash_file *ff);

/* Arm a power cut after `bytes` more programmed bytes (< 0 disarms). */
void flash_file_cut_after(struct flash_file *ff, int64_t bytes, uint64_t seed);
/* Restore power (a reboot): clears the cut and disarms the budget. */
void flash_file_power_on(struct flash_file *ff);

#endif
