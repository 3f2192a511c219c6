/* The QEMU build's store on a host file, for benchmarks (LM3S_QEMU_SEMIHOST_STORE).
 *
 * QEMU's lm3s6965evb does not emulate flash programming, and its 64 KiB of
 * SRAM leave no room for a store the size of the real chip's (128 KiB of
 * internal flash). This flash (flash.h) keeps the store in a file on the
 * host instead, through ARM semihosting (BKPT 0xAB; QEMU needs
 * `-semihosting-config enable=on,target=native`, and the file is opened
 * relative to QEMU's working directory). It has the internal flash's
 * geometry (internal_flash.h: 1 KiB erase blocks, 128-byte program pages) and
 * keeps the NOR rules, so the store holds in QEMU what it holds on the chip.
 *
 * Instruction counts: a semihosting call is one trapping instruction for the
 * guest, the host does the copying; on the chip a read is a memcpy from the
 * memory-mapped flash and a program or erase stalls the CPU (internal_flash.c).
 * So store I/O costs the guest fewer instructions here than on the chip.
 *
 * Without semihosting enabled, the BKPT faults: only the bench's build
 * (bench/lm3s_scale.py) sets LM3S_QEMU_SEMIHOST_STORE. */
#include "semihost_flash.h"

#include <string.h>

#ifdef LM3S_QEMU_SEMIHOST_STORE

#include "internal_flash.h"

#define SYS_OPEN  0x01
#define SYS_WRITE 0x05
#define SYS_READ  0x06
#define SYS_SEEK  0x0A
#define SYS_FLEN  0x0C
#define MODE_RB_PLUS 3   /* "r+b" */
#define MODE_WB_PLUS 7   /* "w+b" */

static int semihost(int op, void *args)
{
    register int r0 __asm__("r0") = op;
    register void *r1 __asm__("r1") = args;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

static int sh_seek(int fd, uint32_t pos)
{
    uint32_t args[2] = {(uint32_t)fd, pos};
    return semihost(SYS_SEEK, args) == 0 ? FLASH_OK : FLASH_ERR_IO;
}

static int sh_read(int fd, uint32_t pos, void *buf, uint32_t len)
{
    uint32_t args[3] = {(uint32_t)fd, (uint32_t)(uintptr_t)buf, len};
    if (sh_seek(fd, pos) != FLASH_OK)
        return FLASH_ERR_IO;
    return semihost(SYS_READ, args) == 0 ? FLASH_OK : FLASH_ERR_IO;   /* bytes not read */
}

static int sh_write(int fd, uint32_t pos, const void *buf, uint32_t len)
{
    uint32_t args[3] = {(uint32_t)fd, (uint32_t)(uintptr_t)buf, len};
    if (sh_seek(fd, pos) != FLASH_OK)
        return FLASH_ERR_IO;
    return semihost(SYS_WRITE, args) == 0 ? FLASH_OK : FLASH_ERR_IO;  /* bytes not written */
}

static int shf_read(void *ctx, uint32_t addr, void *buf, uint32_t len)
{
    struct semihost_flash *sf = ctx;
    if (!flash_in_range(&sf->flash, addr, len))
        return FLASH_ERR_RANGE;
    return len ? sh_read(sf->fd, addr, buf, len) : FLASH_OK;
}

/* NOR: only 1 -> 0. The page's current bytes are read, checked and ANDed. */
static int shf_program(void *ctx, uint32_t addr, const void *buf, uint32_t len)
{
    struct semihost_flash *sf = ctx;
    uint8_t cur[INTERNAL_FLASH_PAGE];
    const uint8_t *src = buf;
    uint32_t i;
    int rc;
    if (!flash_in_range(&sf->flash, addr, len))
        return FLASH_ERR_RANGE;
    if (!len)
        return FLASH_OK;
    if (flash_crosses_page(&sf->flash, addr, len))
        return FLASH_ERR_PAGE;
    if ((rc = sh_read(sf->fd, addr, cur, len)) != FLASH_OK)
        return rc;
    for (i = 0; i < len; i++) {
        if (src[i] & ~cur[i])
            return FLASH_ERR_NOR;
        cur[i] &= src[i];
    }
    return sh_write(sf->fd, addr, cur, len);
}

static int shf_erase(void *ctx, uint32_t block)
{
    struct semihost_flash *sf = ctx;
    uint8_t ones[INTERNAL_FLASH_PAGE];
    uint32_t off;
    int rc;
    if (block >= sf->flash.geo.size / INTERNAL_FLASH_BLOCK)
        return FLASH_ERR_RANGE;
    memset(ones, 0xFF, sizeof(ones));
    for (off = 0; off < INTERNAL_FLASH_BLOCK; off += sizeof(ones))
        if ((rc = sh_write(sf->fd, block * INTERNAL_FLASH_BLOCK + off, ones, sizeof(ones))) != FLASH_OK)
            return rc;
    return FLASH_OK;
}

static int shf_sync(void *ctx)
{
    (void)ctx;   /* the host's file: written through at every call */
    return FLASH_OK;
}

static const struct flash_ops shf_ops = {shf_read, shf_program, shf_erase, shf_sync};

int semihost_flash_init(struct semihost_flash *sf, const char *name, uint32_t size)
{
    uint32_t open_args[3] = {(uint32_t)(uintptr_t)name, MODE_RB_PLUS, (uint32_t)strlen(name)};
    uint32_t flen_args[1];
    int fd, len;

    if (!size || size % INTERNAL_FLASH_BLOCK)
        return FLASH_ERR_RANGE;
    fd = semihost(SYS_OPEN, open_args);
    if (fd == -1) {            /* no store yet: a new one, all erased */
        open_args[1] = MODE_WB_PLUS;
        fd = semihost(SYS_OPEN, open_args);
        if (fd == -1)
            return FLASH_ERR_IO;
    }
    sf->fd = fd;
    sf->flash.geo.size = size;
    sf->flash.geo.block_size = INTERNAL_FLASH_BLOCK;
    sf->flash.geo.page_size = INTERNAL_FLASH_PAGE;
    sf->flash.ops = &shf_ops;
    sf->flash.ctx = sf;
    flen_args[0] = (uint32_t)fd;
    len = semihost(SYS_FLEN, flen_args);
    if (len < 0 || (uint32_t)len % INTERNAL_FLASH_BLOCK || (uint32_t)len > size)
        return FLASH_ERR_IO;   /* not a store file of this size */
    for (; (uint32_t)len < size; len += INTERNAL_FLASH_BLOCK) {   /* erase what is missing */
        int rc = shf_erase(sf, (uint32_t)len / INTERNAL_FLASH_BLOCK);
        if (rc != FLASH_OK)
            return rc;
    }
    return FLASH_OK;
}

#endif
