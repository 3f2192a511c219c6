/* struct flash (flash.h) over a SPI NOR chip behind LiteSPI: the board's boot chip (LiteSPI
 * core `spiflash`, the store in a region of it) or its store flash (core `storeflash`, the
 * whole chip the store; LITEDAV_STOREFLASH, platforms/store_flash.py). One driver serves both:
 * each chip is a description (struct litespi_chip: its master's CSRs, its window if it has
 * one, how much of the chip the driver may use), and every command goes through the
 * description of the chip the store is on.
 *
 * Commands go through LiteSPI's master: the firmware holds chip select
 * (<core>_master_cs), sets the length of each transfer in bits (phyconfig: 8 to
 * 32 here, one data line), writes the bits to rxtx and reads back what the chip
 * shifted out meanwhile. Reads come from the chip's memory-mapped window where the
 * SoC gives it one (<CORE>_BASE in mem.h: word loads, uncached: the SoC places it
 * where the CPU does not cache, soc/litedav_soc.py); the master and the window
 * share the PHY, a window read keeps chip select for a short burst after it, and
 * the master's first transfer waits for that to end. The store flash has no
 * window (LiteSPI built with_mmap=False: the mmap is about 410 of the core's 940
 * LUT4 on the ECP5, platforms/store_flash.py), so its reads are a READ command
 * through the master too, the chip streaming the bytes while chip select is held
 * (master_read()).
 *
 * Commands (single-bit SPI, common to SPI NOR chips): 0x9F JEDEC ID, 0x05 read
 * status (bit 0 WIP: busy, bit 1 WEL: write enable latch), 0x06 write enable;
 * page program and 4 KiB sector erase with 3-byte addresses (0x02, 0x20: the
 * opcode and the address in one 32-bit transfer) or, when the store reaches past
 * the 16 MiB they address or the chip is larger than that, with 4-byte addresses
 * (0x12, 0x21: an 8-bit opcode transfer, then a 32-bit address transfer). The
 * 4-byte opcodes take 4 address bytes whatever the chip's address mode, so a
 * chip left in 4-byte mode by someone else is programmed where it should be.
 * Window reads: the boot chip's with READ 0x03 (3-byte addresses: the store must
 * lie in its first 16 MiB), a store flash window's with READ 0x13 (4-byte: the
 * whole window). Master reads: READ 0x13 and a 4-byte address where programs
 * take one, else READ 0x03 and a 3-byte address. A program or erase needs write
 * enable first and clears it; the chip is busy (WIP) until done, and ignores
 * everything but a status read meanwhile.
 *
 * A program is checked before (it would set a bit from 0 to 1: FLASH_ERR_NOR,
 * nothing programmed, as flash_ram.c does), waited for, and read back (a
 * mismatch: FLASH_ERR_IO), so it returns only once durable. An erase returns
 * once the chip has taken it; the next operation (sync, usually) waits for the
 * chip. Every wait is bounded: a chip that stays busy past the datasheets'
 * worst case gives FLASH_ERR_IO instead of a hang. */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <generated/csr.h>
#include <generated/mem.h>
#include <generated/soc.h>

#include "flash_litespi.h"
#include "flash_window.h"
#include "platform/port.h"

/* The boot chip holds a store region (platforms/boot_flash.py). */
#if defined(CSR_SPIFLASH_CORE_BASE) && defined(SPIFLASH_BASE) && defined(LITEDAV_FLASH_STORE_BASE) && \
    defined(LITEDAV_FLASH_STORE_SIZE)
#define HAVE_BOOT_STORE 1
#endif

/* The SoC has the store flash port: the whole chip on it is the store (platforms/store_flash.py),
 * read through its window when the SoC maps one (STOREFLASH_BASE), else through its master
 * (the boards' SoC: no window), as far as the module's size. */
#ifdef LITEDAV_STOREFLASH
#ifndef CSR_STOREFLASH_CORE_BASE
#error "LITEDAV_STOREFLASH without LiteSPI's storeflash core"
#endif
#ifdef STOREFLASH_BASE
#ifndef STOREFLASH_SIZE
#error "the store flash's window without its size"
#endif
#define STORE_FLASH_LIMIT STOREFLASH_SIZE
#else
#ifndef STOREFLASH_MODULE_TOTAL_SIZE
#error "the store flash without a window nor its module's size"
#endif
#define STORE_FLASH_LIMIT STOREFLASH_MODULE_TOTAL_SIZE
#endif
#if STORE_FLASH_LIMIT < 4096 || STORE_FLASH_LIMIT % 4096
#error "the store flash's window (or module) is not a whole number of 4 KiB sectors"
#endif
#define HAVE_STORE_FLASH 1
#endif

