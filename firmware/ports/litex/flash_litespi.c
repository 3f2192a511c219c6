/* struct flash (flash.h) over a SPI NOR chip behind LiteSPI.
 *
 * Reads are word loads from LiteSPI's memory-mapped window (uncached: the SoC
 * places it where the CPU does not cache, soc/litedav_soc.py). Everything else
 * is a command sent through LiteSPI's master: the firmware holds chip select
 * (spiflash_core_master_cs), sets the length of each transfer in bits
 * (phyconfig: 8 or 32 here, one data line), writes the bits to rxtx and reads
 * back what the chip shifted out meanwhile. The master and the window share the
 * PHY; a window read keeps chip select for a short burst after it, and the
 * master's first transfer waits for that to end.
 *
 * Commands (single-bit SPI, 24-bit addresses, common to SPI NOR chips):
 * 0x9F JEDEC ID, 0x05 read status (bit 0 WIP: busy, bit 1 WEL: write enable
 * latch), 0x06 write enable, 0x02 page program, 0x20 4 KiB sector erase; reads
 * (0x03) come from the window. A program or erase needs write enable first and
 * clears it; the chip is busy (WIP) until done, and ignores everything but a
 * status read meanwhile.
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

#if defined(CSR_SPIFLASH_CORE_BASE) && defined(SPIFLASH_BASE) && defined(LITEDAV_FLASH_STORE_BASE) && \
    defined(LITEDAV_FLASH_STORE_SIZE)

#define CMD_PAGE_PROGRAM  0x02
#define CMD_READ_STATUS   0x05
#define CMD_WRITE_ENABLE  0x06
#define CMD_SECTOR_ERASE  0x20
#define CMD_JEDEC_ID      0x9F
#define STATUS_WIP        0x01
#define STATUS_WEL        0x02

#define SECTOR_SIZE       4096u
#define PAGE_SIZE         256u
#define ADDR_SPACE        (16u << 20)  /* what 24-bit addresses reach */

/* SPI NOR datasheets (the GD25Q16 and S25FL128L class) give worst cases of a
 * few ms per page program and a few hundred ms per 4 KiB erase; these limits
 * leave margin over both. */
#define PROGRAM_TIMEOUT_MS 10u
#define ERASE_TIMEOUT_MS   2000u
/* One master transfer of at most 32 bits takes microseconds. */
#define XFER_TIMEOUT_MS    1u

#define STORE_OFFSET ((uint32_t)((uintptr_t)LITEDAV_FLASH_STORE_BASE - (uintptr_t)SPIFLASH_BASE))
#define STORE_SIZE   ((uint32_t)LITEDAV_FLASH_STORE_SIZE)

struct litespi_flash {
    struct flash flash;
    uint32_t offset;            /* of the store region in the chip */
    int busy_pending;           /* an erase may still be running */
};

static volatile const uint32_t *const window = (volatile const uint32_t *)SPIFLASH_BASE;

static uint64_t ms_to_cycles(uint32_t ms)
{
    return (uint64_t)ms * (CONFIG_CLOCK_FREQUENCY / 1000);
}

/* --- LiteSPI master ---------------------------------------------------------- */

static void select_chip(int on)
{
    spiflash_core_master_cs_write(on ? 1 : 0);
}

/* One transfer of bits (8..32) on one data line, MSB first; returns 0 and what
 * the chip sent in *in, or FLASH_ERR_IO when the master does not answer. */
