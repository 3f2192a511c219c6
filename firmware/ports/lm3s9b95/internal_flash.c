/* Flash driver for the LM3S9B95's internal flash (flash.h), through the
 * Stellaris flash controller. Register facts from the LM3S9B95 data sheet:
 *
 *   FMA    0x000  address of the word, erase block or 32-word buffer window
 *   FMD    0x004  data for a single-word write
 *   FMC    0x008  WRKEY (0xA442) in bits 31:16 with one of WRITE (bit 0),
 *                 ERASE (bit 1), MERASE, COMT; the bit stays set until done
 *   FCRIS  0x00C  ARIS (bit 0): a program/erase hit a protected block;
 *                 PRIS (bit 1): a program/erase finished
 *   FCMISC 0x014  write 1s to clear the FCRIS bits
 *   FMC2   0x020  WRKEY with WRBUF (bit 0): program the write buffer
 *   FWBVAL 0x030  one bit per FWBn written since the last buffered write;
 *                 only those words are programmed
 *   FWBn   0x100  32 buffer words for the 128-byte aligned window in FMA
 *
 * Erase blocks are 1 KiB, protection (FMPPEn) works on 2 KiB blocks, the
 * Tempest-class LM3S9B9x times program/erase itself (no USECRL to set).
 *
 * NOR rules (flash.h): a program only clears bits. A program that covers part
 * of a word reads the word and programs it with the new bytes, 0xFF
 * elsewhere; in fact the driver programs only the bits that change (a 1 in
 * the data leaves a cell alone), so a cell already at 0 is never pulsed
 * again, and a word whose bits are all there already is not programmed.
 * TI's driver library documents that a word should be programmed only once
 * between erases. The store appends records at byte granularity, in pieces
 * (prefix, name, body as it arrives, 128-byte copies when compacting): a
 * program that ends inside a word before erased bytes leaves that word held
 * in RAM (struct internal_flash), and the next piece, which continues it,
 * completes it, so inside a record every word is programmed once. Where two
 * records meet, or a header meets its payload, a word is still programmed a
 * second time (its still-erased bytes only): records would have to start on
 * word boundaries to avoid that (README.md, LM3S9B95 on a real board).
 *
 * Timing: the code runs from the same flash it programs. While a program or
 * erase is in progress, every instruction fetch and literal load from flash
 * stalls the CPU until the operation ends (a word: tens of microseconds; a
 * 1 KiB erase: milliseconds), interrupt handlers included: SysTick ticks
 * that fall into an erase collapse into one, and the Ethernet RX FIFO may
 * overflow (TCP retransmits). That is accepted: the store erases a block
 * only when it compacts. The polling loops are still needed when code runs
 * from SRAM, and they bound the wait.
 *
 * On the host the same file is compiled with INTERNAL_FLASH_HOST_MODEL: the
 * register accessors then go to a software model of the controller
 * (tests/host/flash_ctrl_model.c). */
#include "internal_flash.h"

#include <string.h>

#define FC_FMA    0x000u
#define FC_FMD    0x004u
#define FC_FMC    0x008u
#define FC_FCRIS  0x00Cu
#define FC_FCMISC 0x014u
#define FC_FMC2   0x020u
#define FC_FWB(n) (0x100u + 4u * (n))

#define FC_KEY         0xA4420000u
#define FC_FMC_WRITE   (1u << 0)
#define FC_FMC_ERASE   (1u << 1)
#define FC_FMC2_WRBUF  (1u << 0)
#define FC_ARIS        (1u << 0)
#define FC_PRIS        (1u << 1)

#define PAGE_WORDS (INTERNAL_FLASH_PAGE / 4u)
/* Polls before a program/erase counts as hung: far beyond the data sheet's
 * erase time at 80 MHz, even without the fetch stall. */
#define SPIN_LIMIT (1u << 24)

