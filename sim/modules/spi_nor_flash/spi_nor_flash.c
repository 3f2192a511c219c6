/*
 * LiteX simulation module: a SPI NOR flash chip on the SoC's `spiflash` pads
 * (clk, cs_n, mosi, miso: single-bit SPI mode 0), for LiteSPI's 1x SDR PHY
 * (litedav-soc --spi-flash, docs/sim_flash.md). The array is a host file mapped
 * MAP_SHARED, so what the SoC programmed survives the simulator (a reboot is
 * the next run on the same file).
 *
 * Commands (the subset of the JEDEC SPI NOR set a store driver needs):
 *   0x9F RDID   3 ID bytes (manufacturer, type, capacity), then 0xFF
 *   0x05 RDSR   status register, repeated: bit 0 WIP (busy), bit 1 WEL
 *   0x06 WREN   sets WEL;  0x04 WRDI clears it
 *   0x03 READ   24-bit address, then bytes from there on, wrapping at the end
 *   0x02 PP     24-bit address, 1..256 data bytes; the address wraps inside its
 *               256-byte page; applied at CS# rising: new = old & data (NOR:
 *               a program only clears bits)
 *   0x20 SE     4 KiB sector erase;  0xD8 BE: 64 KiB block erase (to 0xFF)
 * As on a chip: PP/SE/BE need WEL and clear it; they and WREN/WRDI act only
 * when CS# rises on a byte boundary (SE/BE: right after the address); while WIP
 * is set every command but RDSR is ignored (MISO then stays high, as a pulled-up
 * bus reads). Operations take effect at once; busy time only delays what
 * follows, as the chip's WIP bit says.
 *
 * Timing: sampled once per sys_clk rising edge. MOSI is taken when the pad
 * clock has risen since the last edge, and the next MISO bit is put out when it
 * has fallen (a chip's output on the falling SCK edge), so the SoC sees it from
 * the next edge on: the PHY samples MISO as it was just before SCK rises.
 *
 * Arguments (JSON from sim_config.js):
 *   path                 the flash image; created erased (0xFF) when missing or
 *                        empty, refused when of another size
 *   size                 bytes (multiple of 64 KiB, at most 16 MiB; default 2 MiB)
 *   jedec_id             24-bit RDID answer (default 0xC84015: GigaDevice GD25Q16)
 *   program_cycles       WIP sys_clk cycles per page program (default 2000)
 *   sector_erase_cycles  WIP cycles per 4 KiB erase (default 20000)
 *   block_erase_cycles   WIP cycles per 64 KiB erase (default 80000)
 *   stuck_busy           1: WIP never clears after the first program or erase
 *                        (a failed chip: the driver must time out, not hang)
 *   stats                optional: a file rewritten (JSON) after every program and
 *                        erase with the chip's counters (commands, bytes read and
 *                        programmed, page programs, erases, commands ignored while
 *                        busy); LiteX's sim never calls a module's close(), so
 *                        nothing is printed at exit
 */
#include <errno.h>
#include <fcntl.h>
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

#define SIZE_MAX_BYTES (16u << 20)
#define PAGE_BYTES     256u
#define SECTOR_BYTES   4096u
#define BLOCK_BYTES    65536u
#define MAX_REPORTS    10

enum { CMD_PP = 0x02, CMD_READ = 0x03, CMD_WRDI = 0x04, CMD_RDSR = 0x05, CMD_WREN = 0x06,
       CMD_SE = 0x20, CMD_RDID = 0x9F, CMD_BE = 0xD8 };
enum { SR_WIP = 0x01, SR_WEL = 0x02 };

struct session {
    /* pads */
    char *sys_clk, *clk, *cs_n, *mosi, *miso;
    clk_edge_state_t edge;
    int last_sck, last_cs_n;

    char *path;
    uint8_t *mem;
    uint32_t size, jedec_id;
    unsigned program_cycles, sector_erase_cycles, block_erase_cycles;
    int stuck_busy;

    /* the chip */
    uint64_t busy;       /* cycles until WIP clears; UINT64_MAX: never (stuck_busy) */
    int wel;