#if defined(HAVE_BOOT_STORE) || defined(HAVE_STORE_FLASH)

/* The read path runs in the mount's scan of every block header: placed with it where the port
 * says (STORE_SCAN_CODE, app_port_config.h); nothing where that is not defined (host tests). */
#ifndef STORE_SCAN_CODE
#define STORE_SCAN_CODE
#endif

#define CMD_PAGE_PROGRAM     0x02
#define CMD_READ             0x03
#define CMD_READ_STATUS      0x05
#define CMD_WRITE_ENABLE     0x06
#define CMD_PAGE_PROGRAM_4B  0x12
#define CMD_READ_4B          0x13
#define CMD_SECTOR_ERASE     0x20
#define CMD_SECTOR_ERASE_4B  0x21
#define CMD_JEDEC_ID         0x9F
#define STATUS_WIP           0x01
#define STATUS_WEL           0x02

#define SECTOR_SIZE       4096u
#define PAGE_SIZE         256u
#define ADDR3_SPACE       (16u << 20)  /* what 3-byte addresses reach */

/* SPI NOR datasheets (the GD25Q16, S25FL128L and MT25QL256 class) give worst cases of a
 * few ms per page program and a few hundred ms per 4 KiB erase; these limits
 * leave margin over both. */
#define PROGRAM_TIMEOUT_MS 10u
#define ERASE_TIMEOUT_MS   2000u
/* One master transfer of at most 32 bits takes microseconds. */
#define XFER_TIMEOUT_MS    1u
/* Status reads before a wait for the master looks at the clock (port_cycles(): three
 * CSR accesses on LiteX). A 32-bit transfer at the boards' sys_clk/4 SPI clock takes
 * about 130 cycles, some 15 status reads: a healthy master answers within these. */
#define QUICK_POLLS        64u

/* A chip behind a LiteSPI core: the core's master CSRs (addresses, and the fields'
 * places as LiteX generates them), its memory-mapped window if the SoC maps one, and
 * how much of the chip the driver may use. */
struct litespi_chip {
    const char *label;         /* before "SPI NOR" in the console line */
    const char *module;        /* the SoC's module name (<CORE>_MODULE_NAME) */
    unsigned long cs, phyconfig, rxtx, status;
    unsigned len_shift;        /* phyconfig: the transfer's length in bits */
    uint32_t one_line;         /* phyconfig: one data line, its output enabled */
    uint32_t tx_ready, rx_ready;
    volatile const uint32_t *window;  /* NULL: no window, reads through the master */
    uint32_t limit;            /* bytes the window maps; without one, the module's size */
    uint32_t read_reach;       /* bytes the reads address */
};

/* The description of LiteSPI core P (SPIFLASH, STOREFLASH) from the SoC's generated headers;
 * reads_ is LITESPI_WINDOW(P, ...) or LITESPI_MASTER_READS(P). */
#define LITESPI_CHIP(P, label_, reads_)                                                                 \
    {                                                                                                  \
        .label = label_, .module = P##_MODULE_NAME,                                                    \
        .cs = CSR_##P##_CORE_MASTER_CS_ADDR, .phyconfig = CSR_##P##_CORE_MASTER_PHYCONFIG_ADDR,        \
        .rxtx = CSR_##P##_CORE_MASTER_RXTX_ADDR, .status = CSR_##P##_CORE_MASTER_STATUS_ADDR,          \
        .len_shift = CSR_##P##_CORE_MASTER_PHYCONFIG_LEN_OFFSET,                                       \
        .one_line = 1u << CSR_##P##_CORE_MASTER_PHYCONFIG_WIDTH_OFFSET |                               \
                    1u << CSR_##P##_CORE_MASTER_PHYCONFIG_MASK_OFFSET,                                 \
        .tx_ready = 1u << CSR_##P##_CORE_MASTER_STATUS_TX_READY_OFFSET,                                \
        .rx_ready = 1u << CSR_##P##_CORE_MASTER_STATUS_RX_READY_OFFSET,                                \
        reads_,                                                                                        \
    }
