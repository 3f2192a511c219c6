/* Host test of the LiteSPI flash driver (firmware/ports/litex/flash_litespi.c),
 * compiled unchanged against stand-in generated headers (litespi_generated/)
 * whose master CSRs (csr_read_simple/csr_write_simple) drive byte-level SPI NOR
 * models here, one a LiteSPI core: commands are collected while chip select is
 * held and act when it drops, as on a chip (WREN sets WEL; PP and SE need WEL,
 * clear it and leave WIP set for a few status reads; PP wraps inside its page and
 * only clears bits); READ (0x03, 3-byte address; 0x13, 4-byte) answers the bytes
 * from its address on for as long as chip select is held. A transfer ends at the
 * second status read after it (the first sees neither tx_ready nor rx_ready, as
 * while LiteSPI's PHY shifts); rxtx then reads the model's PHY shift register
 * (earlier bits above a short transfer's, as LiteSPI's), and
 * the model counts what a master sees: transfers, phyconfig writes, commands by
 * opcode, replies left unread or read before they came, reads while the chip is
 * busy. A window is the model's array itself.
 *
 * The boot chip (core spiflash) is a GD25Q16 read through its window: 3-byte PP
 * 0x02 and SE 0x20, nothing else (no READ: its window reads). Built with
 * -DLITEDAV_TEST_STOREFLASH the SoC has the store flash too (core storeflash,
 * LITEDAV_STOREFLASH), a 32 MiB MT25QL256 in its power-on 3-byte address mode:
 * 0x02/0x20/0x03 take 3-byte addresses (the lowest 16 MiB), 0x12/0x21/0x13
 * 4-byte ones. Its core is master only, as the boards' SoC builds it (no
 * STOREFLASH_BASE: every read a READ through the master); with
 * -DLITEDAV_TEST_STOREFLASH_WINDOW too, it has LiteSPI's window as well (reads
 * from the array, no READ sent). Anything else a chip is sent counts as unknown,
 * which fails every scenario.
 *
 *   test_litespi_flash SCENARIO
 *
 * Both builds (in the store flash build, no chip answers on the store flash: the
 * Pmod's MISO pulled up, ID ffffff; the driver falls back to the boot chip):
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
 * The store flash build only:
 * store_chip       the MT25QL256 answers: the store is the whole chip; programs and
 *                  erases below and above 16 MiB land at their chip address with
 *                  0x12/0x21 (the lowest 16 MiB untouched by those above), reads
 *                  above 16 MiB with 0x13, a program's check and read-back two
 *                  reads (none with the window), the boot chip is never sent a
 *                  command
 * store_read       ragged lengths (0..17, 255, 257) at odd and even addresses into
 *                  odd and even buffer addresses, across a page, across 16 MiB,
 *                  above it and at the chip's end: byte for byte the model's, the
 *                  bytes around untouched, one READ each; a 4 KiB read is ONE READ
 *                  of 2 + 1024 transfers and 2 phyconfig writes (one more of each
 *                  for a ragged tail)
 * store_16mib      a 16 MiB chip (ID 20ba18) on the store flash: 3-byte commands,
 *                  READ 0x03
 * store_large      a 64 MiB chip (ID 20ba20): the store is the 32 MiB the module
 *                  (or the window) has, 4-byte commands
 * store_absent     MISO low on the store flash (ID 000000): the chip scenario on
 *                  the boot chip's region, the store flash sent nothing but RDID
 * store_dead       the store flash's master never finishes a transfer: the boot
 *                  chip's region after 1 ms, chip select released
 * store_stuck      WIP never clears after a page program above 16 MiB: FLASH_ERR_IO, bounded
 * store_protected  WREN not taken: FLASH_ERR_IO, nothing programmed or erased
 * store_readback   a bit that stays 1 where a program clears it: the read-back
 *                  catches it, FLASH_ERR_IO
 * store_busy       the store flash stays busy from boot: NULL (store in RAM), bounded,
 *                  the boot chip untouched
 * store_stall      (no window only) the master stops answering in the middle of a
 *                  4 KiB read's words, then in a ragged tail: FLASH_ERR_IO after
 *                  1 ms each, chip select released, the next read fine
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

#include <generated/csr.h>

#define CHIP_SIZE    (2u << 20)
#define STORE_OFFSET 0x180000u
#define STORE_SIZE   0x80000u
#define STORE_CHIP_SIZE (32u << 20)
#define MIB16        (16u << 20)

uint8_t model_chip[CHIP_SIZE] __attribute__((aligned(4)));
#ifdef LITEDAV_TEST_STOREFLASH
uint8_t model_store_chip[STORE_CHIP_SIZE] __attribute__((aligned(4)));
#ifdef LITEDAV_TEST_STOREFLASH_WINDOW
static const int store_master_reads = 0;
#else
static const int store_master_reads = 1;  /* the SoC's: no window */
#endif
#endif

