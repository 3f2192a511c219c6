/*
 * LiteX simulation module: a SPI NOR flash chip on one of the SoC's SPI pad
 * groups (clk, cs_n, mosi, miso: single-bit SPI mode 0), for LiteSPI's 1x SDR
 * PHY (litedav-soc --spi-flash, docs/sim_flash.md, docs/spi_flash.md). A
 * simulator may run several sessions, one per pad group: the boot chip on
 * `spiflash`, the store flash on `storeflash`. The array is a host file mapped
 * MAP_SHARED, so what the SoC programmed survives the simulator (a reboot is
 * the next run on the same file).
 *
 * Commands (the subset of the JEDEC SPI NOR set a store driver needs):
 *   0x9F RDID   3 ID bytes (manufacturer, type, capacity), then 0xFF
 *   0x05 RDSR   status register, repeated: bit 0 WIP (busy), bit 1 WEL
 *   0x06 WREN   sets WEL;  0x04 WRDI clears it
 *   0x03 READ   24-bit address, then bytes from there on
 *   0x02 PP     24-bit address, 1..256 data bytes; the address wraps inside its
 *               256-byte page; applied at CS# rising: new = old & data (NOR:
 *               a program only clears bits)
 *   0x20 SE     4 KiB sector erase;  0xD8 BE: 64 KiB block erase (to 0xFF)
 *   0x13 READ4, 0x12 PP4, 0x21 SE4, 0xDC BE4: the same with a 32-bit address
 *               (Micron's and JEDEC's 4-byte-address commands)
 * A 24-bit address reaches the lowest 16 MiB only, as on a Micron MT25Q in its
 * default 3-byte mode with the extended address register at 0: READ wraps at
 * 16 MiB on a larger chip. Every address wraps at the chip's end.
 * As on a chip: program and erase commands need WEL and clear it; they and
 * WREN/WRDI act only when CS# rises on a byte boundary (erases: right after
 * the address); while WIP is set every command but RDSR is ignored (MISO then
 * stays high, as a pulled-up bus reads). Operations take effect at once; busy
 * time only delays what follows, as the chip's WIP bit says, except that a
 * power cut while busy tears the operation (below).
 *
 * Timing: sampled once per sys_clk rising edge. MOSI is taken when the pad
 * clock has risen since the last edge, and the next MISO bit is put out when it
 * has fallen (a chip's output on the falling SCK edge), so the SoC sees it from
 * the next edge on: the PHY samples MISO as it was just before SCK rises.
 *
 * Arguments (JSON from sim_config.js; an unknown key or a value of the wrong
 * type is refused):
 *   path                 the flash image; created erased (0xFF) when missing or
 *                        empty, refused when of another size
 *   pads                 the pad group the chip is on (default "spiflash"); the
 *                        console lines say it: "[spi_nor_flash PADS] ..."
 *   size                 bytes (multiple of 64 KiB, at most 64 MiB; default 2 MiB)
 *   jedec_id             24-bit RDID answer (default 0xC84015: GigaDevice GD25Q16;
 *                        the Pmod SF3's Micron MT25QL256: 0x20BA19)
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
 *   power_cut_file       optional: a file the test harness writes to cut the
 *                        power at an exact cycle, as flash_file's. Every
 *                        FLASH_POWER_CUT_POLL cycles the module looks for it; when it
 *                        holds a number N it is removed, "[spi_nor_flash PADS]
 *                        power cut armed for cycle C" is printed, and N sys_clk
 *                        cycles later "[spi_nor_flash PADS] power cut at cycle C",
 *                        then SIGKILL of the whole simulator. A program or erase
 *                        still busy then is torn first (the line says so): a
 *                        pseudo-random half of the bits it changed get their old
 *                        value back, so a torn program cleared only some of its
 *                        bits and a torn erase set only some of its unit's 0 bits
 *   seed                 the tear's pseudo-random seed, mixed with the cycle of
 *                        the cut (default 1): the same run tears the same bits
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

#define SIZE_MAX_BYTES (64u << 20)
#define ADDR3_SPAN     (16u << 20)  /* what a 24-bit address reaches */
#define PAGE_BYTES     256u
#define SECTOR_BYTES   4096u
#define BLOCK_BYTES    65536u
#define MAX_REPORTS    10
#define TAG_BYTES      80