/* Reads through the window at P##_BASE, its READ addressing read_reach_ bytes. */
#define LITESPI_WINDOW(P, read_reach_) \
    .window = (volatile const uint32_t *)P##_BASE, .limit = P##_SIZE, .read_reach = read_reach_
/* No window: reads through the master, with the address width programs use (4-byte
 * wherever the chip needs it), over as much as the SoC's module has. */
#define LITESPI_MASTER_READS(P) \
    .window = NULL, .limit = P##_MODULE_TOTAL_SIZE, .read_reach = P##_MODULE_TOTAL_SIZE

#ifdef HAVE_BOOT_STORE
/* READ 0x03 (the boards' READ_1_1_1): 3-byte addresses */
static const struct litespi_chip boot_chip =
    LITESPI_CHIP(SPIFLASH, "", LITESPI_WINDOW(SPIFLASH, ADDR3_SPACE));
#define BOOT_STORE_OFFSET ((uint32_t)((uintptr_t)LITEDAV_FLASH_STORE_BASE - (uintptr_t)SPIFLASH_BASE))
#define BOOT_STORE_SIZE   ((uint32_t)LITEDAV_FLASH_STORE_SIZE)
#endif
#ifdef HAVE_STORE_FLASH
#ifdef STOREFLASH_BASE
/* READ 0x13 (READ_1_1_1_4B): the whole window */
static const struct litespi_chip store_chip =
    LITESPI_CHIP(STOREFLASH, "store flash (Pmod) ", LITESPI_WINDOW(STOREFLASH, STOREFLASH_SIZE));
#else
static const struct litespi_chip store_chip =
    LITESPI_CHIP(STOREFLASH, "store flash (Pmod) ", LITESPI_MASTER_READS(STOREFLASH));
#endif
#endif

struct litespi_flash {
    struct flash flash;
    const struct litespi_chip *chip;
    uint32_t offset;            /* of the store region in the chip */
    int addr4;                  /* program and erase with 4-byte addresses */
    int busy_pending;           /* an erase may still be running */
};

static uint64_t ms_to_cycles(uint32_t ms)
{
    return (uint64_t)ms * (CONFIG_CLOCK_FREQUENCY / 1000);
}

/* --- LiteSPI master ---------------------------------------------------------- */

static void select_chip(const struct litespi_chip *c, int on)
{
    csr_write_simple(on ? 1 : 0, c->cs);
}

/* wait_master() past its quick looks: by the clock, out of the callers' loops. */
static __attribute__((noinline)) int wait_master_slow(unsigned long status, uint32_t bit)
{
    uint64_t deadline = port_cycles() + ms_to_cycles(XFER_TIMEOUT_MS);

    while (!(csr_read_simple(status) & bit))
        if (port_cycles() > deadline)
            return FLASH_ERR_IO;
    return FLASH_OK;
}

/* Waits for bit (tx_ready, rx_ready) in the master's status CSR: FLASH_OK, or
 * FLASH_ERR_IO when it stays clear for XFER_TIMEOUT_MS. Inline, the clock read only
 * after QUICK_POLLS looks. */
static inline int wait_master(unsigned long status, uint32_t bit)
{
    unsigned i;

    for (i = 0; i < QUICK_POLLS; i++)
        if (csr_read_simple(status) & bit)
            return FLASH_OK;
    return wait_master_slow(status, bit);
}

/* One transfer of bits (8..32) on one data line, MSB first; returns 0 and what
 * the chip sent in *in (in its low bits), or FLASH_ERR_IO when the master does
 * not answer. */
static STORE_SCAN_CODE int xfer(const struct litespi_chip *c, uint32_t bits, uint32_t out, uint32_t *in)
{
    csr_write_simple(bits << c->len_shift | c->one_line, c->phyconfig);
    if (wait_master(c->status, c->tx_ready) != FLASH_OK)
        return FLASH_ERR_IO;
    csr_write_simple(out, c->rxtx);
    if (wait_master(c->status, c->rx_ready) != FLASH_OK)
        return FLASH_ERR_IO;
    /* the PHY's shift register keeps earlier bits above a shorter transfer's */
    *in = (uint32_t)csr_read_simple(c->rxtx);
    if (bits < 32)
        *in &= (1u << bits) - 1;
    return FLASH_OK;
}

