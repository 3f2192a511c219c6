/*
 * LiteX simulation module: the SoC's SimFlash window (sim/flash.py)
 * backed by a host file, behaving like SPI NOR flash (docs/sim_flash.md).
 *
 * The file is mapped MAP_SHARED, so every completed store is in the kernel's
 * page cache at once: killing the simulator (SIGKILL, the power-cut test)
 * loses nothing the SoC was told is done.
 *
 * Window (byte offsets, one request per bus cycle from the gateware bridge):
 *   [0, size)            read: flash bytes; write: program, new = old & data
 *                        (a program can only clear bits, like the chip)
 *   0x1000000 ID         read: 0x314C4653 ("SFL1")
 *   0x1000004 SIZE       read: flash bytes
 *   0x1000008 STATUS     read: sticky errors since the last STATUS read
 *                        (bit 0: a program tried to set a 0 bit to 1,
 *                        bit 1: bad access), then clears them
 *   0x1000010 ERASE_SECTOR  write: byte address of a 4 KiB sector -> 0xFF
 *   0x1000014 ERASE_BLOCK   write: byte address of a 64 KiB block -> 0xFF
 * Everything else in the window is a bad access (reads give all ones).
 *
 * Time: the chip is busy for program_cycles after the first write of a page
 * program (the first word written to a page after a STATUS read, an erase or
 * a write to another page) and for the erase cycles after an erase. Any
 * access while busy waits, so firmware pays for busy time only when it
 * touches the flash again (STATUS is the usual place). Operations take effect
 * at once; the busy time only delays what follows.
 *
 * Arguments (JSON from sim_config.js):
 *   path                 the flash image; created filled with 0xFF when
 *                        missing or empty, refused when of another size
 *   size                 bytes (multiple of 64 KiB, at most 16 MiB; default 16 MiB)
 *   program_cycles       busy sys_clk cycles per page program (default 64)
 *   sector_erase_cycles  busy cycles per 4 KiB erase (default 1024)
 *   block_erase_cycles   busy cycles per 64 KiB erase (default 4096)
 *   power_cut_file       optional: a file the test harness writes to cut the
 *                        power at an exact cycle. Every FLASH_POWER_CUT_POLL cycles
 *                        the module looks for it; when it holds a number N it
 *                        is removed and the power goes N sys_clk cycles later:
 *                        "[flash_file] power cut at cycle C" on stdout, then
 *                        SIGKILL of the whole simulator (no exit handler, no
 *                        msync: the image keeps exactly what was programmed).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "error.h"
#include "modules.h"
#include "../flash_image/flash_image.h"

#define ARRAY_MAX      (16u << 20)
#define CTRL_BASE      0x1000000u
#define REG_ID         (CTRL_BASE + 0x00)
#define REG_SIZE       (CTRL_BASE + 0x04)
#define REG_STATUS     (CTRL_BASE + 0x08)
#define REG_ERASE_SECT (CTRL_BASE + 0x10)
#define REG_ERASE_BLK  (CTRL_BASE + 0x14)
#define FLASH_ID       0x314C4653u
#define STATUS_NOR     1u
#define STATUS_BAD     2u
#define PAGE_SIZE_NOR  256u
#define SECTOR_SIZE    4096u
#define BLOCK_SIZE     65536u
#define MAX_REPORTS    10

struct session {
    /* pads */
    char *sys_clk;
    char *req_valid, *req_we, *req_sel;
    uint32_t *req_addr, *req_data;
    char *resp_valid, *present;
    uint32_t *resp_data;
    clk_edge_state_t edge;

    char *path;
    uint8_t *mem;
    uint32_t size;
    unsigned program_cycles, sector_erase_cycles, block_erase_cycles;

    int pending;         /* a request is waiting for its answer: */
    uint32_t addr, data; /* its pads, latched the cycle it started */
    int we;
    unsigned sel;
    uint64_t busy;       /* cycles until the chip accepts the next access */
    int64_t open_page;   /* page of the program in progress, -1: none */
    uint32_t status;

    uint64_t cycle;      /* sys_clk rising edges since the simulator started */
    char *power_cut_file;
    uint64_t power_cut_at; /* cycle of the armed power cut, 0: none */

    /* counters, printed at exit */
    uint64_t reads, words_programmed, page_programs, erases, nor_violations, bad_accesses;
};

static int map_file(struct session *s)
{
    int fresh, rc = flash_image_map("flash_file", s->path, s->size, &s->mem, &fresh);

    if (rc != RC_OK)
        return rc;
    printf("[flash_file] %s: %u KiB NOR flash (%s)\n", s->path, (unsigned)(s->size >> 10),
           fresh ? "new, erased" : "kept");
    fflush(stdout);
    return RC_OK;
}