enum { CMD_PP = 0x02, CMD_READ = 0x03, CMD_WRDI = 0x04, CMD_RDSR = 0x05, CMD_WREN = 0x06,
       CMD_PP4 = 0x12, CMD_READ4 = 0x13, CMD_SE = 0x20, CMD_SE4 = 0x21, CMD_RDID = 0x9F,
       CMD_BE = 0xD8, CMD_BE4 = 0xDC };
enum { SR_WIP = 0x01, SR_WEL = 0x02 };
enum { OP_PROGRAM, OP_ERASE };

static const char *const ARG_KEYS[] = {
    "path", "pads", "size", "jedec_id", "program_cycles", "sector_erase_cycles",
    "block_erase_cycles", "stuck_busy", "stats", "power_cut_file", "seed", NULL,
};

struct session {
    char tag[TAG_BYTES]; /* "spi_nor_flash PADS": every console line's prefix */
    char *pads;          /* the pad group's name */

    /* pads */
    char *sys_clk, *clk, *cs_n, *mosi, *miso;
    clk_edge_state_t edge;
    int last_sck, last_cs_n;
    int told_unbound;    /* said once that the pad group never came */

    char *path;
    uint8_t *mem;
    uint32_t size, jedec_id;
    unsigned program_cycles, sector_erase_cycles, block_erase_cycles;
    int stuck_busy;

    /* the chip */
    uint64_t busy;       /* cycles until WIP clears; UINT64_MAX: never (stuck_busy) */
    int wel;

    /* the operation WIP is about, for a power cut to tear: its unit of the
     * array (program: the page; erase: the sector or block) as it was before */
    int op_kind;
    uint32_t op_addr, op_bytes;
    uint8_t *op_before;  /* BLOCK_BYTES */

    /* the transaction in progress (CS# low) */
    int selected, ignored;
    uint32_t bits;       /* bits clocked in */
    uint8_t in_byte;
    uint8_t opcode;
    uint32_t addr_bytes; /* the opcode's address bytes: 0, 3 or 4 */
    uint32_t span;       /* where its address wraps: the chip, or its lowest 16 MiB */
    uint32_t addr;       /* address being gathered, then the next byte's */
    uint32_t data_bytes; /* PP: data bytes received */
    uint8_t page[PAGE_BYTES];
    uint8_t page_set[PAGE_BYTES];
    int out_valid;       /* an output byte is being shifted out */
    uint8_t out_byte;
    int out_bit;         /* next bit of out_byte to put on MISO, 7..0 */

    uint64_t cycle;      /* sys_clk rising edges since the simulator started */
    char *power_cut_file;
    uint64_t power_cut_at; /* cycle of the armed power cut, 0: none */
    uint64_t seed;

    /* counters, written to the stats file */
    char *stats;
    uint64_t commands, bytes_read, page_programs, bytes_programmed, erases, busy_ignored,
        nor_noops, unknown;
};

static void free_session(struct session *s)
{
    free(s->op_before);
    free(s->power_cut_file);
    free(s->stats);
    free(s->path);
    free(s->pads);
    free(s);
}

static int map_file(struct session *s)
{
    int fresh, rc = flash_image_map(s->tag, s->path, s->size, &s->mem, &fresh);

    if (rc != RC_OK)
        return rc;
    printf("[%s] %s: %u KiB SPI NOR, JEDEC ID %06x (%s)%s\n", s->tag, s->path,
           (unsigned)(s->size >> 10), (unsigned)s->jedec_id, fresh ? "new, erased" : "kept",
           s->stuck_busy ? ", stuck busy after the first program or erase" : "");
    fflush(stdout);
    return RC_OK;
}

/* Argument checks: a misspelt key or a quoted number would otherwise be a
 * silent default. */
static int check_keys(const char *tag, json_object *jargs)
{
    json_object_object_foreach(jargs, key, val) {
        const char *const *k;
        (void)val;
        for (k = ARG_KEYS; *k && strcmp(*k, key); k++)
            ;
        if (!*k) {
            fprintf(stderr, "[%s] unknown argument \"%s\" (path, pads, size, jedec_id, program_cycles, "
                            "sector_erase_cycles, block_erase_cycles, stuck_busy, stats, power_cut_file, "
                            "seed)\n", tag, key);
            return -1;
        }
    }
    return 0;
}

