#define _XOPEN_SOURCE 700
#include "flash_file.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHUNK 4096

static uint64_t next_random(struct flash_file *ff)
{
    ff->rng ^= ff->rng >> 12;
    ff->rng ^= ff->rng << 25;
    ff->rng ^= ff->rng >> 27;
    return ff->rng * 0x2545f4914f6cdd1dull;
}

static int pread_all(int fd, void *buf, uint32_t len, uint32_t addr)
{
    uint8_t *p = buf;
    while (len) {
        ssize_t n = pread(fd, p, len, (off_t)addr);
        if (n <= 0)
            return FLASH_ERR_IO;
        p += n;
        addr += (uint32_t)n;
        len -= (uint32_t)n;
    }
    return FLASH_OK;
}

static int pwrite_all(int fd, const void *buf, uint32_t len, uint32_t addr)
{
    const uint8_t *p = buf;
    while (len) {
        ssize_t n = pwrite(fd, p, len, (off_t)addr);
        if (n <= 0)
            return FLASH_ERR_IO;
        p += n;
        addr += (uint32_t)n;
        len -= (uint32_t)n;
    }
    return FLASH_OK;
}

static int misuse(struct flash_file *ff, int err, const char *what, uint32_t addr, uint32_t len)
{
    ff->misuse++;
    if (ff->abort_on_misuse) {
        fprintf(stderr, "flash_file: %s at 0x%08x len %u\n", what, (unsigned)addr, (unsigned)len);
        abort();
    }
    return err;
}

static int ff_read(void *ctx, uint32_t addr, void *buf, uint32_t len)
{
    struct flash_file *ff = ctx;
    if (ff->powered_off)
        return FLASH_ERR_POWER;
    if (!flash_in_range(&ff->flash, addr, len))
        return misuse(ff, FLASH_ERR_RANGE, "read out of range", addr, len);
    ff->reads++;
    return pread_all(ff->fd, buf, len, addr);
}

static int ff_program(void *ctx, uint32_t addr, const void *buf, uint32_t len)
{
    struct flash_file *ff = ctx;
    const uint8_t *src = buf;
    uint8_t old[CHUNK];  /* a page is at most CHUNK bytes (checked at open) */
    uint32_t i, keep = len;
    int torn = 0;

    if (ff->powered_off)
        return FLASH_ERR_POWER;
    if (!flash_in_range(&ff->flash, addr, len))
        return misuse(ff, FLASH_ERR_RANGE, "program out of range", addr, len);
    if (len == 0)
        return FLASH_OK;
    if (flash_crosses_page(&ff->flash, addr, len))
        return misuse(ff, FLASH_ERR_PAGE, "program crosses a page", addr, len);
    if (pread_all(ff->fd, old, len, addr))
        return FLASH_ERR_IO;
    for (i = 0; i < len; i++) {
        if (src[i] & ~old[i])
            return misuse(ff, FLASH_ERR_NOR, "program sets a 0 bit to 1", addr + i, len);
    }
    if (ff->power_budget >= 0 && (int64_t)len > ff->power_budget) {
        keep = (uint32_t)ff->power_budget;
        torn = 1;
    }
    for (i = 0; i < keep; i++)
        old[i] &= src[i];
    if (torn) {
        /* the byte being programmed when power went: some of its bits made it */
        old[keep] &= (uint8_t)(src[keep] | (uint8_t)next_random(ff));
        keep++;
    }
    if (pwrite_all(ff->fd, old, keep, addr))
        return FLASH_ERR_IO;
    ff->programs++;
    ff->bytes_programmed += keep;
    if (torn) {
        ff->powered_off = 1;
        return FLASH_ERR_POWER;
    }
    if (ff->power_budget >= 0)
        ff->power_budget -= len;
    return FLASH_OK;
}