/* One SPI NOR chip on one LiteSPI master. */
struct nor {
    uint8_t *array;
    uint32_t size;        /* a power of two: addresses past it wrap */
    int four_byte;        /* takes 0x12/0x21 (a chip over 16 MiB) */
    uint32_t id;          /* RDID answer */
    int miso_stuck;       /* -1: a chip answers; 0/1: MISO stuck at that level (no chip) */
    int stuck_busy, protect;
    uint32_t weak_at;     /* a program leaves weak_bits set at this address (a worn cell) */
    uint8_t weak_bits;
    int cs;
    uint32_t len;         /* phyconfig: bits per transfer */
    uint8_t cmd[5 + 512];
    uint32_t n;           /* bytes of the command so far */
    uint32_t sr;          /* the PHY's shift register: what rxtx reads */
    int rx_valid;
    int wel;
    unsigned busy;        /* status reads that still see WIP */
    unsigned in_flight;   /* status reads until the transfer ends (0: none under way) */
    unsigned stall_from;  /* 0, or the transfer (from 1) from which the master hangs */
    int hung;             /* a transfer never ends: status shows neither ready */
    unsigned commands, writes, programs, erases, reads, status_reads, bad_config, unknown;
    unsigned xfers, phyconfig_writes;
    unsigned overruns;    /* a transfer started with the last reply unread */
    unsigned stale_reads; /* rxtx read with no reply in it */
    unsigned lost_writes; /* rxtx written while the master could not take it */
    unsigned busy_reads;  /* READ data asked of a busy chip (it answers nothing) */
    unsigned opcodes[256];  /* commands sent, by opcode (chip present or not) */
};

static struct nor boot = { .array = model_chip, .size = CHIP_SIZE, .id = 0xC84015, .miso_stuck = -1 };
#ifdef LITEDAV_TEST_STOREFLASH
/* the Pmod's MISO is pulled up: without a chip the store flash reads ffffff */
static struct nor store = { .array = model_store_chip, .size = STORE_CHIP_SIZE, .four_byte = 1,
                            .id = 0x20BA19, .miso_stuck = 1 };
#endif

static unsigned bad_csr;  /* accesses to no master's CSR */

static uint64_t cycles;

uint64_t port_cycles(void)
{
    /* every look at the clock: 10 us of 75 MHz, so timeouts come after a bounded loop */
    return cycles += 750;
}

/* The address of an addressed command: 3 or 4 bytes after the opcode. */
static uint32_t cmd_address(const struct nor *c, uint32_t bytes)
{
    uint32_t addr = 0, i;

    for (i = 1; i <= bytes; i++)
        addr = addr << 8 | c->cmd[i];
    return addr;
}

static uint8_t chip_reply(struct nor *c, uint32_t n)
{
    if (c->miso_stuck >= 0)
        return c->miso_stuck ? 0xFF : 0x00;
    if (n == 0)
        return 0xFF;
    switch (c->cmd[0]) {
    case 0x9F:
        return n <= 3 ? (uint8_t)(c->id >> (8 * (3 - n))) : 0xFF;
    case 0x05:
        return (c->busy ? 0x01 : 0) | (c->wel ? 0x02 : 0);
    case 0x03:
    case 0x13: {
        uint32_t abytes = c->cmd[0] == 0x13 ? 4 : 3;
        if (c->cmd[0] == 0x13 && !c->four_byte)
            return 0xFF;  /* unknown: counted when chip select rises */
        if (n <= abytes)
            return 0xFF;
        if (c->busy) {
            c->busy_reads++;
            return 0xFF;
        }
        return c->array[(cmd_address(c, abytes) + (n - 1 - abytes)) % c->size];
    }
    default:
        return 0xFF;
    }
}

static void page_program(struct nor *c, uint32_t abytes)
{
    uint32_t addr = cmd_address(c, abytes), i;

    if (!c->wel || c->busy || c->n < abytes + 2)
        return;
    for (i = 0; i < c->n - 1 - abytes; i++) {
        uint32_t at = ((addr & ~0xFFu) | ((addr + i) & 0xFF)) % c->size;
        c->array[at] &= c->cmd[1 + abytes + i] | (at == c->weak_at ? c->weak_bits : 0);
    }
    c->programs++;
    c->wel = 0;
    c->busy = 3;
}

static void sector_erase(struct nor *c, uint32_t abytes)
{
    uint32_t addr = cmd_address(c, abytes);

    if (!c->wel || c->busy || c->n != 1 + abytes)
        return;
    memset(c->array + (addr % c->size & ~0xFFFu), 0xFF, 4096);
    c->erases++;
    c->wel = 0;
    c->busy = 20;
}