/* LiteX module interface --------------------------------------------------- */

static int flash_file_start(void *base)
{
    return RC_OK;
}

static int flash_file_new(void **sess, char *args)
{
    struct session *s;
    json_object *jargs = args ? json_tokener_parse(args) : NULL, *v;
    long long size;
    int rc;

    s = calloc(1, sizeof(*s));
    if (!s)
        return RC_NOENMEM;
    s->path = flash_image_path_arg("flash_file", jargs);
    if (!s->path)
        return RC_INVARG;
    size = module_arg_int(jargs, "size", ARRAY_MAX);
    if (size <= 0 || size > ARRAY_MAX || size % BLOCK_SIZE) {
        fprintf(stderr, "[flash_file] size %lld: must be a multiple of 64 KiB, at most 16 MiB\n", size);
        return RC_INVARG;
    }
    s->size = (uint32_t)size;
    s->program_cycles = (unsigned)module_arg_int(jargs, "program_cycles", 64);
    s->sector_erase_cycles = (unsigned)module_arg_int(jargs, "sector_erase_cycles", 1024);
    s->block_erase_cycles = (unsigned)module_arg_int(jargs, "block_erase_cycles", 4096);
    s->open_page = -1;
    if (json_object_object_get_ex(jargs, "power_cut_file", &v) && *json_object_get_string(v))
        s->power_cut_file = strdup(json_object_get_string(v));
    json_object_put(jargs);
    rc = map_file(s);
    if (rc != RC_OK)
        return rc;
    *sess = s;
    return RC_OK;
}

static int bind_pad(struct pad_s *p, const char *name, size_t width, void **dst)
{
    if (strcmp(p->name, name))
        return 0;
    if (p->len != width) {
        fprintf(stderr, "[flash_file] pad %s is %zu bits, expected %zu\n", name, p->len, width);
        return -1;
    }
    *dst = p->signal;
    return 1;
}

static int flash_file_add_pads(void *sess, struct pad_list_s *plist)
{
    struct session *s = sess;
    struct pad_s *p;

    if (!s || !plist)
        return RC_INVARG;
    for (p = plist->pads; p->name; p++) {
        if (!strcmp(plist->name, "flash")) {
            if (bind_pad(p, "req_valid", 1, (void **)&s->req_valid) < 0 ||
                bind_pad(p, "req_we", 1, (void **)&s->req_we) < 0 ||
                bind_pad(p, "req_sel", 4, (void **)&s->req_sel) < 0 ||
                bind_pad(p, "req_addr", 25, (void **)&s->req_addr) < 0 ||
                bind_pad(p, "req_data", 32, (void **)&s->req_data) < 0 ||
                bind_pad(p, "resp_valid", 1, (void **)&s->resp_valid) < 0 ||
                bind_pad(p, "resp_data", 32, (void **)&s->resp_data) < 0 ||
                bind_pad(p, "present", 1, (void **)&s->present) < 0)
                return RC_INVARG;
        }
        if (!strcmp(plist->name, "sys_clk") && !strcmp(p->name, "sys_clk"))
            s->sys_clk = p->signal;
    }
    if (!strcmp(plist->name, "flash")) {
        if (!s->req_valid || !s->req_we || !s->req_sel || !s->req_addr || !s->req_data ||
            !s->resp_valid || !s->resp_data || !s->present) {
            fprintf(stderr, "[flash_file] the flash pads are incomplete: SoC and module disagree\n");
            return RC_INVARG;
        }
        *s->present = 1;
    }
    return RC_OK;
}

static void bad_access(struct session *s, const char *what, uint32_t addr)
{
    if (s->bad_accesses++ < MAX_REPORTS)
        fprintf(stderr, "[flash_file] bad access: %s at 0x%07x\n", what, (unsigned)addr);
    s->status |= STATUS_BAD;
}

static void program_word(struct session *s, uint32_t addr, uint32_t data, unsigned sel)
{
    int64_t page = addr / PAGE_SIZE_NOR;
    unsigned i;
    int violated = 0;

    if (page != s->open_page) {
        s->open_page = page;
        s->page_programs++;
        s->busy = s->program_cycles;
    }
    for (i = 0; i < 4; i++) {
        uint8_t old, byte = (uint8_t)(data >> (8 * i));
        if (!(sel & (1u << i)))
            continue;
        old = s->mem[addr + i];
        if ((old & byte) != byte)
            violated = 1;
        s->mem[addr + i] = old & byte;
    }
    s->words_programmed++;
    if (violated) {
        if (s->nor_violations++ < MAX_REPORTS)
            fprintf(stderr, "[flash_file] NOR violation: program of 0x%08x (sel %x) at 0x%06x would set "
                            "0 bits; kept old & data\n", (unsigned)data, sel, (unsigned)addr);
        s->status |= STATUS_NOR;
    }
}