static int xfer(uint32_t bits, uint32_t out, uint32_t *in)
{
    uint64_t deadline = port_cycles() + ms_to_cycles(XFER_TIMEOUT_MS);

    spiflash_core_master_phyconfig_write(bits << CSR_SPIFLASH_CORE_MASTER_PHYCONFIG_LEN_OFFSET |
                                         1u << CSR_SPIFLASH_CORE_MASTER_PHYCONFIG_WIDTH_OFFSET |
                                         1u << CSR_SPIFLASH_CORE_MASTER_PHYCONFIG_MASK_OFFSET);
    while (!(spiflash_core_master_status_read() & (1u << CSR_SPIFLASH_CORE_MASTER_STATUS_TX_READY_OFFSET)))
        if (port_cycles() > deadline)
            return FLASH_ERR_IO;
    spiflash_core_master_rxtx_write(out);
    while (!(spiflash_core_master_status_read() & (1u << CSR_SPIFLASH_CORE_MASTER_STATUS_RX_READY_OFFSET)))
        if (port_cycles() > deadline)
            return FLASH_ERR_IO;
    *in = spiflash_core_master_rxtx_read();
    if (bits < 32)
        *in &= (1u << bits) - 1;
    return FLASH_OK;
}

/* A whole command: opcode, then up to two more transfers (e.g. the address,
 * then one reply); chip select held across them. */
static int command(uint8_t opcode, uint32_t bits1, uint32_t out1, uint32_t bits2, uint32_t *in2)
{
    uint32_t in;
    int rc;

    select_chip(1);
    rc = xfer(8, opcode, &in);
    if (rc == FLASH_OK && bits1)
        rc = xfer(bits1, out1, &in);
    if (rc == FLASH_OK && bits2)
        rc = xfer(bits2, 0, in2);
    select_chip(0);
    return rc;
}

static int read_status(uint8_t *status)
{
    uint32_t in;
    int rc = command(CMD_READ_STATUS, 0, 0, 8, &in);
    *status = (uint8_t)in;
    return rc;
}