static void command_done(struct nor *c)
{
    uint8_t op = c->cmd[0];

    if (c->n == 0)
        return;
    c->commands++;
    c->opcodes[op]++;
    if (op == 0x02 || op == 0x06 || op == 0x12 || op == 0x20 || op == 0x21)
        c->writes++;
    if (c->miso_stuck >= 0)
        return;
    switch (op) {
    case 0x9F:
        break;
    case 0x03:
        c->reads++;
        break;
    case 0x13:
        if (c->four_byte)
            c->reads++;
        else
            c->unknown++;
        break;
    case 0x05:
        c->status_reads++;
        if (c->busy && !c->stuck_busy)
            c->busy--;
        break;
    case 0x06:
        if (c->n == 1 && !c->protect && !c->busy)
            c->wel = 1;
        break;
    case 0x02:
        page_program(c, 3);
        break;
    case 0x20:
        sector_erase(c, 3);
        break;
    case 0x12:  /* a chip of 16 MiB or less has no 4-byte commands */
        if (c->four_byte)
            page_program(c, 4);
        else
            c->unknown++;
        break;
    case 0x21:
        if (c->four_byte)
            sector_erase(c, 4);
        else
            c->unknown++;
        break;
    default:
        c->unknown++;
        break;
    }
}

static void nor_cs(struct nor *c, uint32_t v)
{
    if (c->cs && !v)
        command_done(c);
    if (!c->cs && v)
        c->n = 0;
    c->cs = v & 1;
}

static void nor_phyconfig(struct nor *c, uint32_t v)
{
    c->phyconfig_writes++;
    c->len = v & 0xFF;
    /* one data line, output enabled, whole bytes */
    if ((v >> 8 & 0xF) != 1 || (v >> 16 & 0xFF) != 1 || c->len == 0 || c->len > 32 || c->len % 8)
        c->bad_config++;
}

static void nor_tx(struct nor *c, uint32_t v)
{
    uint32_t i, bytes = c->len / 8;

    if (c->hung || c->in_flight) {  /* the TX buffer is full: the write is dropped */
        c->lost_writes++;
        return;
    }
    if (++c->xfers == c->stall_from) {
        c->hung = 1;
        return;
    }
    if (!c->cs)
        c->bad_config++;
    if (c->rx_valid)
        c->overruns++;
    for (i = 0; i < bytes; i++) {
        uint8_t out = (uint8_t)(v >> (8 * (bytes - 1 - i)));
        c->sr = c->sr << 8 | chip_reply(c, c->n);
        if (c->n < sizeof(c->cmd))
            c->cmd[c->n] = out;
        c->n++;
    }
    c->in_flight = 2;
}

/* Each LiteSPI core's master CSRs and the chip on them. */
static const struct master {
    unsigned long cs, phyconfig, rxtx, status;
    struct nor *chip;
} masters[] = {
    { CSR_SPIFLASH_CORE_MASTER_CS_ADDR, CSR_SPIFLASH_CORE_MASTER_PHYCONFIG_ADDR,
      CSR_SPIFLASH_CORE_MASTER_RXTX_ADDR, CSR_SPIFLASH_CORE_MASTER_STATUS_ADDR, &boot },
#ifdef LITEDAV_TEST_STOREFLASH
    { CSR_STOREFLASH_CORE_MASTER_CS_ADDR, CSR_STOREFLASH_CORE_MASTER_PHYCONFIG_ADDR,
      CSR_STOREFLASH_CORE_MASTER_RXTX_ADDR, CSR_STOREFLASH_CORE_MASTER_STATUS_ADDR, &store },
#endif
};

void csr_write_simple(unsigned long v, unsigned long a)
{
    size_t i;

    for (i = 0; i < sizeof(masters) / sizeof(masters[0]); i++) {
        const struct master *ms = &masters[i];
        if (a == ms->cs) {
            nor_cs(ms->chip, (uint32_t)v);
            return;
        }
        if (a == ms->phyconfig) {
            nor_phyconfig(ms->chip, (uint32_t)v);
            return;
        }
        if (a == ms->rxtx) {
            nor_tx(ms->chip, (uint32_t)v);
            return;
        }
    }
    bad_csr++;
}

unsigned long csr_read_simple(unsigned long a)
{
    size_t i;

    for (i = 0; i < sizeof(masters) / sizeof(masters[0]); i++) {
        struct nor *c = masters[i].chip;
        if (a == masters[i].rxtx) {
            if (!c->rx_valid)
                c->stale_reads++;
            c->rx_valid = 0;
            return c->sr;
        }
        if (a == masters[i].status) {
            if (c->hung)
                return 0;
            if (c->in_flight && --c->in_flight == 0)
                c->rx_valid = 1;
            return (c->in_flight ? 0 : 1u) | (c->rx_valid ? 2u : 0);
        }
    }
    bad_csr++;
    return 0;
}

static int all_ff_in(const struct nor *c, uint32_t from, uint32_t to)
{
    for (; from < to; from++)
        if (c->array[from] != 0xFF)
            return 0;
    return 1;
}