    /* the transaction in progress (CS# low) */
    int selected, ignored;
    uint32_t bits;       /* bits clocked in */
    uint8_t in_byte;
    uint8_t opcode;
    uint32_t addr;       /* address being gathered, then the next byte's */
    uint32_t data_bytes; /* PP: data bytes received */
    uint8_t page[PAGE_BYTES];
    uint8_t page_set[PAGE_BYTES];
    int out_valid;       /* an output byte is being shifted out */
    uint8_t out_byte;
    int out_bit;         /* next bit of out_byte to put on MISO, 7..0 */

    /* counters, written to the stats file */
    char *stats;
    uint64_t commands, bytes_read, page_programs, bytes_programmed, erases, busy_ignored,
        nor_noops, unknown;
};

static int map_file(struct session *s)
{
    int fresh, rc = flash_image_map("spi_nor_flash", s->path, s->size, &s->mem, &fresh);

    if (rc != RC_OK)
        return rc;
    printf("[spi_nor_flash] %s: %u KiB SPI NOR, JEDEC ID %06x (%s)%s\n", s->path,
           (unsigned)(s->size >> 10), (unsigned)s->jedec_id, fresh ? "new, erased" : "kept",
           s->stuck_busy ? ", stuck busy after the first program or erase" : "");
    fflush(stdout);
    return RC_OK;
}

static int spi_nor_start(void *base)
{
    return RC_OK;
}

static int spi_nor_new(void **sess, char *args)
{
    struct session *s;
    json_object *jargs = args ? json_tokener_parse(args) : NULL, *v;
    long long size;
    int rc;

    s = calloc(1, sizeof(*s));
    if (!s)
        return RC_NOENMEM;
    s->path = flash_image_path_arg("spi_nor_flash", jargs);
    if (!s->path)
        return RC_INVARG;
    size = module_arg_int(jargs, "size", 2u << 20);
    if (size <= 0 || size > SIZE_MAX_BYTES || size % BLOCK_BYTES) {
        fprintf(stderr, "[spi_nor_flash] size %lld: must be a multiple of 64 KiB, at most 16 MiB\n", size);
        return RC_INVARG;
    }
    s->size = (uint32_t)size;
    s->jedec_id = (uint32_t)module_arg_int(jargs, "jedec_id", 0xC84015) & 0xFFFFFFu;
    s->program_cycles = (unsigned)module_arg_int(jargs, "program_cycles", 2000);
    s->sector_erase_cycles = (unsigned)module_arg_int(jargs, "sector_erase_cycles", 20000);
    s->block_erase_cycles = (unsigned)module_arg_int(jargs, "block_erase_cycles", 80000);
    s->stuck_busy = module_arg_int(jargs, "stuck_busy", 0) != 0;
    if (json_object_object_get_ex(jargs, "stats", &v) && *json_object_get_string(v))
        s->stats = strdup(json_object_get_string(v));
    s->last_cs_n = 1;
    json_object_put(jargs);
    rc = map_file(s);
    if (rc != RC_OK)
        return rc;
    *sess = s;
    return RC_OK;
}

static int bind_pad(struct pad_s *p, const char *name, char **dst)
{
    if (strcmp(p->name, name))
        return 0;
    if (p->len != 1) {
        fprintf(stderr, "[spi_nor_flash] pad %s is %zu bits, expected 1\n", name, p->len);
        return -1;
    }
    *dst = p->signal;
    return 1;
}

static int spi_nor_add_pads(void *sess, struct pad_list_s *plist)
{
    struct session *s = sess;
    struct pad_s *p;

    if (!s || !plist)
        return RC_INVARG;
    for (p = plist->pads; p->name; p++) {
        if (!strcmp(plist->name, "spiflash")) {
            if (bind_pad(p, "clk", &s->clk) < 0 || bind_pad(p, "cs_n", &s->cs_n) < 0 ||
                bind_pad(p, "mosi", &s->mosi) < 0 || bind_pad(p, "miso", &s->miso) < 0)
                return RC_INVARG;
        }
        if (!strcmp(plist->name, "sys_clk") && !strcmp(p->name, "sys_clk"))
            s->sys_clk = p->signal;
    }
    if (!strcmp(plist->name, "spiflash")) {
        if (!s->clk || !s->cs_n || !s->mosi || !s->miso) {
            fprintf(stderr, "[spi_nor_flash] the spiflash pads are incomplete: SoC and module disagree\n");
            return RC_INVARG;
        }
        *s->miso = 1;
    }
    return RC_OK;
}

