/* Host test of the LiteSPI flash driver (firmware/ports/litex/flash_litespi.c),
 * compiled unchanged against stand-in generated headers (litespi_generated/)
 * whose master CSR accessors drive a byte-level SPI NOR model here: commands
 * are collected while chip select is held and act when it drops, as on a chip
 * (WREN sets WEL; PP and SE need WEL, clear it and leave WIP set for a few
 * status reads; PP wraps inside its page and only clears bits). The window is
 * the model's array itself.
 *
 *   test_litespi_flash SCENARIO
 *
 * chip       a GD25Q16: geometry, reads, programs (odd lengths and addresses,
 *            whole pages), the PAGE/NOR/RANGE errors, nothing programmed or
 *            erased outside the store region (a 24-bit address past the chip
 *            would wrap to the bitstream at 0), erase + sync
 * absent     MISO low (ID 000000): port_flash() is NULL, no write command sent
 * floating   MISO high (ID ffffff): the same
 * small      a 1 MiB chip (ID c84014): the region at 0x180000 does not fit: NULL
 * stuck      WIP never clears after a page program: FLASH_ERR_IO, bounded
 * protected  WREN not taken (WEL stays 0): FLASH_ERR_IO, nothing programmed
 *
 * Ends with "N passed, M failed" (check.h); exit status 0 only when none failed. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "platform/flash.h"
#include "flash_litespi.h"
#include "platform/port.h"

#define CHIP_SIZE    (2u << 20)
#define STORE_OFFSET 0x180000u
#define STORE_SIZE   0x80000u

uint8_t model_chip[CHIP_SIZE] __attribute__((aligned(4)));

static struct {
    uint32_t id;          /* RDID answer; 0 or 0xFFFFFF: no chip (MISO stuck) */
    int miso_stuck;       /* -1: a chip answers; 0/1: MISO stuck at that level */
    int stuck_busy, protect;
    int cs;
    uint32_t len;         /* phyconfig: bits per transfer */
    uint8_t cmd[4 + 512];
    uint32_t n;           /* bytes of the command so far */
    uint32_t rx;
    int rx_valid;
    int wel;
    unsigned busy;        /* status reads that still see WIP */
    unsigned writes, programs, erases, status_reads, bad_config;
} m = { .id = 0xC84015, .miso_stuck = -1 };

static uint64_t cycles;

uint64_t port_cycles(void)
{
    /* every look at the clock: 10 us of 75 MHz, so timeouts come after a bounded loop */
    return cycles += 750;
}

static uint8_t chip_reply(uint32_t n)
{
    if (m.miso_stuck >= 0)
        return m.miso_stuck ? 0xFF : 0x00;
    if (n == 0)
        return 0xFF;
    switch (m.cmd[0]) {
    case 0x9F:
        return n <= 3 ? (uint8_t)(m.id >> (8 * (3 - n))) : 0xFF;
    case 0x05:
        return (m.busy ? 0x01 : 0) | (m.wel ? 0x02 : 0);
    default:
        return 0xFF;
    }
}

static void command_done(void)
{
    uint32_t addr, i;

    if (m.n == 0 || m.miso_stuck >= 0)
        return;
    addr = m.n >= 4 ? (uint32_t)m.cmd[1] << 16 | (uint32_t)m.cmd[2] << 8 | m.cmd[3] : 0;
    switch (m.cmd[0]) {
    case 0x05:
        m.status_reads++;
        if (m.busy && !m.stuck_busy)
            m.busy--;
        break;
    case 0x06:
        if (m.n == 1 && !m.protect && !m.busy)
            m.wel = 1;
        break;
    case 0x02:
        if (!m.wel || m.busy || m.n < 5)
            break;
        for (i = 0; i < m.n - 4; i++) {
            uint32_t at = (addr & ~0xFFu) | ((addr + i) & 0xFF);
            model_chip[at % CHIP_SIZE] &= m.cmd[4 + i];
        }
        m.programs++;
        m.wel = 0;
        m.busy = 3;
        break;
    case 0x20:
        if (!m.wel || m.busy || m.n != 4)
            break;
        memset(model_chip + (addr % CHIP_SIZE & ~0xFFFu), 0xFF, 4096);
        m.erases++;
        m.wel = 0;
        m.busy = 20;
        break;
    }
    if (m.cmd[0] == 0x02 || m.cmd[0] == 0x06 || m.cmd[0] == 0x20)
        m.writes++;
}