static int all_ff(uint32_t from, uint32_t to)
{
    return all_ff_in(&boot, from, to);
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
    CHECK(boot.writes == 0);   /* probing writes nothing */

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

    writes = boot.writes;
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
    CHECK(boot.writes == writes);  /* refused before anything reached the chip */
    CHECK(flash_program(f, STORE_SIZE - 4, data, 4) == FLASH_OK);  /* the last bytes are fine */
    CHECK(all_ff(0, STORE_OFFSET));

    /* erase: taken at once, the next operation waits for WIP */
    CHECK(flash_erase(f, 1) == FLASH_OK);
    CHECK(boot.erases == 1 && boot.busy > 0);
    CHECK(flash_sync(f) == FLASH_OK && boot.busy == 0);
    CHECK(all_ff(STORE_OFFSET + 0x1000, STORE_OFFSET + 0x2000));
    CHECK(model_chip[STORE_OFFSET + 3] == data[1]);  /* sector 0 untouched */
    CHECK(flash_erase(f, 0) == FLASH_OK);
    CHECK(flash_read(f, 0, back, 16) == FLASH_OK && boot.busy == 0);  /* a read waits too */
    CHECK(all_ff(STORE_OFFSET, STORE_OFFSET + 16) && back[0] == 0xFF);
    CHECK(all_ff(0, STORE_OFFSET));
    /* the GD25Q16 takes 3-byte commands */
    CHECK(boot.opcodes[0x02] == boot.programs && boot.opcodes[0x20] == 2);
    CHECK(boot.opcodes[0x12] == 0 && boot.opcodes[0x21] == 0);
    CHECK(boot.bad_config == 0);
}

static void scenario_no_flash(void)
{
    CHECK(port_flash() == NULL);
    CHECK(boot.writes == 0);
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
    boot.stuck_busy = 1;
    start = cycles;
    CHECK(flash_program(f, 0, data, 4) == FLASH_ERR_IO);
    /* 10 ms of 75 MHz, give or take one look at the clock */
    CHECKF(cycles - start >= 750000 && cycles - start < 800000, "%llu cycles",
           (unsigned long long)(cycles - start));
    CHECK(boot.programs == 1);
}

static void scenario_protected(void)
{
    const struct flash *f = port_flash();
    uint8_t data[4] = { 1, 2, 3, 4 };

    CHECK(f != NULL);
    if (!f)
        return;
    boot.protect = 1;
    CHECK(flash_program(f, 0, data, 4) == FLASH_ERR_IO);
    CHECK(flash_erase(f, 0) == FLASH_ERR_IO);
    CHECK(boot.programs == 0 && boot.erases == 0);
    CHECK(all_ff(0, CHIP_SIZE));
}

#ifdef LITEDAV_TEST_STOREFLASH
static int store_ff(uint32_t from, uint32_t to)
{
    return all_ff_in(&store, from, to);
}

/* The store flash holds the store: the whole chip up to the module's (or the window's) 32 MiB. */
static const struct flash *store_flash_found(uint32_t expected_size)
{
    const struct flash *f = port_flash();

    CHECK(f != NULL);
    if (!f)
        return NULL;
    CHECK(port_flash() == f);
    CHECKF(f->geo.size == expected_size, "size 0x%x", (unsigned)f->geo.size);
    CHECK(f->geo.block_size == 4096 && f->geo.page_size == 256);
    CHECK(store.writes == 0);      /* probing writes nothing */
    CHECK(boot.commands == 0);     /* nor looks at the boot chip */
    return f;
}