/* A whole command: opcode, then up to two more transfers (e.g. the address,
 * then one reply); chip select held across them. */
static int command(const struct litespi_chip *c, uint8_t opcode, uint32_t bits1, uint32_t out1,
                   uint32_t bits2, uint32_t *in2)
{
    uint32_t in;
    int rc;

    select_chip(c, 1);
    rc = xfer(c, 8, opcode, &in);
    if (rc == FLASH_OK && bits1)
        rc = xfer(c, bits1, out1, &in);
    if (rc == FLASH_OK && bits2)
        rc = xfer(c, bits2, 0, in2);
    select_chip(c, 0);
    return rc;
}

/* The opcode and the address of a read, a page program or a sector erase, chip
 * select held by the caller: opcode3 with a 3-byte address in one 32-bit
 * transfer, or opcode4 and then a 4-byte address. Either way the last transfer
 * was 32 bits long, and phyconfig says so. */
static STORE_SCAN_CODE int send_addressed(const struct litespi_flash *lf, uint8_t opcode3, uint8_t opcode4,
                                          uint32_t addr)
{
    uint32_t ignored;
    int rc;

    if (!lf->addr4)
        return xfer(lf->chip, 32, (uint32_t)opcode3 << 24 | addr, &ignored);
    rc = xfer(lf->chip, 8, opcode4, &ignored);
    return rc == FLASH_OK ? xfer(lf->chip, 32, addr, &ignored) : rc;
}

static int read_status(const struct litespi_chip *c, uint8_t *status)
{
    uint32_t in;
    int rc = command(c, CMD_READ_STATUS, 0, 0, 8, &in);
    *status = (uint8_t)in;
    return rc;
}

/* Polls WIP until clear; FLASH_ERR_IO after timeout_ms. */
static int wait_ready(const struct litespi_chip *c, uint32_t timeout_ms, const char *what)
{
    uint64_t deadline = port_cycles() + ms_to_cycles(timeout_ms);
    uint8_t status;

    for (;;) {
        if (read_status(c, &status) != FLASH_OK)
            return FLASH_ERR_IO;
        if (!(status & STATUS_WIP))
            return FLASH_OK;
        if (port_cycles() > deadline) {
            printf("flash: %s: still busy after %" PRIu32 " ms (status 0x%02x)\n", what, timeout_ms,
                   status);
            return FLASH_ERR_IO;
        }
    }
}

/* An erase left running must finish before the next operation (only an erase
 * is left running: a program is waited for at once). */
static int settle(struct litespi_flash *lf)
{
    int rc;

    if (!lf->busy_pending)
        return FLASH_OK;
    rc = wait_ready(lf->chip, ERASE_TIMEOUT_MS, "erase");
    if (rc == FLASH_OK)
        lf->busy_pending = 0;
    return rc;
}

static int write_enable(const struct litespi_chip *c)
{
    uint32_t in;
    uint8_t status;

    if (command(c, CMD_WRITE_ENABLE, 0, 0, 0, &in) != FLASH_OK || read_status(c, &status) != FLASH_OK)
        return FLASH_ERR_IO;
    if (!(status & STATUS_WEL)) {
        /* a write-protected (or vanished) chip */
        printf("flash: write enable not taken (status 0x%02x)\n", status);
        return FLASH_ERR_IO;
    }
    return FLASH_OK;
}

/* --- reads ------------------------------------------------------------------ */

/* len (> 0) bytes from chip address addr through the master, one READ command: the
 * chip sends the bytes from addr on for as long as chip select is held. The whole
 * words come in 32-bit transfers, the first byte on the wire the top byte of the
 * rxtx word (as the program path sends them); the 1 to 3 bytes left in one shorter
 * transfer. phyconfig is written only where the length changes: the address
 * transfer leaves it at 32 bits, so only a ragged tail writes it again. Each
 * word's transfer starts as soon as the previous word is read (the master's TX
 * buffer emptied when that transfer ended, before its word reached RX: no tx_ready
 * look), and its bytes are stored while the next one shifts in. A master that
 * stops answering gives FLASH_ERR_IO; chip select is released either way. */
