/* A flash (flash.h) in RAM with NOR semantics: for targets without a flash
 * chip (the LiteX SoC until it has one, the host without --store). Nothing
 * survives a reset. */
#ifndef LITEDAV_FLASH_RAM_H
#define LITEDAV_FLASH_RAM_H

#include <stdint.h>

#include "platform/flash.h"

struct flash_ram {
    struct flash flash;   /* hand &fr->flash to the store */
    uint8_t *mem;
};

/* mem: size bytes, erased (0xFF) here. Returns FLASH_OK or FLASH_ERR_RANGE
 * for a geometry that does not divide. */
int flash_ram_init(struct flash_ram *fr, uint8_t *mem, uint32_t size, uint32_t block_size,
                   uint32_t page_size);

#endif