void spiflash_core_master_cs_write(uint32_t v)
{
    if (m.cs && !v)
        command_done();
    if (!m.cs && v)
        m.n = 0;
    m.cs = v & 1;
}

void spiflash_core_master_phyconfig_write(uint32_t v)
{
    m.len = v & 0xFF;
    /* one data line, output enabled, whole bytes */
    if ((v >> 8 & 0xF) != 1 || (v >> 16 & 0xFF) != 1 || m.len == 0 || m.len > 32 || m.len % 8)
        m.bad_config++;
}

void spiflash_core_master_rxtx_write(uint32_t v)
{
    uint32_t i, bytes = m.len / 8;

    if (!m.cs)
        m.bad_config++;
    m.rx = 0;
    for (i = 0; i < bytes; i++) {
        uint8_t out = (uint8_t)(v >> (8 * (bytes - 1 - i)));
        m.rx = m.rx << 8 | chip_reply(m.n);
        if (m.n < sizeof(m.cmd))
            m.cmd[m.n] = out;
        m.n++;
    }
    m.rx_valid = 1;
}

uint32_t spiflash_core_master_rxtx_read(void)
{
    m.rx_valid = 0;
    return m.rx;
}

uint32_t spiflash_core_master_status_read(void)
{
    return 1u | (m.rx_valid ? 2u : 0);
}

static int all_ff(uint32_t from, uint32_t to)
{
    for (; from < to; from++)
        if (model_chip[from] != 0xFF)
            return 0;
    return 1;
}

static void scenario_chip(void)
{
    const struct flash *f = port_flash();
    uint8_t data[300], back[300];
    unsigned i, writes;

    CHECK(f != NULL);
    if (!f)
        return;
    CHECK(port_flash() == f);  /* probed once */
    CHECK(f->geo.size == STORE_SIZE && f->geo.block_size == 4096 && f->geo.page_size == 256);
    CHECK(m.writes == 0);      /* probing writes nothing */

    for (i = 0; i < sizeof(data); i++)
        data[i] = (uint8_t)(i * 7 + 3);
    /* odd length at an odd address, from an odd buffer address */
    CHECK(flash_program(f, 3, data + 1, 7) == FLASH_OK);
    CHECK(memcmp(model_chip + STORE_OFFSET + 3, data + 1, 7) == 0);
    CHECK(all_ff(STORE_OFFSET, STORE_OFFSET + 3) && all_ff(STORE_OFFSET + 10, STORE_OFFSET + 256));
    /* a whole page, four bytes a transfer */
    CHECK(flash_program(f, 0x1000, data, 256) == FLASH_OK);
    CHECK(memcmp(model_chip + STORE_OFFSET + 0x1000, data, 256) == 0);
    CHECK(flash_read(f, 0x1000 + 5, back, 200) == FLASH_OK && memcmp(back, data + 5, 200) == 0);
    /* the rest of a programmed page, later: bits only clear */
    CHECK(flash_program(f, 10, data, 20) == FLASH_OK);
    CHECK(memcmp(model_chip + STORE_OFFSET + 10, data, 20) == 0);

    writes = m.writes;
    CHECK(flash_program(f, 250, data, 10) == FLASH_ERR_PAGE);
    /* 0x00 programmed at 3..9; 0xFF over it would need a 0 -> 1 */
    memset(back, 0xFF, 4);
    CHECK(flash_program(f, 4, back, 4) == FLASH_ERR_NOR);
    CHECK(memcmp(model_chip + STORE_OFFSET + 3, data + 1, 7) == 0);
    /* past the region (it ends where the chip ends: a 24-bit address past it wraps to 0) */
    CHECK(flash_program(f, STORE_SIZE - 2, data, 4) == FLASH_ERR_RANGE);
    CHECK(flash_program(f, STORE_SIZE, data, 1) == FLASH_ERR_RANGE);
    CHECK(flash_program(f, 0xFFFFFFF0u, data, 32) == FLASH_ERR_RANGE);
    CHECK(flash_read(f, STORE_SIZE - 1, back, 2) == FLASH_ERR_RANGE);
    CHECK(flash_erase(f, STORE_SIZE / 4096) == FLASH_ERR_RANGE);
    CHECK(m.writes == writes);  /* refused before anything reached the chip */
    CHECK(flash_program(f, STORE_SIZE - 4, data, 4) == FLASH_OK);  /* the last bytes are fine */
    CHECK(all_ff(0, STORE_OFFSET));

    /* erase: taken at once, the next operation waits for WIP */
    CHECK(flash_erase(f, 1) == FLASH_OK);
    CHECK(m.erases == 1 && m.busy > 0);
    CHECK(flash_sync(f) == FLASH_OK && m.busy == 0);
    CHECK(all_ff(STORE_OFFSET + 0x1000, STORE_OFFSET + 0x2000));
    CHECK(model_chip[STORE_OFFSET + 3] == data[1]);  /* sector 0 untouched */
    CHECK(flash_erase(f, 0) == FLASH_OK);
    CHECK(flash_read(f, 0, back, 16) == FLASH_OK && m.busy == 0);  /* a read waits too */
    CHECK(all_ff(STORE_OFFSET, STORE_OFFSET + 16) && back[0] == 0xFF);
    CHECK(all_ff(0, STORE_OFFSET));
    CHECK(m.bad_config == 0);
}