#ifdef INTERNAL_FLASH_HOST_MODEL
#include "flash_ctrl_model.h"
#define FC_READ(off)      fcm_reg_read(off)
#define FC_WRITE(off, v)  fcm_reg_write((off), (v))
#define FLASH_WORD(addr)  fcm_word_read(addr)
#define FLASH_BYTES(addr) (fcm_array() + (addr))
#else
#include "lm3s_regs.h"
#define FLASH_CTRL_BASE   0x400FD000u
#define FC_READ(off)      REG32(FLASH_CTRL_BASE + (off))
#define FC_WRITE(off, v)  (REG32(FLASH_CTRL_BASE + (off)) = (v))
#define FLASH_WORD(addr)  REG32(addr)
#define FLASH_BYTES(addr) ((const uint8_t *)(uintptr_t)(addr))
#endif

static int wait_done(uint32_t reg, uint32_t busy_bit)
{
    uint32_t spins;
    for (spins = 0; spins < SPIN_LIMIT; spins++)
        if (!(FC_READ(reg) & busy_bit))
            return FLASH_OK;
    return FLASH_ERR_IO;
}

/* After an operation: a protection violation leaves flash untouched and
 * sets ARIS. Both status bits are cleared for the next operation. */
static int access_status(void)
{
    uint32_t raw = FC_READ(FC_FCRIS);
    FC_WRITE(FC_FCMISC, FC_ARIS | FC_PRIS);
    return raw & FC_ARIS ? FLASH_ERR_IO : FLASH_OK;
}

/* The word as the store sees it: the held word's value, or the flash. */
static uint32_t logical_word(const struct internal_flash *f, uint32_t w)
{
    return f->held && f->held_addr == w ? f->held_word : FLASH_WORD(w);
}

/* Make the n words from first (inside one 128-byte window) equal want[],
 * which only clears bits: only the cells that change are programmed (a 1 in
 * the data leaves a cell alone), through FMD/FMC for one word, the write
 * buffer for more; then every word is read back. */
static int program_words(uint32_t first, uint32_t n, const uint32_t *want)
{
    uint32_t clear[PAGE_WORDS], changed = 0, last = 0, i;
    int rc;

    for (i = 0; i < n; i++) {
        clear[i] = FLASH_WORD(first + 4u * i) & ~want[i];
        if (clear[i]) {
            changed++;
            last = i;
        }
    }
    if (changed) {
        FC_WRITE(FC_FCMISC, FC_ARIS | FC_PRIS);
        if (changed == 1) {
            FC_WRITE(FC_FMA, first + 4u * last);
            FC_WRITE(FC_FMD, ~clear[last]);
            FC_WRITE(FC_FMC, FC_KEY | FC_FMC_WRITE);
            rc = wait_done(FC_FMC, FC_FMC_WRITE);
        } else {
            FC_WRITE(FC_FMA, first & ~(INTERNAL_FLASH_PAGE - 1u));
            for (i = 0; i < n; i++)
                if (clear[i])
                    FC_WRITE(FC_FWB(((first + 4u * i) % INTERNAL_FLASH_PAGE) / 4u), ~clear[i]);
            FC_WRITE(FC_FMC2, FC_KEY | FC_FMC2_WRBUF);
            rc = wait_done(FC_FMC2, FC_FMC2_WRBUF);
        }
        if (rc != FLASH_OK)
            return rc;
        if ((rc = access_status()) != FLASH_OK)
            return rc;
    }
    for (i = 0; i < n; i++)
        if (FLASH_WORD(first + 4u * i) != want[i])
            return FLASH_ERR_IO;
    return FLASH_OK;
}

static int flush_held(struct internal_flash *f)
{
    if (!f->held)
        return FLASH_OK;
    f->held = 0;
    return program_words(f->held_addr, 1, &f->held_word);
}

static int if_read(void *ctx, uint32_t addr, void *buf, uint32_t len)
{
    struct internal_flash *f = ctx;
    uint32_t dev = f->base + addr, b;
    if (!flash_in_range(&f->flash, addr, len))
        return FLASH_ERR_RANGE;
    memcpy(buf, FLASH_BYTES(dev), len);
    if (f->held)
        for (b = 0; b < 4; b++)
            if (f->held_addr + b >= dev && f->held_addr + b - dev < len)
                ((uint8_t *)buf)[f->held_addr + b - dev] = (uint8_t)(f->held_word >> (8u * b));
    return FLASH_OK;
}

