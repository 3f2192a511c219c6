/* The boards' SPI NOR flash behind LiteX's LiteSPI core (memory-mapped reads,
 * master CSRs for commands) as a struct flash for the store: the region the SoC
 * names with LITEDAV_FLASH_STORE_BASE/SIZE (platforms/boot_flash.py). */
#ifndef LITEDAV_FLASH_LITESPI_H
#define LITEDAV_FLASH_LITESPI_H

#include "platform/flash.h"

/* The store's flash region, probed on the first call: NULL when no chip
 * answers the JEDEC ID command, or the region does not fit the chip that
 * does (the caller falls back to a RAM-backed flash). Geometry: 4 KiB
 * sectors, 256-byte pages. */
const struct flash *port_flash(void);

#endif