static void write_stats(struct session *s)
{
    char tmp[4096];
    FILE *f;

    if (!s->stats || snprintf(tmp, sizeof(tmp), "%s.tmp", s->stats) >= (int)sizeof(tmp))
        return;
    f = fopen(tmp, "w");
    if (!f)
        return;
    fprintf(f, "{\"commands\": %llu, \"bytes_read\": %llu, \"page_programs\": %llu, "
               "\"bytes_programmed\": %llu, \"erases\": %llu, \"ignored_while_busy\": %llu, "
               "\"unknown_commands\": %llu, \"nor_noops\": %llu}\n",
            (unsigned long long)s->commands, (unsigned long long)s->bytes_read,
            (unsigned long long)s->page_programs, (unsigned long long)s->bytes_programmed,
            (unsigned long long)s->erases, (unsigned long long)s->busy_ignored,
            (unsigned long long)s->unknown, (unsigned long long)s->nor_noops);
    fclose(f);
    rename(tmp, s->stats);
}

/* A program or erase was taken: WIP for cycles. */
static void set_busy(struct session *s, unsigned cycles)
{
    s->busy = s->stuck_busy ? UINT64_MAX : cycles ? cycles : 1;
    write_stats(s);
}

static void start_output(struct session *s, uint8_t byte)
{
    s->out_byte = byte;
    s->out_bit = 7;
    s->out_valid = 1;
}

/* The byte to shift out next, once the command's input part is complete. */
static int next_output(struct session *s, uint8_t *byte)
{
    switch (s->opcode) {
    case CMD_RDID:
        /* bytes after the command: 3 ID bytes, then ones */
        *byte = s->bits / 8 - 1 < 3 ? (uint8_t)(s->jedec_id >> (8 * (2 - (s->bits / 8 - 1)))) : 0xFF;
        return 1;
    case CMD_RDSR:
        *byte = (s->busy ? SR_WIP : 0) | (s->wel ? SR_WEL : 0);
        return 1;
    case CMD_READ:
        if (s->bits < 32)
            return 0;
        *byte = s->mem[s->addr];
        s->addr = (s->addr + 1) % s->size;
        s->bytes_read++;
        return 1;
    default:
        return 0;
    }
}

static void byte_in(struct session *s, uint8_t byte)
{
    uint32_t n = s->bits / 8;  /* bytes so far, this one included */

    if (n == 1) {
        s->opcode = byte;
        s->commands++;
        if (s->busy && byte != CMD_RDSR) {
            s->ignored = 1;
            s->busy_ignored++;
            return;
        }
        switch (byte) {
        case CMD_PP: case CMD_READ: case CMD_WRDI: case CMD_RDSR: case CMD_WREN:
        case CMD_SE: case CMD_RDID: case CMD_BE:
            break;
        default:
            if (s->unknown++ < MAX_REPORTS)
                fprintf(stderr, "[spi_nor_flash] unknown command 0x%02x ignored\n", byte);
            s->ignored = 1;
        }
        return;
    }
    if (n <= 4 && (s->opcode == CMD_READ || s->opcode == CMD_PP || s->opcode == CMD_SE ||
                   s->opcode == CMD_BE)) {
        s->addr = ((s->addr << 8) | byte) & 0xFFFFFFu;
        if (n == 4) {
            s->addr %= s->size;
            if (s->opcode == CMD_PP) {
                memset(s->page_set, 0, sizeof(s->page_set));
                s->data_bytes = 0;
            }
        }
        return;
    }
    if (s->opcode == CMD_PP) {
        uint32_t at = (s->addr + s->data_bytes) % PAGE_BYTES;  /* wraps inside the page */
        s->page[at] = byte;
        s->page_set[at] = 1;
        s->data_bytes++;
    }
}