static int master_read(const struct litespi_flash *lf, uint32_t addr, uint8_t *out, uint32_t len)
{
    const struct litespi_chip *c = lf->chip;
    const unsigned long rxtx = c->rxtx, status = c->status;
    const uint32_t rx_ready = c->rx_ready;
    uint32_t words = len >> 2, tail = len & 3, word, last;
    int rc;

    select_chip(c, 1);
    rc = send_addressed(lf, CMD_READ, CMD_READ_4B, addr);
    if (rc == FLASH_OK && words) {
        csr_write_simple(0, rxtx);  /* the first word's transfer */
        while (words) {
            if ((rc = wait_master(status, rx_ready)) != FLASH_OK)
                break;
            word = (uint32_t)csr_read_simple(rxtx);
            if (--words)
                csr_write_simple(0, rxtx);  /* the next one shifts in meanwhile */
            out[0] = (uint8_t)(word >> 24);
            out[1] = (uint8_t)(word >> 16);
            out[2] = (uint8_t)(word >> 8);
            out[3] = (uint8_t)word;
            out += 4;
        }
    }
    if (rc == FLASH_OK && tail) {
        if ((rc = xfer(c, tail * 8, 0, &last)) == FLASH_OK)
            for (; tail; tail--)
                *out++ = (uint8_t)(last >> 8 * (tail - 1));
    }
    select_chip(c, 0);
    return rc;
}

/* len bytes from chip address addr: through the chip's memory-mapped window if it
 * has one, else through its master. */
static STORE_SCAN_CODE int chip_read(const struct litespi_flash *lf, uint32_t addr, uint8_t *out, uint32_t len)
{
    if (lf->chip->window) {
        flash_window_copy(lf->chip->window, addr, out, len);
        return FLASH_OK;
    }
    return len ? master_read(lf, addr, out, len) : FLASH_OK;
}

/* --- struct flash ---------------------------------------------------------- */

static STORE_SCAN_CODE int spi_read(void *ctx, uint32_t addr, void *buf, uint32_t len)
{
    struct litespi_flash *lf = ctx;
    int rc;

    if (!flash_in_range(&lf->flash, addr, len))
        return FLASH_ERR_RANGE;
    if ((rc = settle(lf)) != FLASH_OK)
        return rc;
    return chip_read(lf, lf->offset + addr, buf, len);
}

static int spi_program(void *ctx, uint32_t addr, const void *buf, uint32_t len)
{
    struct litespi_flash *lf = ctx;
    const uint8_t *in = buf;
    uint8_t now[PAGE_SIZE];
    uint32_t chip, i, bits, word, ignored;
    int rc;

    if (!flash_in_range(&lf->flash, addr, len))
        return FLASH_ERR_RANGE;
    if (len == 0)
        return FLASH_OK;
    if (flash_crosses_page(&lf->flash, addr, len))
        return FLASH_ERR_PAGE;
    if ((rc = settle(lf)) != FLASH_OK)
        return rc;
    chip = lf->offset + addr;
    if ((rc = chip_read(lf, chip, now, len)) != FLASH_OK)
        return rc;
    for (i = 0; i < len; i++)
        if (in[i] & ~now[i])
            return FLASH_ERR_NOR;
    if ((rc = write_enable(lf->chip)) != FLASH_OK)
        return rc;

    select_chip(lf->chip, 1);
    rc = send_addressed(lf, CMD_PAGE_PROGRAM, CMD_PAGE_PROGRAM_4B, chip);
    /* four bytes a transfer where they are, the first one first on the wire */
    for (i = 0; rc == FLASH_OK && i < len; i += bits / 8) {
        if (len - i >= 4) {
            bits = 32;
            word = (uint32_t)in[i] << 24 | (uint32_t)in[i + 1] << 16 | (uint32_t)in[i + 2] << 8 | in[i + 3];
        } else {
            bits = 8;
            word = in[i];
        }
        rc = xfer(lf->chip, bits, word, &ignored);
    }
    select_chip(lf->chip, 0);  /* the chip programs when chip select rises */
    if (rc != FLASH_OK)
        return rc;
    if ((rc = wait_ready(lf->chip, PROGRAM_TIMEOUT_MS, "page program")) != FLASH_OK)
        return rc;

    if ((rc = chip_read(lf, chip, now, len)) != FLASH_OK)
        return rc;
    for (i = 0; i < len; i++) {
        if (now[i] != in[i]) {
            printf("flash: program at 0x%06" PRIx32 " read back 0x%02x, expected 0x%02x\n", chip + i,
                   now[i], in[i]);
            return FLASH_ERR_IO;
        }
    }
    return FLASH_OK;
}

