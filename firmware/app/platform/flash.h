/* The flash device the store (firmware/app/store/) sits on, modelled on SPI NOR.
 *
 * NOR rules every implementation keeps (the host model enforces them):
 *   - erase works on whole erase blocks and sets every byte to 0xFF;
 *   - program only clears bits (1 -> 0) and never crosses a page boundary
 *     (a SPI NOR page program wraps inside its page); a page may be
 *     programmed several times as long as no bit goes from 0 back to 1;
 *   - operations complete in the order they are issued; sync() returns once
 *     everything issued before it is durable (for SPI NOR: the write-in-
 *     progress bit is clear; for a file: fsync).
 * Addresses are byte offsets from the start of the device. */
#ifndef LITEDAV_FLASH_H
#define LITEDAV_FLASH_H

#include <stdint.h>

enum flash_status {
    FLASH_OK = 0,
    FLASH_ERR_RANGE = -1,  /* address/length outside the device */
    FLASH_ERR_PAGE = -2,   /* program crosses a page boundary */
    FLASH_ERR_NOR = -3,    /* program would set a bit from 0 to 1 */
    FLASH_ERR_POWER = -4,  /* power lost: nothing works until restart */
    FLASH_ERR_IO = -5,     /* device or backing-file error */
};

struct flash_geometry {
    uint32_t size;        /* bytes, a multiple of block_size */
    uint32_t block_size;  /* erase block (4 KiB sector or 64 KiB block) */
    uint32_t page_size;   /* program page, 256 on SPI NOR */
};

struct flash_ops {
    int (*read)(void *ctx, uint32_t addr, void *buf, uint32_t len);
    int (*program)(void *ctx, uint32_t addr, const void *buf, uint32_t len);
    int (*erase)(void *ctx, uint32_t block);  /* block index, not address */
    int (*sync)(void *ctx);
};

struct flash {
    struct flash_geometry geo;
    const struct flash_ops *ops;
    void *ctx;
};

/* The checks every implementation makes first: [addr, addr + len) lies on the
 * device (written so that addr + len cannot overflow), and a program of len
 * bytes stays inside one page (an empty one does). */
static inline int flash_in_range(const struct flash *f, uint32_t addr, uint32_t len)
{
    return addr <= f->geo.size && len <= f->geo.size - addr;
}

static inline int flash_crosses_page(const struct flash *f, uint32_t addr, uint32_t len)
{
    return len && addr / f->geo.page_size != (addr + len - 1) / f->geo.page_size;
}

static inline int flash_read(const struct flash *f, uint32_t addr, void *buf, uint32_t len)
{
    return f->ops->read(f->ctx, addr, buf, len);
}

static inline int flash_program(const struct flash *f, uint32_t addr, const void *buf, uint32_t len)
{
    return f->ops->program(f->ctx, addr, buf, len);
}

static inline int flash_erase(const struct flash *f, uint32_t block)
{
    return f->ops->erase(f->ctx, block);
}

static inline int flash_sync(const struct flash *f)
{
    return f->ops->sync(f->ctx);
}

#endif