static int int_arg(const char *tag, json_object *jargs, const char *key, long long def, long long min,
                   long long max, long long *out)
{
    json_object *v;

    *out = def;
    if (!json_object_object_get_ex(jargs, key, &v))
        return 0;
    /* a flag (0 .. 1) may be given as true / false too */
    if (!json_object_is_type(v, json_type_int) &&
        !(min == 0 && max == 1 && json_object_is_type(v, json_type_boolean))) {
        fprintf(stderr, "[%s] \"%s\" must be an integer\n", tag, key);
        return -1;
    }
    *out = json_object_get_int64(v);
    if (*out < min || *out > max) {
        fprintf(stderr, "[%s] \"%s\" %lld: must be %lld .. %lld\n", tag, key, *out, min, max);
        return -1;
    }
    return 0;
}

/* An optional string argument: *out NULL when absent or empty. */
static int string_arg(const char *tag, json_object *jargs, const char *key, char **out)
{
    json_object *v;

    *out = NULL;
    if (!json_object_object_get_ex(jargs, key, &v))
        return 0;
    if (!json_object_is_type(v, json_type_string)) {
        fprintf(stderr, "[%s] \"%s\" must be a string\n", tag, key);
        return -1;
    }
    if (*json_object_get_string(v))
        *out = strdup(json_object_get_string(v));
    return 0;
}

static int parse_args(struct session *s, json_object *jargs)
{
    long long size, jedec_id, program, sector, block, stuck, seed;

    if (string_arg("spi_nor_flash", jargs, "pads", &s->pads) < 0)
        return RC_INVARG;
    if (!s->pads)
        s->pads = strdup("spiflash");
    if (strlen(s->pads) > TAG_BYTES - sizeof("spi_nor_flash ")) {
        fprintf(stderr, "[spi_nor_flash] pads \"%s\": name too long\n", s->pads);
        return RC_INVARG;
    }
    snprintf(s->tag, sizeof(s->tag), "spi_nor_flash %s", s->pads);
    if (check_keys(s->tag, jargs) < 0)
        return RC_INVARG;
    s->path = flash_image_path_arg(s->tag, jargs);
    if (!s->path)
        return RC_INVARG;
    if (int_arg(s->tag, jargs, "size", 2u << 20, INT64_MIN, INT64_MAX, &size) < 0)
        return RC_INVARG;
    if (size <= 0 || size > SIZE_MAX_BYTES || size % BLOCK_BYTES) {
        fprintf(stderr, "[%s] size %lld: must be a multiple of 64 KiB, at most 64 MiB\n", s->tag, size);
        return RC_INVARG;
    }
    if (int_arg(s->tag, jargs, "jedec_id", 0xC84015, 0, 0xFFFFFF, &jedec_id) < 0 ||
        int_arg(s->tag, jargs, "program_cycles", 2000, 0, UINT32_MAX, &program) < 0 ||
        int_arg(s->tag, jargs, "sector_erase_cycles", 20000, 0, UINT32_MAX, &sector) < 0 ||
        int_arg(s->tag, jargs, "block_erase_cycles", 80000, 0, UINT32_MAX, &block) < 0 ||
        int_arg(s->tag, jargs, "stuck_busy", 0, 0, 1, &stuck) < 0 ||
        int_arg(s->tag, jargs, "seed", 1, INT64_MIN, INT64_MAX, &seed) < 0 ||
        string_arg(s->tag, jargs, "stats", &s->stats) < 0 ||
        string_arg(s->tag, jargs, "power_cut_file", &s->power_cut_file) < 0)
        return RC_INVARG;
    s->size = (uint32_t)size;
    s->jedec_id = (uint32_t)jedec_id;
    s->program_cycles = (unsigned)program;
    s->sector_erase_cycles = (unsigned)sector;
    s->block_erase_cycles = (unsigned)block;
    s->stuck_busy = (int)stuck;
    s->seed = (uint64_t)seed;
    return RC_OK;
}

static int spi_nor_start(void *base)
{
    return RC_OK;
}

static int spi_nor_new(void **sess, char *args)
{
    struct session *s;
    json_object *jargs = args ? json_tokener_parse(args) : NULL;
    int rc;

    if (!json_object_is_type(jargs, json_type_object)) {
        fprintf(stderr, "[spi_nor_flash] its arguments must be a JSON object (at least \"path\")\n");
        json_object_put(jargs);
        return RC_INVARG;
    }
    s = calloc(1, sizeof(*s));
    if (!s) {
        json_object_put(jargs);
        return RC_NOENMEM;
    }
    rc = parse_args(s, jargs);
    json_object_put(jargs);
    if (rc == RC_OK && !(s->op_before = malloc(BLOCK_BYTES)))
        rc = RC_NOENMEM;
    if (rc == RC_OK)
        rc = map_file(s);
    if (rc != RC_OK) {
        free_session(s);
        return rc;
    }
    s->last_cs_n = 1;
    *sess = s;
    return RC_OK;
}