static void scenario_no_flash(void)
{
    CHECK(port_flash() == NULL);
    CHECK(m.writes == 0);
    CHECK(all_ff(0, CHIP_SIZE));
}

static void scenario_stuck(void)
{
    const struct flash *f = port_flash();
    uint8_t data[4] = { 1, 2, 3, 4 };
    uint64_t start;

    CHECK(f != NULL);
    if (!f)
        return;
    m.stuck_busy = 1;
    start = cycles;
    CHECK(flash_program(f, 0, data, 4) == FLASH_ERR_IO);
    /* 10 ms of 75 MHz, give or take one look at the clock */
    CHECKF(cycles - start >= 750000 && cycles - start < 800000, "%llu cycles",
           (unsigned long long)(cycles - start));
    CHECK(m.programs == 1);
}

static void scenario_protected(void)
{
    const struct flash *f = port_flash();
    uint8_t data[4] = { 1, 2, 3, 4 };

    CHECK(f != NULL);
    if (!f)
        return;
    m.protect = 1;
    CHECK(flash_program(f, 0, data, 4) == FLASH_ERR_IO);
    CHECK(flash_erase(f, 0) == FLASH_ERR_IO);
    CHECK(m.programs == 0 && m.erases == 0);
    CHECK(all_ff(0, CHIP_SIZE));
}

int main(int argc, char **argv)
{
    const char *scenario = argc > 1 ? argv[1] : "";

    memset(model_chip, 0xFF, sizeof(model_chip));
    if (!strcmp(scenario, "chip")) {
        scenario_chip();
    } else if (!strcmp(scenario, "absent")) {
        m.miso_stuck = 0;
        scenario_no_flash();
    } else if (!strcmp(scenario, "floating")) {
        m.miso_stuck = 1;
        scenario_no_flash();
    } else if (!strcmp(scenario, "small")) {
        m.id = 0xC84014;
        scenario_no_flash();
    } else if (!strcmp(scenario, "stuck")) {
        scenario_stuck();
    } else if (!strcmp(scenario, "protected")) {
        scenario_protected();
    } else {
        fprintf(stderr, "usage: test_litespi_flash chip|absent|floating|small|stuck|protected\n");
        return 2;
    }
    return check_summary();
}