static int spi_erase(void *ctx, uint32_t block)
{
    struct litespi_flash *lf = ctx;
    int rc;

    if (block >= lf->flash.geo.size / lf->flash.geo.block_size)
        return FLASH_ERR_RANGE;
    if ((rc = settle(lf)) != FLASH_OK || (rc = write_enable(lf->chip)) != FLASH_OK)
        return rc;
    select_chip(lf->chip, 1);
    rc = send_addressed(lf, CMD_SECTOR_ERASE, CMD_SECTOR_ERASE_4B, lf->offset + block * SECTOR_SIZE);
    select_chip(lf->chip, 0);  /* the chip starts erasing when chip select rises */
    if (rc != FLASH_OK)
        return rc;
    lf->busy_pending = 1;
    return FLASH_OK;
}

static int spi_sync(void *ctx)
{
    return settle(ctx);
}

static const struct flash_ops litespi_flash_ops = {
    .read = spi_read,
    .program = spi_program,
    .erase = spi_erase,
    .sync = spi_sync,
};

/* --- probing ----------------------------------------------------------------- */

/* The chip's size from the JEDEC ID's capacity byte, 0 when unknown. Codes
 * 0x10..0x1A are log2 of the size in bytes (64 KiB .. 64 MiB: 0x15 2 MiB GD25Q16,
 * 0x18 16 MiB S25FL128L, 0x19 32 MiB MT25QL256, 0x1A 64 MiB MX25L51245G); Micron,
 * Winbond and Spansion go on from 0x19 to 0x20 for 64 MiB (MT25QL512 20BA20,
 * W25Q512 EF4020, S25FL512S 010220). Larger codes are not decoded: no window
 * or module here is larger than 64 MiB, and the caller never uses more than the
 * chip's limit anyway. */
static uint32_t id_capacity(uint32_t id)
{
    uint32_t code = id & 0xFF;

    if (code >= 0x10 && code <= 0x1A)
        return 1u << code;
    if (code == 0x20)
        return 64u << 20;
    return 0;
}

/* The JEDEC ID of chip c into *id; FLASH_ERR_IO when its master does not answer. */
static int read_id(const struct litespi_chip *c, uint32_t *id)
{
    *id = 0;
    return command(c, CMD_JEDEC_ID, 0, 0, 24, id);
}

/* The store at [offset, offset + size) of chip c (JEDEC ID id, chip_size bytes),
 * the region checked by the caller: waits for an erase a reset may have cut into
 * (FLASH_ERR_IO when the chip stays busy), then sets lf up and says so. */
static int attach(struct litespi_flash *lf, const struct litespi_chip *c, uint32_t id, uint32_t chip_size,
                  uint32_t offset, uint32_t size)
{
    lf->chip = c;
    lf->offset = offset;
    lf->addr4 = chip_size > ADDR3_SPACE || offset + size > ADDR3_SPACE;
    lf->busy_pending = 1;
    if (settle(lf) != FLASH_OK)
        return FLASH_ERR_IO;
    lf->flash.geo.size = size;
    lf->flash.geo.block_size = SECTOR_SIZE;
    lf->flash.geo.page_size = PAGE_SIZE;
    lf->flash.ops = &litespi_flash_ops;
    lf->flash.ctx = lf;
    printf("flash: %sSPI NOR %s, JEDEC ID %06" PRIx32 ", %" PRIu32 " KiB; store at 0x%06" PRIx32
           ", %" PRIu32 " KiB, 4 KiB sectors\n",
           c->label, c->module, id, chip_size >> 10, offset, size >> 10);
    return FLASH_OK;
}

/* The part of a chip_size chip that the driver reads on chip c: as far as its window
 * maps and its READ reaches, or without a window, as far as the SoC's module goes. */
static uint32_t readable(const struct litespi_chip *c, uint32_t chip_size)
{
    uint32_t n = chip_size;

    if (n > c->limit)
        n = c->limit;
    if (n > c->read_reach)
        n = c->read_reach;
    return n;
}

#ifdef HAVE_STORE_FLASH
enum { STORE_FLASH_NONE, STORE_FLASH_FOUND, STORE_FLASH_FAILED };

/* The store flash, if a chip answers on it: the whole chip (as far as the window
 * reaches, or without one the module's size) is the store. NONE: nothing answered
 * (the caller falls back to the boot chip); FAILED: a chip answered but cannot hold
 * the store. */