static void scenario_store_chip(void)
{
    const struct flash *f = store_flash_found(STORE_CHIP_SIZE);
    uint8_t data[256], back[256];
    const uint32_t high = MIB16 + 0x2345, top = STORE_CHIP_SIZE - 256;
    unsigned i, writes;

    unsigned reads;

    if (!f)
        return;
    for (i = 0; i < sizeof(data); i++)
        data[i] = (uint8_t)(i * 13 + 5);

    /* above 16 MiB: where it belongs, not 16 MiB lower (where a 3-byte address lands); its
     * NOR check and its read-back are reads of the chip */
    CHECK(flash_program(f, high, data, 9) == FLASH_OK);
    CHECK(memcmp(model_store_chip + high, data, 9) == 0);
    CHECK(store_ff(0, MIB16));
    CHECKF(store.reads == (store_master_reads ? 2u : 0u), "%u reads", store.reads);
    reads = store.reads;
    CHECK(flash_read(f, high + 1, back, 8) == FLASH_OK && memcmp(back, data + 1, 8) == 0);
    CHECK(store.reads == reads + (store_master_reads ? 1u : 0u));
    /* the chip's last page, whole; and the last bytes below 16 MiB */
    CHECK(flash_program(f, top, data, 256) == FLASH_OK);
    CHECK(memcmp(model_store_chip + top, data, 256) == 0);
    CHECK(flash_program(f, MIB16 - 4, data + 100, 4) == FLASH_OK);
    CHECK(memcmp(model_store_chip + MIB16 - 4, data + 100, 4) == 0);
    CHECK(flash_program(f, 0x1000, data, 16) == FLASH_OK);
    CHECK(memcmp(model_store_chip + 0x1000, data, 16) == 0);
    CHECK(flash_read(f, top, back, 256) == FLASH_OK && memcmp(back, data, 256) == 0);
    /* the errors, before anything reaches the chip */
    writes = store.writes;
    CHECK(flash_program(f, MIB16 + 0x30FA, data, 10) == FLASH_ERR_PAGE);
    CHECK(flash_program(f, STORE_CHIP_SIZE - 2, data, 4) == FLASH_ERR_RANGE);
    CHECK(flash_program(f, STORE_CHIP_SIZE, data, 1) == FLASH_ERR_RANGE);
    CHECK(flash_read(f, STORE_CHIP_SIZE - 1, back, 2) == FLASH_ERR_RANGE);
    CHECK(flash_erase(f, STORE_CHIP_SIZE / 4096) == FLASH_ERR_RANGE);
    memset(back, 0xFF, 4);
    CHECK(flash_program(f, high, back, 4) == FLASH_ERR_NOR);
    CHECK(store.writes == writes);

    /* erase above 16 MiB: that sector only, the one 16 MiB lower untouched */
    model_store_chip[(high & ~0xFFFu) - MIB16] = 0x5A;  /* stale bytes there: they must stay */
    CHECK(flash_erase(f, high / 4096) == FLASH_OK);
    CHECK(flash_sync(f) == FLASH_OK && store.busy == 0);
    CHECK(store_ff(high & ~0xFFFu, (high & ~0xFFFu) + 4096));
    CHECK(model_store_chip[(high & ~0xFFFu) - MIB16] == 0x5A);
    CHECK(flash_erase(f, STORE_CHIP_SIZE / 4096 - 1) == FLASH_OK);
    CHECK(flash_read(f, top, back, 4) == FLASH_OK && back[0] == 0xFF && store.busy == 0);
    CHECK(store_ff(STORE_CHIP_SIZE - 4096, STORE_CHIP_SIZE));
    CHECK(memcmp(model_store_chip + MIB16 - 4, data + 100, 4) == 0);  /* below 16 MiB: still there */
    CHECK(flash_erase(f, 1) == FLASH_OK && flash_sync(f) == FLASH_OK);
    CHECK(store_ff(0x1000, 0x2000));

    /* every program and erase went out with 4-byte addresses */
    CHECK(store.programs == 4 && store.opcodes[0x12] == 4 && store.opcodes[0x02] == 0);
    CHECK(store.erases == 3 && store.opcodes[0x21] == 3 && store.opcodes[0x20] == 0);
    /* and every read of the chip: 4-byte READ 0x13 */
    CHECK(store.opcodes[0x03] == 0 && store.opcodes[0x13] == store.reads);
    CHECK(store.bad_config == 0);
    CHECK(boot.commands == 0 && all_ff(0, CHIP_SIZE));
}

/* A pseudo-random byte for each chip address. */
static uint8_t pattern(uint32_t addr)
{
    uint32_t x = addr * 2654435761u;
    return (uint8_t)(x >> 24 ^ x >> 11);
}

static void fill(uint32_t from, uint32_t to)
{
    for (; from < to; from++)
        model_store_chip[from] = pattern(from);
}

/* Reads of every ragged shape, compared with the model's array byte for byte, and the cost
 * of a long one counted at the master. */
