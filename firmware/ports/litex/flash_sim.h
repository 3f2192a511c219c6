/* The simulated SoC's NOR flash (sim/flash.py, sim/modules/flash_file,
 * docs/sim_flash.md) as a struct flash for the store. */
#ifndef LITEDAV_FLASH_SIM_H
#define LITEDAV_FLASH_SIM_H

#include "platform/flash.h"

/* The flash the store lives on, probed on the first call: NULL when the SoC
 * has no sim flash or no host module answers (the caller falls back to a
 * RAM-backed flash). Geometry: 4 KiB erase blocks, 256-byte pages. */
const struct flash *port_flash(void);

#endif