static int bind_pad(struct session *s, struct pad_s *p, const char *name, char **dst)
{
    if (strcmp(p->name, name))
        return 0;
    if (p->len != 1) {
        fprintf(stderr, "[%s] pad %s is %zu bits, expected 1\n", s->tag, name, p->len);
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
    if (!strcmp(plist->name, "sys_clk")) {
        for (p = plist->pads; p->name; p++)
            if (!strcmp(p->name, "sys_clk"))
                s->sys_clk = p->signal;
        return RC_OK;
    }
    if (strcmp(plist->name, s->pads)) {
        /* sim_config.js gave this session another chip's pads */
        fprintf(stderr, "[%s] given the \"%s\" pads, but its \"pads\" argument says \"%s\": "
                        "sim_config.js and the module disagree\n", s->tag, plist->name, s->pads);
        return RC_INVARG;
    }
    for (p = plist->pads; p->name; p++) {
        if (bind_pad(s, p, "clk", &s->clk) < 0 || bind_pad(s, p, "cs_n", &s->cs_n) < 0 ||
            bind_pad(s, p, "mosi", &s->mosi) < 0 || bind_pad(s, p, "miso", &s->miso) < 0)
            return RC_INVARG;
    }
    if (!s->clk || !s->cs_n || !s->mosi || !s->miso) {
        fprintf(stderr, "[%s] the %s pads are incomplete (need clk, cs_n, mosi, miso): SoC and module "
                        "disagree\n", s->tag, s->pads);
        return RC_INVARG;
    }
    *s->miso = 1;
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

/* A program or erase of [addr, addr + bytes) is about to be applied: keep
 * the unit as it is, for a power cut to tear. */
static void remember_op(struct session *s, int kind, uint32_t addr, uint32_t bytes)
{
    s->op_kind = kind;
    s->op_addr = addr;
    s->op_bytes = bytes;
    memcpy(s->op_before, s->mem + addr, bytes);
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
    case CMD_READ4:
        if (s->bits < 8 * (1 + s->addr_bytes))
            return 0;
        *byte = s->mem[s->addr];
        s->addr = (s->addr + 1) % s->span;
        s->bytes_read++;
        return 1;
    default:
        return 0;
    }
}

/* Address bytes after an opcode (0: none, or not a command this chip knows). */
static uint32_t address_bytes(uint8_t opcode)
{
    switch (opcode) {
    case CMD_READ: case CMD_PP: case CMD_SE: case CMD_BE:
        return 3;
    case CMD_READ4: case CMD_PP4: case CMD_SE4: case CMD_BE4:
        return 4;
    default:
        return 0;
    }
}

static int is_program(uint8_t opcode)
{
    return opcode == CMD_PP || opcode == CMD_PP4;
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
        s->addr_bytes = address_bytes(byte);
        s->span = s->addr_bytes == 3 && s->size > ADDR3_SPAN ? ADDR3_SPAN : s->size;
        switch (byte) {
        case CMD_WRDI: case CMD_RDSR: case CMD_WREN: case CMD_RDID:
            break;
        default:
            if (s->addr_bytes)
                break;
            if (s->unknown++ < MAX_REPORTS)
                fprintf(stderr, "[%s] unknown command 0x%02x ignored\n", s->tag, byte);
            s->ignored = 1;
        }
        return;
    }
    if (n <= 1 + s->addr_bytes) {
        s->addr = (s->addr << 8) | byte;
        if (n == 1 + s->addr_bytes) {
            s->addr %= s->span;
            if (is_program(s->opcode)) {
                memset(s->page_set, 0, sizeof(s->page_set));
                s->data_bytes = 0;
            }
        }
        return;
    }
    if (is_program(s->opcode)) {
        uint32_t at = (s->addr + s->data_bytes) % PAGE_BYTES;  /* wraps inside the page */
        s->page[at] = byte;
        s->page_set[at] = 1;
        s->data_bytes++;
    }
}