static void scenario_store_read(void)
{
    const struct flash *f = store_flash_found(STORE_CHIP_SIZE);
    static uint8_t buf[4 + 4099 + 4];
    /* across a page (and a sector) low, across 16 MiB, across a page above it, the chip's end */
    static const uint32_t bases[] = { 0x1FF0, MIB16 - 12, MIB16 + 0x10F3 - 8, STORE_CHIP_SIZE - 280 };
    static const uint32_t lens[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 255, 257 };
    unsigned b, l, off, bo, cases = 0, bad = 0, bad_guard = 0, bad_count = 0;
    unsigned commands, reads, xfers, phyconfigs;
    uint32_t addr;
    const uint8_t *expect;

    if (!f)
        return;
    fill(0x1000, 0x3000);
    fill(MIB16 - 0x1000, MIB16 + 0x2000);
    fill(STORE_CHIP_SIZE - 0x1000, STORE_CHIP_SIZE);

    for (b = 0; b < sizeof(bases) / sizeof(bases[0]); b++)
        for (off = 0; off < 5; off++)
            for (l = 0; l < sizeof(lens) / sizeof(lens[0]); l++)
                for (bo = 0; bo < 4; bo++) {
                    addr = bases[b] + off;
                    expect = model_store_chip + addr;
                    memset(buf, 0xA5, sizeof(buf));
                    reads = store.reads;
                    cases++;
                    if (flash_read(f, addr, buf + 4 + bo, lens[l]) != FLASH_OK ||
                        memcmp(buf + 4 + bo, expect, lens[l]) != 0) {
                        if (!bad++)
                            fprintf(stderr, "read 0x%x, %u bytes into +%u: wrong bytes\n", (unsigned)addr,
                                    (unsigned)lens[l], bo);
                    }
                    if (buf[4 + bo - 1] != 0xA5 || buf[4 + bo + lens[l]] != 0xA5) {
                        if (!bad_guard++)
                            fprintf(stderr, "read 0x%x, %u bytes into +%u: wrote outside the buffer\n",
                                    (unsigned)addr, (unsigned)lens[l], bo);
                    }
                    if (store.reads - reads != (store_master_reads && lens[l] ? 1u : 0u))
                        bad_count++;
                }
    CHECKF(bad == 0, "%u of %u reads wrong", bad, cases);
    CHECKF(bad_guard == 0, "%u of %u reads wrote outside", bad_guard, cases);
    CHECKF(bad_count == 0, "%u of %u reads not one READ command", bad_count, cases);

    /* 4 KiB at an odd address across 16 MiB: one READ 0x13, its opcode, its address and
     * 1024 word transfers, phyconfig written for the opcode's 8 bits and the address's 32 only */
    commands = store.commands, reads = store.reads, xfers = store.xfers, phyconfigs = store.phyconfig_writes;
    addr = MIB16 - 0x801;
    CHECK(flash_read(f, addr, buf + 1, 4096) == FLASH_OK &&
          memcmp(buf + 1, model_store_chip + addr, 4096) == 0);
    if (store_master_reads) {
        CHECKF(store.commands - commands == 1 && store.reads - reads == 1, "%u commands",
               store.commands - commands);
        CHECKF(store.xfers - xfers == 2 + 1024, "%u transfers", store.xfers - xfers);
        CHECKF(store.phyconfig_writes - phyconfigs == 2, "%u phyconfig writes",
               store.phyconfig_writes - phyconfigs);
    } else {
        CHECK(store.commands == commands && store.xfers == xfers);
    }
    /* 4099 bytes: the three after the words in one more transfer, phyconfig once more */
    commands = store.commands, reads = store.reads, xfers = store.xfers, phyconfigs = store.phyconfig_writes;
    addr = MIB16 + 0x10F3 - 0x800;
    CHECK(flash_read(f, addr, buf, 4099) == FLASH_OK && memcmp(buf, model_store_chip + addr, 4099) == 0);
    if (store_master_reads) {
        CHECKF(store.commands - commands == 1 && store.reads - reads == 1, "%u commands",
               store.commands - commands);
        CHECKF(store.xfers - xfers == 2 + 1024 + 1, "%u transfers", store.xfers - xfers);
        CHECKF(store.phyconfig_writes - phyconfigs == 3, "%u phyconfig writes",
               store.phyconfig_writes - phyconfigs);
        CHECK(store.opcodes[0x13] == store.reads && store.opcodes[0x03] == 0);
    } else {
        CHECK(store.commands == commands && store.xfers == xfers && store.reads == 0);
    }
    CHECK(store.writes == 0 && store.cs == 0);
    CHECK(boot.commands == 0);
}