/* CS# rose: commands that act at the end of the transaction. */
static void deselect(struct session *s)
{
    uint32_t i, base;

    s->selected = 0;
    s->out_valid = 0;
    *s->miso = 1;
    if (s->ignored || s->bits == 0)
        return;
    if (s->bits % 8) {
        /* a chip ignores a write command not ended on a byte boundary */
        return;
    }
    switch (s->opcode) {
    case CMD_WREN:
        if (s->bits == 8)
            s->wel = 1;
        break;
    case CMD_WRDI:
        if (s->bits == 8)
            s->wel = 0;
        break;
    case CMD_PP:
        if (!s->wel || s->bits < 40)
            break;
        base = s->addr - s->addr % PAGE_BYTES;
        for (i = 0; i < PAGE_BYTES; i++) {
            uint8_t old;
            if (!s->page_set[i])
                continue;
            old = s->mem[base + i];
            if ((old & s->page[i]) != s->page[i] && s->nor_noops++ < MAX_REPORTS)
                fprintf(stderr, "[spi_nor_flash] program of 0x%02x over 0x%02x at 0x%06x: 0 bits "
                                "stay 0\n", s->page[i], old, (unsigned)(base + i));
            s->mem[base + i] = old & s->page[i];
            s->bytes_programmed++;
        }
        s->page_programs++;
        s->wel = 0;
        set_busy(s, s->program_cycles);
        break;
    case CMD_SE:
    case CMD_BE:
        if (!s->wel || s->bits != 32)
            break;
        {
            uint32_t unit = s->opcode == CMD_SE ? SECTOR_BYTES : BLOCK_BYTES;
            memset(s->mem + (s->addr - s->addr % unit), 0xFF, unit);
            s->erases++;
            s->wel = 0;
            set_busy(s, s->opcode == CMD_SE ? s->sector_erase_cycles : s->block_erase_cycles);
        }
        break;
    default:
        break;
    }
}

static int spi_nor_tick(void *sess, uint64_t time_ps)
{
    struct session *s = sess;
    int sck, cs_n;

    if (!s->sys_clk || !s->clk || !clk_pos_edge(&s->edge, *s->sys_clk))
        return RC_OK;
    if (s->busy && s->busy != UINT64_MAX)
        s->busy--;
    sck = *s->clk & 1;
    cs_n = *s->cs_n & 1;
    if (cs_n) {
        if (!s->last_cs_n && s->selected)
            deselect(s);
        s->last_cs_n = cs_n;
        s->last_sck = sck;
        return RC_OK;
    }
    if (s->last_cs_n) {
        /* CS# fell: a new transaction */
        s->selected = 1;
        s->ignored = 0;
        s->bits = 0;
        s->addr = 0;
        s->out_valid = 0;
    }
    s->last_cs_n = cs_n;
    if (sck && !s->last_sck) {
        /* rising SCK: take MOSI */
        s->in_byte = (uint8_t)((s->in_byte << 1) | (*s->mosi & 1));
        s->bits++;
        if (s->bits % 8 == 0 && !s->ignored)
            byte_in(s, s->in_byte);
    } else if (!sck && s->last_sck && !s->ignored) {
        /* falling SCK: put out the next bit, starting a byte on a byte boundary */
        uint8_t byte;
        if ((!s->out_valid || s->out_bit < 0) && s->bits % 8 == 0 && next_output(s, &byte))
            start_output(s, byte);
        if (s->out_valid && s->out_bit >= 0)
            *s->miso = (s->out_byte >> s->out_bit--) & 1;
    }
    s->last_sck = sck;
    return RC_OK;
}

static int spi_nor_close(void *sess)
{
    struct session *s = sess;
    msync(s->mem, s->size, MS_SYNC);
    munmap(s->mem, s->size);
    free(s->stats);
    free(s->path);
    free(s);
    return RC_OK;
}

static struct ext_module_s ext_mod = {
    "spi_nor_flash",
    spi_nor_start,
    spi_nor_new,
    spi_nor_add_pads,
    spi_nor_close,
    spi_nor_tick,
};

int litex_sim_ext_module_init(int (*register_module)(struct ext_module_s *))
{
    return register_module(&ext_mod);
}