static void page_program(struct session *s)
{
    uint32_t i, base = s->addr - s->addr % PAGE_BYTES;

    remember_op(s, OP_PROGRAM, base, PAGE_BYTES);
    for (i = 0; i < PAGE_BYTES; i++) {
        uint8_t old;
        if (!s->page_set[i])
            continue;
        old = s->mem[base + i];
        if ((old & s->page[i]) != s->page[i] && s->nor_noops++ < MAX_REPORTS)
            fprintf(stderr, "[%s] program of 0x%02x over 0x%02x at 0x%07x: 0 bits stay 0\n", s->tag,
                    s->page[i], old, (unsigned)(base + i));
        s->mem[base + i] = old & s->page[i];
        s->bytes_programmed++;
    }
    s->page_programs++;
    s->wel = 0;
    set_busy(s, s->program_cycles);
}

static void erase(struct session *s)
{
    int sector = s->opcode == CMD_SE || s->opcode == CMD_SE4;
    uint32_t unit = sector ? SECTOR_BYTES : BLOCK_BYTES, base = s->addr - s->addr % unit;

    remember_op(s, OP_ERASE, base, unit);
    memset(s->mem + base, 0xFF, unit);
    s->erases++;
    s->wel = 0;
    set_busy(s, sector ? s->sector_erase_cycles : s->block_erase_cycles);
}

/* CS# rose: commands that act at the end of the transaction. */
static void deselect(struct session *s)
{
    uint32_t header_bits = 8 * (1 + s->addr_bytes);  /* opcode and address */

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
    case CMD_PP4:
        if (s->wel && s->bits > header_bits)
            page_program(s);
        break;
    case CMD_SE:
    case CMD_SE4:
    case CMD_BE:
    case CMD_BE4:
        if (s->wel && s->bits == header_bits)
            erase(s);
        break;
    default:
        break;
    }
}

/* SplitMix64: a small, well-mixed generator for the tear. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* The power goes while the chip is busy: of the bits the operation changed
 * (a program: 1 -> 0; an erase: 0 -> 1), a pseudo-random half keep their old
 * value. Returns the bytes that now differ from the completed operation. */
static uint32_t tear(struct session *s)
{
    uint64_t state = s->seed ^ (s->cycle * 0xD1B54A32D192ED03ull), bits = 0;
    uint8_t *unit = s->mem + s->op_addr;
    uint32_t i, torn = 0;

    for (i = 0; i < s->op_bytes; i++) {
        uint8_t changed = s->op_before[i] ^ unit[i], undone;
        if (i % 8 == 0)
            bits = next_random(&state);
        undone = changed & (uint8_t)(bits >> (8 * (i % 8)));
        if (undone) {
            unit[i] ^= undone;
            torn++;
        }
    }
    return torn;
}

/* The power goes: tear what the chip is busy with, say so, and SIGKILL the
 * simulator (no exit handler; the shared mapping's pages are the image). */
static void power_cut(struct session *s)
{
    if (s->busy) {
        uint32_t torn = tear(s);
        printf("[%s] power cut at cycle %llu (%s at 0x%07x torn: %u bytes differ from the "
               "completed operation)\n", s->tag, (unsigned long long)s->cycle,
               s->op_kind == OP_PROGRAM ? "program" : s->op_bytes == SECTOR_BYTES ? "4 KiB erase"
                                                                                  : "64 KiB erase",
               (unsigned)s->op_addr, (unsigned)torn);
    } else {
        printf("[%s] power cut at cycle %llu\n", s->tag, (unsigned long long)s->cycle);
    }
    fflush(stdout);
    kill(getpid(), SIGKILL);
}

static int spi_nor_tick(void *sess, uint64_t time_ps)
{
    struct session *s = sess;
    int sck, cs_n;

    if (!s->sys_clk || !clk_pos_edge(&s->edge, *s->sys_clk))
        return RC_OK;
    s->cycle++;
    if (s->power_cut_file) {
        if (s->power_cut_at == s->cycle)
            power_cut(s);
        if (!s->power_cut_at && s->cycle % FLASH_POWER_CUT_POLL == 0)
            s->power_cut_at = flash_power_cut_poll(s->tag, s->power_cut_file, s->cycle);
    }
    if (s->busy && s->busy != UINT64_MAX)
        s->busy--;
    if (!s->clk) {
        if (!s->told_unbound)
            fprintf(stderr, "[%s] no \"%s\" pads from the SoC: the chip is not connected\n", s->tag,
                    s->pads);
        s->told_unbound = 1;
        return RC_OK;
    }
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
        s->addr_bytes = 0;
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
    free_session(s);
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