static int probe_store_flash(struct litespi_flash *lf)
{
    const struct litespi_chip *c = &store_chip;
#ifdef HAVE_BOOT_STORE
    const char *fallback = "store on the boot flash";
#else
    const char *fallback = "store in RAM";
#endif
    uint32_t id, chip_size;

    if (read_id(c, &id) != FLASH_OK) {
        printf("flash: the store flash's SPI master did not answer: %s\n", fallback);
        return STORE_FLASH_NONE;
    }
    if (id == 0 || id == 0xFFFFFF) {
        printf("flash: no store flash answered (JEDEC ID %06" PRIx32 "): %s\n", id, fallback);
        return STORE_FLASH_NONE;
    }
    chip_size = id_capacity(id);
    if (!chip_size)
        chip_size = c->limit;  /* a capacity code we do not know: trust the SoC */
    /* a chip that answers is the store: a busy one is not traded for the boot chip's
     * region, which would hide the calendars on it until the next boot */
    if (attach(lf, c, id, chip_size, 0, readable(c, chip_size) / SECTOR_SIZE * SECTOR_SIZE) != FLASH_OK) {
        printf("flash: the store flash stays busy: store in RAM\n");
        return STORE_FLASH_FAILED;
    }
    return STORE_FLASH_FOUND;
}
#endif

#ifdef HAVE_BOOT_STORE
/* The boot chip's store region (platforms/boot_flash.py). */
static int probe_boot_flash(struct litespi_flash *lf)
{
    const struct litespi_chip *c = &boot_chip;
    uint32_t id, chip_size, reach;

    if (read_id(c, &id) != FLASH_OK) {
        printf("flash: the SPI master did not answer: store in RAM\n");
        return FLASH_ERR_IO;
    }
    if (id == 0 || id == 0xFFFFFF) {
        printf("flash: no SPI flash answered (JEDEC ID %06" PRIx32 "): store in RAM\n", id);
        return FLASH_ERR_IO;
    }
    chip_size = id_capacity(id);
    if (!chip_size)
        chip_size = c->limit;  /* a capacity code we do not know: trust the SoC */
    reach = readable(c, chip_size);
    if (BOOT_STORE_OFFSET % SECTOR_SIZE || BOOT_STORE_SIZE == 0 || BOOT_STORE_SIZE % SECTOR_SIZE ||
        BOOT_STORE_OFFSET > reach || BOOT_STORE_SIZE > reach - BOOT_STORE_OFFSET) {
        printf("flash: the store region (0x%06" PRIx32 ", %" PRIu32 " KiB) does not fit the %" PRIu32
               " KiB chip (JEDEC ID %06" PRIx32 "): store in RAM\n",
               BOOT_STORE_OFFSET, BOOT_STORE_SIZE >> 10, chip_size >> 10, id);
        return FLASH_ERR_RANGE;
    }
    if (attach(lf, c, id, chip_size, BOOT_STORE_OFFSET, BOOT_STORE_SIZE) != FLASH_OK) {
        printf("flash: the chip stays busy: store in RAM\n");
        return FLASH_ERR_IO;
    }
    return FLASH_OK;
}
#endif

const struct flash *port_flash(void)
{
    /* Read on every flash access, and once per block by the mount's scan of the block headers
     * (8,192 in a row on the store flash). The data cache is 4 KiB and direct-mapped, and the
     * stack starts at the top of main RAM, a multiple of 4 KiB: at the start of a 4 KiB block,
     * lf takes the cache's first lines, which the scan's stack frames (the top few hundred
     * bytes) never share. Placed anywhere in .bss it could share a line with one of them and
     * be evicted on every block. Costs up to 4 KiB of padding in .bss. */
    static struct litespi_flash lf __attribute__((aligned(4096)));
    static int probed;

    if (probed)
        return lf.flash.ops ? &lf.flash : NULL;
    probed = 1;
#ifdef HAVE_STORE_FLASH
    switch (probe_store_flash(&lf)) {
    case STORE_FLASH_FOUND:
        return &lf.flash;
    case STORE_FLASH_FAILED:
        return NULL;
    }
#endif
#ifdef HAVE_BOOT_STORE
    if (probe_boot_flash(&lf) == FLASH_OK)
        return &lf.flash;
#endif
    return NULL;
}

#endif
