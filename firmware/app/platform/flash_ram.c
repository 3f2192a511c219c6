#include "platform/flash_ram.h"

#include <string.h>

static int ram_read(void *ctx, uint32_t addr, void *buf, uint32_t len)
{
    struct flash_ram *fr = ctx;
    if (!flash_in_range(&fr->flash, addr, len))
        return FLASH_ERR_RANGE;
    memcpy(buf, fr->mem + addr, len);
    return FLASH_OK;
}

/* NOR rules (flash.h): inside one page, bits only go from 1 to 0. */
static int ram_program(void *ctx, uint32_t addr, const void *buf, uint32_t len)
{
    struct flash_ram *fr = ctx;
    const uint8_t *src = buf;
    uint32_t i;
    if (!flash_in_range(&fr->flash, addr, len))
        return FLASH_ERR_RANGE;
    if (flash_crosses_page(&fr->flash, addr, len))
        return FLASH_ERR_PAGE;
    for (i = 0; i < len; i++)
        if (src[i] & ~fr->mem[addr + i])
            return FLASH_ERR_NOR;
    for (i = 0; i < len; i++)
        fr->mem[addr + i] &= src[i];
    return FLASH_OK;
}

static int ram_erase(void *ctx, uint32_t block)
{
    struct flash_ram *fr = ctx;
    if (block >= fr->flash.geo.size / fr->flash.geo.block_size)
        return FLASH_ERR_RANGE;
    memset(fr->mem + block * fr->flash.geo.block_size, 0xFF, fr->flash.geo.block_size);
    return FLASH_OK;
}

static int ram_sync(void *ctx)
{
    (void)ctx;
    return FLASH_OK;
}

static const struct flash_ops ram_ops = {ram_read, ram_program, ram_erase, ram_sync};

int flash_ram_init(struct flash_ram *fr, uint8_t *mem, uint32_t size, uint32_t block_size,
                   uint32_t page_size)
{
    if (!block_size || !page_size || size % block_size || block_size % page_size)
        return FLASH_ERR_RANGE;
    fr->flash.geo.size = size;
    fr->flash.geo.block_size = block_size;
    fr->flash.geo.page_size = page_size;
    fr->flash.ops = &ram_ops;
    fr->flash.ctx = fr;
    fr->mem = mem;
    memset(mem, 0xFF, size);
    return FLASH_OK;
}
