/* The boards' SPI NOR flash behind LiteX's LiteSPI cores (master CSRs for
 * commands; reads through a chip's memory-mapped window where the SoC maps one,
 * else through its master) as a struct flash for the store: the whole store
 * flash (LiteSPI core `storeflash`, LITEDAV_STOREFLASH: platforms/store_flash.py)
 * when a chip answers on it, else the boot chip's region the SoC names with
 * LITEDAV_FLASH_STORE_BASE/SIZE (platforms/boot_flash.py). */
#ifndef LITEDAV_FLASH_LITESPI_H
#define LITEDAV_FLASH_LITESPI_H

#include "platform/flash.h"

/* The store's flash, probed on the first call (the store flash first, then the
 * boot chip): NULL when no chip answers the JEDEC ID command, the boot chip's
 * region does not fit the chip that does, or the chip stays busy (the caller
 * falls back to a RAM-backed flash). Geometry: 4 KiB sectors, 256-byte pages. */
const struct flash *port_flash(void);

#endif