static int ff_erase(void *ctx, uint32_t block)
{
    struct flash_file *ff = ctx;
    uint32_t bs = ff->flash.geo.block_size, done, i;
    uint8_t buf[CHUNK];
    int torn = 0;
    unsigned mode = 0;

    if (ff->powered_off)
        return FLASH_ERR_POWER;
    if (block >= ff->flash.geo.size / bs)
        return misuse(ff, FLASH_ERR_RANGE, "erase out of range", block * bs, bs);
    if (ff->power_budget >= 0 && ff->power_budget < (int64_t)ff->erase_cost) {
        torn = 1;
        /* 0 nothing, 1 all, 2-3 random bits, 4 some pages erased, others intact */
        mode = (unsigned)(next_random(ff) % 5);
    }
    for (done = 0; done < bs; done += CHUNK) {
        uint32_t n = bs - done < CHUNK ? bs - done : CHUNK;
        if (!torn || mode == 1) {
            memset(buf, 0xff, n);
        } else if (mode == 4) {
            uint32_t page = ff->flash.geo.page_size, p;
            if (pread_all(ff->fd, buf, n, block * bs + done))
                return FLASH_ERR_IO;
            for (p = 0; p < n; p += page)
                if (next_random(ff) & 1)
                    memset(buf + p, 0xff, n - p < page ? n - p : page);
        } else {
            if (pread_all(ff->fd, buf, n, block * bs + done))
                return FLASH_ERR_IO;
            for (i = 0; i < n && mode >= 2; i++) {
                uint8_t lift = (uint8_t)next_random(ff);
                if (mode == 3)
                    lift &= (uint8_t)next_random(ff);  /* a weaker partial erase */
                buf[i] |= lift;
            }
        }
        if (pwrite_all(ff->fd, buf, n, block * bs + done))
            return FLASH_ERR_IO;
    }
    ff->erases++;
    if (torn) {
        ff->powered_off = 1;
        return FLASH_ERR_POWER;
    }
    if (ff->power_budget >= 0)
        ff->power_budget -= ff->erase_cost;
    return FLASH_OK;
}

static int ff_sync(void *ctx)
{
    struct flash_file *ff = ctx;
    if (ff->powered_off)
        return FLASH_ERR_POWER;
    ff->syncs++;
    if (ff->durable && fsync(ff->fd) != 0)
        return FLASH_ERR_IO;
    return FLASH_OK;
}

static const struct flash_ops flash_file_ops = {
    .read = ff_read, .program = ff_program, .erase = ff_erase, .sync = ff_sync,
};

int flash_file_open(struct flash_file *ff, const char *path, uint32_t size,
                    uint32_t block_size, uint32_t page_size)
{
    struct stat st;
    uint8_t ones[CHUNK];
    uint32_t done;

    memset(ff, 0, sizeof(*ff));
    if (!block_size || !page_size || page_size > CHUNK || block_size % page_size ||
        !size || size % block_size)
        return FLASH_ERR_RANGE;
    ff->fd = open(path, O_RDWR | O_CREAT, 0644);
    if (ff->fd < 0)
        return FLASH_ERR_IO;
    if (fstat(ff->fd, &st) != 0)
        goto fail;
    if (st.st_size != 0 && (uint64_t)st.st_size != size) {
        /* an image of another chip: refused, never resized (that would lose it) */
        close(ff->fd);
        return FLASH_ERR_RANGE;
    }
    if (st.st_size == 0) {
        /* a new chip comes erased */
        memset(ones, 0xff, sizeof(ones));
        for (done = 0; done < size; done += CHUNK) {
            uint32_t n = size - done < CHUNK ? size - done : CHUNK;
            if (pwrite_all(ff->fd, ones, n, done))
                goto fail;
        }
    }
    ff->flash.geo.size = size;
    ff->flash.geo.block_size = block_size;
    ff->flash.geo.page_size = page_size;
    ff->flash.ops = &flash_file_ops;
    ff->flash.ctx = ff;
    ff->durable = 1;
#ifdef NDEBUG
    ff->abort_on_misuse = 0;
#else
    ff->abort_on_misuse = 1;
#endif
    ff->power_budget = -1;
    ff->erase_cost = 64;
    ff->rng = 0x9e3779b97f4a7c15ull;
    return FLASH_OK;
fail:
    close(ff->fd);
    ff->fd = -1;
    return FLASH_ERR_IO;
}

void flash_file_close(struct flash_file *ff)
{
    if (ff->fd >= 0)
        close(ff->fd);
    ff->fd = -1;
}

void flash_file_cut_after(struct flash_file *ff, int64_t bytes, uint64_t seed)
{
    ff->power_budget = bytes;
    ff->rng = (seed * 0x9e3779b97f4a7c15ull) | 1;
}

void flash_file_power_on(struct flash_file *ff)
{
    ff->powered_off = 0;
    ff->power_budget = -1;
}
