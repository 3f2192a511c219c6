/* struct flash (flash.h) over the simulated SoC's flash window.
 *
 * Reads are word loads from the (uncached) window; a program is stores into
 * it (words where aligned, single bytes elsewhere), then a STATUS read, which waits out the page program and reports a NOR
 * violation the host module saw. An erase is one store to ERASE_SECTOR; the
 * chip then stays busy, and the next access (usually sync's STATUS read)
 * waits for it. Operations complete in order, and the host keeps every
 * completed one in its mapped file, so sync() only has to wait for busy. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <generated/mem.h>

#include "flash_sim.h"
#include "flash_window.h"

#ifdef SIM_FLASH_BASE

#define CTRL_OFFSET        0x1000000u
#define REG_ID             0x00
#define REG_SIZE           0x04
#define REG_STATUS         0x08
#define REG_ERASE_SECTOR   0x10
#define FLASH_ID           0x314C4653u  /* "SFL1" */
#define STATUS_NOR         1u
#define STATUS_BAD         2u
#define SECTOR_SIZE        4096u
#define PAGE_SIZE          256u
#define ARRAY_MAX          (16u << 20)

static volatile uint32_t *const window = (volatile uint32_t *)SIM_FLASH_BASE;

static uint32_t reg_read(uint32_t reg)
{
    return window[(CTRL_OFFSET + reg) / 4];
}

static void reg_write(uint32_t reg, uint32_t value)
{
    window[(CTRL_OFFSET + reg) / 4] = value;
}

static int status_to_error(uint32_t status)
{
    if (status & STATUS_NOR)
        return FLASH_ERR_NOR;
    if (status & STATUS_BAD)
        return FLASH_ERR_IO;
    return FLASH_OK;
}

static int sim_read(void *ctx, uint32_t addr, void *buf, uint32_t len)
{
    uint8_t *out = buf;

    if (!flash_in_range(ctx, addr, len))
        return FLASH_ERR_RANGE;
    flash_window_copy(window, addr, out, len);
    return FLASH_OK;
}

static int sim_program(void *ctx, uint32_t addr, const void *buf, uint32_t len)
{
    volatile uint8_t *const window_bytes = (volatile uint8_t *)SIM_FLASH_BASE;
    const uint8_t *in = buf;
    uint32_t end;

    if (!flash_in_range(ctx, addr, len))
        return FLASH_ERR_RANGE;
    if (len == 0)
        return FLASH_OK;
    if (flash_crosses_page(ctx, addr, len))
        return FLASH_ERR_PAGE;
    end = addr + len;
    /* Whole words where both sides allow it; byte stores (one byte lane on
     * the bus) elsewhere, so no byte outside the range is programmed. */
    while (addr < end) {
        if ((addr & 3) == 0 && end - addr >= 4 && ((uintptr_t)in & 3) == 0) {
            window[addr / 4] = *(const uint32_t *)in;
            in += 4;
            addr += 4;
        } else {
            window_bytes[addr++] = *in++;
        }
    }
    return status_to_error(reg_read(REG_STATUS));
}

static int sim_erase(void *ctx, uint32_t block)
{
    const struct flash *f = ctx;

    if (block >= f->geo.size / f->geo.block_size)
        return FLASH_ERR_RANGE;
    reg_write(REG_ERASE_SECTOR, block * f->geo.block_size);
    return FLASH_OK;
}

static int sim_sync(void *ctx)
{
    return status_to_error(reg_read(REG_STATUS));
}

static const struct flash_ops sim_flash_ops = {
    .read = sim_read,
    .program = sim_program,
    .erase = sim_erase,
    .sync = sim_sync,
};

const struct flash *port_flash(void)
{
    static struct flash flash;
    static int probed;
    uint32_t size;

    if (probed)
        return flash.ops ? &flash : NULL;
    probed = 1;
    if (reg_read(REG_ID) != FLASH_ID) {
        printf("flash: no sim flash module attached: using RAM\n");
        return NULL;
    }
    size = reg_read(REG_SIZE);
    if (size == 0 || size > ARRAY_MAX || size % SECTOR_SIZE) {
        printf("flash: sim flash reports an unusable size %lu: using RAM\n", (unsigned long)size);
        return NULL;
    }
    (void)reg_read(REG_STATUS);  /* start with no stale error */
    flash.geo.size = size;
    flash.geo.block_size = SECTOR_SIZE;
    flash.geo.page_size = PAGE_SIZE;
    flash.ops = &sim_flash_ops;
    flash.ctx = &flash;
    printf("flash: sim NOR flash, %lu KiB, 4 KiB sectors\n", (unsigned long)(size >> 10));
    return &flash;
}

#endif