/* Polls WIP until clear; FLASH_ERR_IO after timeout_ms. */
static int wait_ready(uint32_t timeout_ms, const char *what)
{
    uint64_t deadline = port_cycles() + ms_to_cycles(timeout_ms);
    uint8_t status;

    for (;;) {
        if (read_status(&status) != FLASH_OK)
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
    rc = wait_ready(ERASE_TIMEOUT_MS, "erase");
    if (rc == FLASH_OK)
        lf->busy_pending = 0;
    return rc;
}

static int write_enable(struct litespi_flash *lf)
{
    uint32_t in;
    uint8_t status;

    if (command(CMD_WRITE_ENABLE, 0, 0, 0, &in) != FLASH_OK || read_status(&status) != FLASH_OK)
        return FLASH_ERR_IO;
    if (!(status & STATUS_WEL)) {
        /* a write-protected (or vanished) chip */
        printf("flash: write enable not taken (status 0x%02x)\n", status);
        return FLASH_ERR_IO;
    }
    return FLASH_OK;
}

/* --- the window ------------------------------------------------------------ */

/* len bytes from chip offset addr, through the memory-mapped window. */
static void window_read(uint32_t addr, uint8_t *out, uint32_t len)
{
    flash_window_copy(window, addr, out, len);
}

/* --- struct flash ---------------------------------------------------------- */

static int spi_read(void *ctx, uint32_t addr, void *buf, uint32_t len)
{
    struct litespi_flash *lf = ctx;
    int rc;

    if (!flash_in_range(&lf->flash, addr, len))
        return FLASH_ERR_RANGE;
    if ((rc = settle(lf)) != FLASH_OK)
        return rc;
    window_read(lf->offset + addr, buf, len);
    return FLASH_OK;
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
    window_read(chip, now, len);
    for (i = 0; i < len; i++)
        if (in[i] & ~now[i])
            return FLASH_ERR_NOR;
    if ((rc = write_enable(lf)) != FLASH_OK)
        return rc;

    select_chip(1);
    rc = xfer(32, (uint32_t)CMD_PAGE_PROGRAM << 24 | chip, &ignored);
    /* four bytes a transfer where they are, the first one first on the wire */
    for (i = 0; rc == FLASH_OK && i < len; i += bits / 8) {
        if (len - i >= 4) {
            bits = 32;
            word = (uint32_t)in[i] << 24 | (uint32_t)in[i + 1] << 16 | (uint32_t)in[i + 2] << 8 | in[i + 3];
        } else {
            bits = 8;
            word = in[i];
        }
        rc = xfer(bits, word, &ignored);
    }
    select_chip(0);  /* the chip programs when chip select rises */
    if (rc != FLASH_OK)
        return rc;
    if ((rc = wait_ready(PROGRAM_TIMEOUT_MS, "page program")) != FLASH_OK)
        return rc;

    window_read(chip, now, len);
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
    uint32_t ignored;
    int rc;

    if (block >= lf->flash.geo.size / lf->flash.geo.block_size)
        return FLASH_ERR_RANGE;
    if ((rc = settle(lf)) != FLASH_OK || (rc = write_enable(lf)) != FLASH_OK)
        return rc;
    rc = command(CMD_SECTOR_ERASE, 24, lf->offset + block * SECTOR_SIZE, 0, &ignored);
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

/* The chip's size from the JEDEC ID's capacity byte (log2 of bytes for the
 * usual vendors: 0x15 2 MiB GD25Q16, 0x18 16 MiB S25FL128L), 0 when unknown. */
static uint32_t id_capacity(uint32_t id)
{
    uint32_t code = id & 0xFF;
    return code >= 0x10 && code <= 0x1F ? 1u << (code < 0x18 ? code : 0x18) : 0;
}

const struct flash *port_flash(void)
{
    static struct litespi_flash lf;
    static int probed;
    uint32_t id = 0, chip_size;

    if (probed)
        return lf.flash.ops ? &lf.flash : NULL;
    probed = 1;
    if (command(CMD_JEDEC_ID, 0, 0, 24, &id) != FLASH_OK) {
        printf("flash: the SPI master did not answer: store in RAM\n");
        return NULL;
    }
    if (id == 0 || id == 0xFFFFFF) {
        printf("flash: no SPI flash answered (JEDEC ID %06" PRIx32 "): store in RAM\n", id);
        return NULL;
    }
    chip_size = id_capacity(id);
    if (!chip_size)
        chip_size = SPIFLASH_SIZE;  /* a capacity code we do not know: trust the SoC */
    if (STORE_OFFSET % SECTOR_SIZE || STORE_SIZE == 0 || STORE_SIZE % SECTOR_SIZE ||
        STORE_OFFSET > chip_size || STORE_SIZE > chip_size - STORE_OFFSET ||
        STORE_OFFSET + STORE_SIZE > ADDR_SPACE || STORE_OFFSET + STORE_SIZE > SPIFLASH_SIZE) {
        printf("flash: the store region (0x%06" PRIx32 ", %" PRIu32 " KiB) does not fit the %" PRIu32
               " KiB chip (JEDEC ID %06" PRIx32 "): store in RAM\n",
               STORE_OFFSET, STORE_SIZE >> 10, chip_size >> 10, id);
        return NULL;
    }
    lf.offset = STORE_OFFSET;
    /* a reset may have come in the middle of an erase */
    lf.busy_pending = 1;
    if (settle(&lf) != FLASH_OK) {
        printf("flash: the chip stays busy: store in RAM\n");
        return NULL;
    }
    lf.flash.geo.size = STORE_SIZE;
    lf.flash.geo.block_size = SECTOR_SIZE;
    lf.flash.geo.page_size = PAGE_SIZE;
    lf.flash.ops = &litespi_flash_ops;
    lf.flash.ctx = &lf;
    printf("flash: SPI NOR %s, JEDEC ID %06" PRIx32 ", %" PRIu32 " KiB; store at 0x%06" PRIx32
           ", %" PRIu32 " KiB, 4 KiB sectors\n",
           SPIFLASH_MODULE_NAME, id, chip_size >> 10, STORE_OFFSET, STORE_SIZE >> 10);
    return &lf.flash;
}

#endif