/* A 16 MiB chip on the store flash: 3-byte commands reach all of it. */
static void scenario_store_16mib(void)
{
    const struct flash *f = store_flash_found(MIB16);
    uint8_t data[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, back[8];

    if (!f)
        return;
    CHECK(flash_program(f, MIB16 - 8, data, 8) == FLASH_OK);
    CHECK(memcmp(model_store_chip + MIB16 - 8, data, 8) == 0);
    CHECK(flash_erase(f, MIB16 / 4096 - 1) == FLASH_OK && flash_sync(f) == FLASH_OK);
    CHECK(store_ff(MIB16 - 4096, MIB16));
    CHECK(flash_program(f, MIB16, data, 1) == FLASH_ERR_RANGE);
    CHECK(flash_read(f, MIB16 - 8, back, 8) == FLASH_OK && store_ff(MIB16 - 8, MIB16) &&
          back[0] == 0xFF && back[7] == 0xFF);
    CHECK(flash_program(f, MIB16 - 7, data, 7) == FLASH_OK);
    CHECK(flash_read(f, MIB16 - 8, back, 8) == FLASH_OK && back[0] == 0xFF && memcmp(back + 1, data, 7) == 0);
    CHECK(store.opcodes[0x02] == 2 && store.opcodes[0x20] == 1);
    CHECK(store.opcodes[0x12] == 0 && store.opcodes[0x21] == 0);
    /* reads with 3-byte addresses too (a 16 MiB chip may have no 0x13) */
    CHECKF(store.opcodes[0x03] == (store_master_reads ? 6u : 0u), "%u READ 0x03", store.opcodes[0x03]);
    CHECK(store.opcodes[0x13] == 0);
}

/* A 64 MiB chip: the store is the 32 MiB the module (or the window) has. */
static void scenario_store_large(void)
{
    const struct flash *f = store_flash_found(STORE_CHIP_SIZE);
    uint8_t data[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };

    if (!f)
        return;
    CHECK(flash_program(f, STORE_CHIP_SIZE - 8, data, 8) == FLASH_OK);
    CHECK(memcmp(model_store_chip + STORE_CHIP_SIZE - 8, data, 8) == 0);
    CHECK(flash_program(f, STORE_CHIP_SIZE, data, 1) == FLASH_ERR_RANGE);
    CHECK(flash_read(f, STORE_CHIP_SIZE - 8, data, 8) == FLASH_OK && data[0] == 1 && data[7] == 8);
    CHECK(store.opcodes[0x12] == 1 && store.opcodes[0x02] == 0);
    CHECK(store.opcodes[0x13] == (store_master_reads ? 3u : 0u) && store.opcodes[0x03] == 0);
}

/* The store flash's master takes the first transfer and never ends it: a master that does
 * not answer, the boot chip's region after 1 ms. */
static void scenario_store_dead(void)
{
    uint64_t start = cycles;

    CHECK(port_flash() != NULL);
    CHECKF(cycles - start >= 75000 && cycles - start < 2 * 75000, "%llu cycles",
           (unsigned long long)(cycles - start));
    CHECK(store.xfers == 1 && store.hung && store.cs == 0);
    scenario_chip();
}

static void scenario_store_stuck(void)
{
    const struct flash *f = store_flash_found(STORE_CHIP_SIZE);
    uint8_t data[4] = { 1, 2, 3, 4 };
    uint64_t start;

    if (!f)
        return;
    store.stuck_busy = 1;
    start = cycles;
    CHECK(flash_program(f, MIB16 + 0x100, data, 4) == FLASH_ERR_IO);
    CHECKF(cycles - start >= 750000 && cycles - start < 800000, "%llu cycles",
           (unsigned long long)(cycles - start));
    CHECK(store.programs == 1 && store.opcodes[0x12] == 1);
    /* the next operations find it busy: errors again, each bounded */
    start = cycles;
    CHECK(flash_erase(f, 0) == FLASH_ERR_IO);
    CHECK(flash_sync(f) == FLASH_OK);  /* nothing left running: the erase was refused */
    CHECKF(cycles - start < 2 * 800000, "%llu cycles", (unsigned long long)(cycles - start));
    CHECK(store.erases == 0);
    CHECK(boot.commands == 0 && all_ff(0, CHIP_SIZE));
}

static void scenario_store_protected(void)
{
    const struct flash *f = store_flash_found(STORE_CHIP_SIZE);
    uint8_t data[4] = { 1, 2, 3, 4 };

    if (!f)
        return;
    store.protect = 1;
    CHECK(flash_program(f, MIB16 + 0x100, data, 4) == FLASH_ERR_IO);
    CHECK(flash_erase(f, MIB16 / 4096) == FLASH_ERR_IO);
    CHECK(store.programs == 0 && store.erases == 0);
    CHECK(store.opcodes[0x12] == 0 && store.opcodes[0x21] == 0);  /* nothing sent past WREN */
    CHECK(store_ff(0, STORE_CHIP_SIZE));
    CHECK(boot.commands == 0 && all_ff(0, CHIP_SIZE));
}

/* A cell that does not program: the read-back finds it. */
static void scenario_store_readback(void)
{
    const struct flash *f = store_flash_found(STORE_CHIP_SIZE);
    uint8_t data[4] = { 0x12, 0x00, 0x34, 0x56 };

    if (!f)
        return;
    store.weak_at = MIB16 + 0x105;
    store.weak_bits = 0x10;
    CHECK(flash_program(f, MIB16 + 0x104, data, 4) == FLASH_ERR_IO);
    CHECK(store.programs == 1 && model_store_chip[MIB16 + 0x105] == 0x10);
    CHECK(store.reads == (store_master_reads ? 2u : 0u));
    /* the others programmed fine */
    CHECK(flash_program(f, MIB16 + 0x200, data, 4) == FLASH_OK);
}

static void scenario_store_busy(void)
{
    uint64_t start = cycles;

    CHECK(port_flash() == NULL);
    /* the erase wait: 2 s of 75 MHz, give or take */
    CHECKF(cycles - start >= 150000000ull && cycles - start < 151000000ull, "%llu cycles",
           (unsigned long long)(cycles - start));
    CHECK(port_flash() == NULL);
    CHECK(store.writes == 0);
    CHECK(boot.commands == 0 && all_ff(0, CHIP_SIZE));
}

#ifndef LITEDAV_TEST_STOREFLASH_WINDOW
/* The master stops answering in the middle of a read: FLASH_ERR_IO, bounded, chip select
 * released; in the words, then in the ragged tail. */
static void scenario_store_stall(void)
{
    const struct flash *f = store_flash_found(STORE_CHIP_SIZE);
    static uint8_t buf[4099];
    uint64_t start;

    if (!f)
        return;
    fill(MIB16, MIB16 + 0x2000);
    /* the opcode, the address, 100 words, then the 101st never ends */
    store.stall_from = store.xfers + 2 + 101;
    start = cycles;
    CHECK(flash_read(f, MIB16 + 1, buf, 4096) == FLASH_ERR_IO);
    CHECKF(cycles - start >= 75000 && cycles - start < 2 * 75000, "%llu cycles",
           (unsigned long long)(cycles - start));
    CHECK(store.hung && store.cs == 0 && store.reads == 1);
    CHECK(memcmp(buf, model_store_chip + MIB16 + 1, 400) == 0);

    /* the master again; the tail's transfer never ends */
    store.hung = 0;
    store.stall_from = store.xfers + 2 + 1024 + 1;
    start = cycles;
    CHECK(flash_read(f, MIB16 + 3, buf, 4099) == FLASH_ERR_IO);
    CHECKF(cycles - start >= 75000 && cycles - start < 2 * 75000, "%llu cycles",
           (unsigned long long)(cycles - start));
    CHECK(store.hung && store.cs == 0 && store.reads == 2);

    /* and again: the next read is whole */
    store.hung = 0;
    store.stall_from = 0;
    CHECK(flash_read(f, MIB16 + 5, buf, 4099) == FLASH_OK &&
          memcmp(buf, model_store_chip + MIB16 + 5, 4099) == 0);
    CHECK(store.reads == 3 && store.cs == 0);
}
#endif
#endif

int main(int argc, char **argv)
{
    const char *scenario = argc > 1 ? argv[1] : "";
    int store_scenario = !strncmp(scenario, "store_", 6);

    memset(model_chip, 0xFF, sizeof(model_chip));
#ifdef LITEDAV_TEST_STOREFLASH
    memset(model_store_chip, 0xFF, sizeof(model_store_chip));
    if (store_scenario && strcmp(scenario, "store_absent"))
        store.miso_stuck = -1;  /* the Pmod is there */
#endif
    if (!strcmp(scenario, "chip")) {
        scenario_chip();
    } else if (!strcmp(scenario, "absent")) {
        boot.miso_stuck = 0;
        scenario_no_flash();
    } else if (!strcmp(scenario, "floating")) {
        boot.miso_stuck = 1;
        scenario_no_flash();
    } else if (!strcmp(scenario, "small")) {
        boot.id = 0xC84014;
        scenario_no_flash();
    } else if (!strcmp(scenario, "stuck")) {
        scenario_stuck();
    } else if (!strcmp(scenario, "protected")) {
        scenario_protected();
#ifdef LITEDAV_TEST_STOREFLASH
    } else if (!strcmp(scenario, "store_chip")) {
        scenario_store_chip();
    } else if (!strcmp(scenario, "store_read")) {
        scenario_store_read();
    } else if (!strcmp(scenario, "store_16mib")) {
        store.id = 0x20BA18;
        scenario_store_16mib();
    } else if (!strcmp(scenario, "store_large")) {
        store.id = 0x20BA20;
        scenario_store_large();
    } else if (!strcmp(scenario, "store_absent")) {
        store.miso_stuck = 0;
        scenario_chip();
    } else if (!strcmp(scenario, "store_dead")) {
        store.stall_from = 1;
        scenario_store_dead();
    } else if (!strcmp(scenario, "store_stuck")) {
        scenario_store_stuck();
    } else if (!strcmp(scenario, "store_protected")) {
        scenario_store_protected();
    } else if (!strcmp(scenario, "store_readback")) {
        scenario_store_readback();
    } else if (!strcmp(scenario, "store_busy")) {
        store.busy = 1;
        store.stuck_busy = 1;
        scenario_store_busy();
#ifndef LITEDAV_TEST_STOREFLASH_WINDOW
    } else if (!strcmp(scenario, "store_stall")) {
        scenario_store_stall();
#endif
#endif
    } else {
        fprintf(stderr, "usage: test_litespi_flash chip|absent|floating|small|stuck|protected"
#ifdef LITEDAV_TEST_STOREFLASH
                        "|store_chip|store_read|store_16mib|store_large|store_absent|store_dead|store_stuck"
                        "|store_protected|store_readback|store_busy"
#ifndef LITEDAV_TEST_STOREFLASH_WINDOW
                        "|store_stall"
#endif
#endif
                        "\n");
        return 2;
    }
    /* in every scenario: each chip was sent only commands it knows, through its own CSRs, each
     * reply read once it came and before the next transfer, no read of a busy chip; the
     * boot chip read through its window only, and left deselected */
    CHECK(boot.unknown == 0 && bad_csr == 0 && boot.bad_config == 0);
    CHECKF(boot.overruns == 0 && boot.stale_reads == 0 && boot.lost_writes == 0, "%u/%u/%u",
           boot.overruns, boot.stale_reads, boot.lost_writes);
    CHECK(boot.reads == 0 && boot.busy_reads == 0 && boot.cs == 0);
#ifdef LITEDAV_TEST_STOREFLASH
    CHECK(store.unknown == 0 && store.bad_config == 0);
    CHECKF(store.overruns == 0 && store.stale_reads == 0 && store.lost_writes == 0, "%u/%u/%u",
           store.overruns, store.stale_reads, store.lost_writes);
    CHECK(store.busy_reads == 0 && store.cs == 0);
    if (!store_scenario || !strcmp(scenario, "store_absent")) {
        /* no chip on the store flash: one JEDEC ID, then the boot chip */
        CHECK(store.commands == 1 && store.opcodes[0x9F] == 1);
        CHECK(store_ff(0, STORE_CHIP_SIZE));
    }
#else
    (void)store_scenario;
#endif
    return check_summary();
}