static int if_program(void *ctx, uint32_t addr, const void *buf, uint32_t len)
{
    struct internal_flash *f = ctx;
    const uint8_t *src = buf;
    uint32_t want[PAGE_WORDS];
    uint32_t dev, first, nwords, nprog, tail, i, b;
    int rc, hold;

    if (!flash_in_range(&f->flash, addr, len))
        return FLASH_ERR_RANGE;
    if (!len)
        return FLASH_OK;
    if (flash_crosses_page(&f->flash, addr, len))
        return FLASH_ERR_PAGE;

    /* the words the bytes fall in, and what each must become */
    dev = f->base + addr;
    first = dev & ~3u;
    nwords = ((dev + len - 1) & ~3u) / 4u - first / 4u + 1u;
    for (i = 0; i < nwords; i++) {
        uint32_t w = first + 4u * i, old = logical_word(f, w), target = old;
        for (b = 0; b < 4; b++) {
            uint32_t a = w + b, shift = 8u * b;
            uint8_t v;
            if (a < dev || a - dev >= len)
                continue;
            v = src[a - dev];
            if (v & ~(uint8_t)(old >> shift))
                return FLASH_ERR_NOR;   /* checked for every byte before any is programmed */
            target &= ~((uint32_t)(uint8_t)~v << shift);
        }
        want[i] = target;
    }

    /* A held word goes first unless this program continues it. */
    if (f->held && f->held_addr != first && (rc = flush_held(f)) != FLASH_OK)
        return rc;
    f->held = 0;
    /* Hold the last word when the program ends inside it, before erased bytes. */
    tail = (dev + len) % 4u;
    hold = tail && (want[nwords - 1] | (0xFFFFFFFFu >> (8u * (4u - tail)))) == 0xFFFFFFFFu &&
           want[nwords - 1] != FLASH_WORD(first + 4u * (nwords - 1));
    nprog = hold ? nwords - 1 : nwords;
    if (nprog && (rc = program_words(first, nprog, want)) != FLASH_OK)
        return rc;
    if (hold) {
        f->held = 1;
        f->held_addr = first + 4u * (nwords - 1);
        f->held_word = want[nwords - 1];
    }
    return FLASH_OK;
}

static int if_erase(void *ctx, uint32_t block)
{
    struct internal_flash *f = ctx;
    uint32_t a, end;
    int rc;

    if (block >= f->flash.geo.size / INTERNAL_FLASH_BLOCK)
        return FLASH_ERR_RANGE;
    a = f->base + block * INTERNAL_FLASH_BLOCK;
    if (f->held && f->held_addr - a < INTERNAL_FLASH_BLOCK)
        f->held = 0;   /* the erase clears it anyway */
    else if ((rc = flush_held(f)) != FLASH_OK)
        return rc;
    FC_WRITE(FC_FCMISC, FC_ARIS | FC_PRIS);
    FC_WRITE(FC_FMA, a);
    FC_WRITE(FC_FMC, FC_KEY | FC_FMC_ERASE);
    if ((rc = wait_done(FC_FMC, FC_FMC_ERASE)) != FLASH_OK)
        return rc;
    if ((rc = access_status()) != FLASH_OK)
        return rc;
    for (end = a + INTERNAL_FLASH_BLOCK; a < end; a += 4)
        if (FLASH_WORD(a) != 0xFFFFFFFFu)
            return FLASH_ERR_IO;
    return FLASH_OK;
}

/* Everything else has completed (and was read back) on return already. */
static int if_sync(void *ctx)
{
    return flush_held(ctx);
}

static const struct flash_ops internal_ops = {if_read, if_program, if_erase, if_sync};

int internal_flash_init(struct internal_flash *f, uint32_t base, uint32_t size)
{
    if (!size || base % INTERNAL_FLASH_BLOCK || size % INTERNAL_FLASH_BLOCK ||
        base > INTERNAL_FLASH_BYTES || size > INTERNAL_FLASH_BYTES - base)
        return FLASH_ERR_RANGE;
    f->flash.geo.size = size;
    f->flash.geo.block_size = INTERNAL_FLASH_BLOCK;
    f->flash.geo.page_size = INTERNAL_FLASH_PAGE;
    f->flash.ops = &internal_ops;
    f->flash.ctx = f;
    f->base = base;
    f->held = 0;
    return FLASH_OK;
}
