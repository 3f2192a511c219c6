/* The QEMU build's store on a host file through ARM semihosting, with the
 * internal flash's geometry (semihost_flash.c says when and why). Only in a
 * build with LM3S_QEMU_SEMIHOST_STORE, run with QEMU's semihosting on. */
#ifndef LITEDAV_SEMIHOST_FLASH_H
#define LITEDAV_SEMIHOST_FLASH_H

#include <stdint.h>

#include "platform/flash.h"

struct semihost_flash {
    struct flash flash;   /* hand &sf->flash to the store */
    int fd;               /* the host's file handle */
};

/* Opens (or creates, erased) the file `name` in QEMU's working directory as a
 * device of `size` bytes (whole 1 KiB blocks); a shorter file is extended
 * with erased blocks, a longer one is refused (FLASH_ERR_IO). */
int semihost_flash_init(struct semihost_flash *sf, const char *name, uint32_t size);

#endif