static void erase(struct session *s, uint32_t addr, uint32_t unit, unsigned cycles)
{
    if (addr % unit || addr >= s->size) {
        bad_access(s, unit == SECTOR_SIZE ? "sector erase address" : "block erase address", addr);
        return;
    }
    memset(s->mem + addr, 0xFF, unit);
    s->erases++;
    s->busy = cycles;
    s->open_page = -1;
}

/* One bus request: returns the read data (ignored for writes). */
static uint32_t serve(struct session *s, uint32_t addr, int we, uint32_t data, unsigned sel)
{
    uint32_t value;

    if (addr < s->size) {
        if (we) {
            program_word(s, addr, data, sel);
            return 0;
        }
        s->reads++;
        memcpy(&value, s->mem + addr, 4); /* host and SoC are both little-endian */
        return value;
    }
    if (we) {
        if (addr == REG_ERASE_SECT)
            erase(s, data, SECTOR_SIZE, s->sector_erase_cycles);
        else if (addr == REG_ERASE_BLK)
            erase(s, data, BLOCK_SIZE, s->block_erase_cycles);
        else
            bad_access(s, "write", addr);
        return 0;
    }
    switch (addr) {
    case REG_ID:
        return FLASH_ID;
    case REG_SIZE:
        return s->size;
    case REG_STATUS:
        value = s->status;
        s->status = 0;
        s->open_page = -1;
        return value;
    default:
        bad_access(s, "read", addr);
        return 0xFFFFFFFFu;
    }
}

/* The SoC's bridge (sim/flash.py) registers resp_valid and resp_data, so the
 * answer for cycle c+1 is driven at the falling edge of cycle c, where the
 * request that starts in cycle c is on the req_* pads. Each falling edge does
 * the work of the rising edge that follows it (`cycle + 1`): the busy count
 * goes down, and the pending request is answered when the chip is free. */
static int flash_file_tick(void *sess, uint64_t time_ps)
{
    struct session *s = sess;
    uint64_t next;

    if (!s->sys_clk)
        return RC_OK;
    switch (clk_edge(&s->edge, *s->sys_clk)) {
    case CLK_EDGE_RISING:
        s->cycle++;
        return RC_OK;
    case CLK_EDGE_FALLING:
        break;
    default:
        return RC_OK;
    }
    next = s->cycle + 1;
    if (s->power_cut_file) {
        if (s->power_cut_at == next) {
            printf("[flash_file] power cut at cycle %llu\n", (unsigned long long)next);
            fflush(stdout);
            kill(getpid(), SIGKILL);
        }
        if (!s->power_cut_at && next % FLASH_POWER_CUT_POLL == 0)
            s->power_cut_at = flash_power_cut_poll("flash_file", s->power_cut_file, next);
    }
    if (s->busy)
        s->busy--;
    if (*s->resp_valid) {
        /* answered for this cycle, where the bridge acks it */
        *s->resp_valid = 0;
        s->pending = 0;
        return RC_OK;
    }
    if (!s->pending) {
        if (!*s->req_valid)
            return RC_OK;
        s->pending = 1;
        s->addr = *s->req_addr;
        s->we = *s->req_we;
        s->data = *s->req_data;
        s->sel = (unsigned)*s->req_sel & 0xF;
    }
    if (s->busy)
        return RC_OK;
    *s->resp_data = serve(s, s->addr, s->we, s->data, s->sel);
    *s->resp_valid = 1;
    return RC_OK;
}

static int flash_file_close(void *sess)
{
    struct session *s = sess;
    fprintf(stderr,
            "[flash_file] reads %llu, words programmed %llu, page programs %llu, erases %llu, "
            "NOR violations %llu, bad accesses %llu\n",
            (unsigned long long)s->reads, (unsigned long long)s->words_programmed,
            (unsigned long long)s->page_programs, (unsigned long long)s->erases,
            (unsigned long long)s->nor_violations, (unsigned long long)s->bad_accesses);
    msync(s->mem, s->size, MS_SYNC);
    munmap(s->mem, s->size);
    free(s->power_cut_file);
    free(s->path);
    free(s);
    return RC_OK;
}

static struct ext_module_s ext_mod = {
    "flash_file",
    flash_file_start,
    flash_file_new,
    flash_file_add_pads,
    flash_file_close,
    flash_file_tick,
};

int litex_sim_ext_module_init(int (*register_module)(struct ext_module_s *))
{
    return register_module(&ext_mod);
}
