/* The LM3S9B95 internal-flash driver (firmware/ports/lm3s9b95/internal_flash.c)
 * on the host, its registers served by the flash controller model
 * (flash_ctrl_model.c):
 *   - flash.h calls: reads, aligned / unaligned / partial-word programs,
 *     the NOR, page and range errors, erase, protected blocks;
 *   - a seeded random sequence of programs and erases, compared after every
 *     step with the RAM flash (flash_ram.c) of the same geometry;
 *   - the store (firmware/app/store/) on the driver: the same workload on the driver and
 *     on the RAM flash must give the same results and the same flash image,
 *     and a remount (a reset) must find everything again.
 * The model also checks the protocol: no write without the key, nothing
 * touched while the controller is busy, and no cell at 0 programmed again.
 *
 * usage: test_internal_flash [SEED [RANDOM_OPS [STORE_OPS]]] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "flash_ctrl_model.h"
#include "platform/flash_ram.h"
#include "internal_flash.h"
#include "store/store.h"
#include "store_testlib.h"
#include "test_rng.h"

#define KIB 1024u
#define REGION_BASE (128u * KIB)   /* the real-chip layout: the top 128 KiB */
#define REGION_SIZE (128u * KIB)

static struct internal_flash ifl;
static uint8_t ram_mem[REGION_SIZE];
static struct flash_ram ref;

static const uint8_t *region(void) { return fcm_array() + REGION_BASE; }

static int all_ff(const uint8_t *p, size_t n)
{
    while (n--)
        if (*p++ != 0xFF)
            return 0;
    return 1;
}

/* A byte as the driver shows it (a held word included). */
static uint8_t logical(uint32_t addr)
{
    uint8_t b = 0;
    CHECK(flash_read(&ifl.flash, addr, &b, 1) == FLASH_OK);
    return b;
}

static void fresh(void)
{
    fcm_reset();
    CHECK(internal_flash_init(&ifl, REGION_BASE, REGION_SIZE) == FLASH_OK);
}

static void test_init(void)
{
    struct internal_flash f;
    CHECK(internal_flash_init(&f, 0, 256 * KIB) == FLASH_OK);
    CHECK(f.flash.geo.size == 256 * KIB && f.flash.geo.block_size == KIB && f.flash.geo.page_size == 128);
    CHECK(internal_flash_init(&f, 255 * KIB, KIB) == FLASH_OK);
    CHECK(internal_flash_init(&f, 255 * KIB, 2 * KIB) == FLASH_ERR_RANGE);
    CHECK(internal_flash_init(&f, 512, KIB) == FLASH_ERR_RANGE);
    CHECK(internal_flash_init(&f, 0, 1536) == FLASH_ERR_RANGE);
    CHECK(internal_flash_init(&f, 0, 0) == FLASH_ERR_RANGE);
    CHECK(internal_flash_init(&f, 0xFFFFFC00u, 2 * KIB) == FLASH_ERR_RANGE);
}

static void test_basic(void)
{
    const struct flash *f = &ifl.flash;
    static const uint8_t eight[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    uint8_t buf[16];
    struct fcm_stats before;

    fresh();
    CHECK(flash_read(f, 0, buf, sizeof(buf)) == FLASH_OK && all_ff(buf, sizeof(buf)));
    CHECK(all_ff(fcm_array(), 256 * KIB));

    /* aligned: two words, one buffered write, at the region's offset in the chip */
    CHECK(flash_program(f, 0, eight, 8) == FLASH_OK);
    CHECK(memcmp(region(), eight, 8) == 0 && all_ff(region() + 8, 120));
    CHECK(all_ff(fcm_array(), REGION_BASE));
    CHECK(fcm_stats()->buffered_writes == 1 && fcm_stats()->words_programmed == 2);

    /* unaligned, partial words on both ends: bytes 0x103..0x107 */
    CHECK(flash_program(f, 0x103, "abcde", 5) == FLASH_OK);
    CHECK(memcmp(region() + 0x103, "abcde", 5) == 0);
    CHECK(region()[0x102] == 0xFF && region()[0x108] == 0xFF);
    /* the rest of the first word: its second program only fills erased bytes */
    CHECK(flash_program(f, 0x100, "XYZ", 3) == FLASH_OK);
    CHECK(memcmp(region() + 0x100, "XYZabcde", 8) == 0);
    CHECK(flash_read(f, 0x100, buf, 8) == FLASH_OK && memcmp(buf, "XYZabcde", 8) == 0);
    /* one byte before erased bytes: held in RAM, readable, programmed by sync
     * as a single-word write through FMD/FMC */
    before = *fcm_stats();
    CHECK(flash_program(f, 0x201, "q", 1) == FLASH_OK && logical(0x201) == 'q');
    CHECK(region()[0x201] == 0xFF && fcm_stats()->words_programmed == before.words_programmed);
    /* clearing more bits of programmed bytes is allowed (NOR) */
    CHECK(flash_program(f, 0x201, "\x01", 1) == FLASH_OK && logical(0x201) == ('q' & 1));
    CHECK(flash_sync(f) == FLASH_OK && region()[0x201] == ('q' & 1));
    CHECK(fcm_stats()->word_writes == before.word_writes + 1);
    CHECK(all_ff(region() + 0x200, 1) && all_ff(region() + 0x202, 2));
    /* the same bytes again: nothing to program, the controller is not used */
    before = *fcm_stats();
    CHECK(flash_program(f, 0x100, "XYZabcde", 8) == FLASH_OK);
    CHECK(fcm_stats()->words_programmed == before.words_programmed);

    /* pieces appended one after the other (as the store streams a record):
     * each word is programmed once, the last one by sync */
    before = *fcm_stats();
    {
        static const char text[] = "BEGIN:VEVENT\r\nSUMMARY:held words\r\nEND:VEVENT\r\n";
        uint32_t off = 0, piece = 1, at = 0x403;
        while (off < sizeof(text) - 1) {
            uint32_t n = sizeof(text) - 1 - off < piece ? (uint32_t)(sizeof(text) - 1 - off) : piece;
            CHECK(flash_program(f, at + off, text + off, n) == FLASH_OK);
            off += n;
            piece = piece % 5 + 1;
        }
        CHECK(flash_read(f, at, buf, 16) == FLASH_OK && memcmp(buf, text, 16) == 0);
        CHECK(flash_sync(f) == FLASH_OK && memcmp(region() + at, text, sizeof(text) - 1) == 0);
        CHECK(fcm_stats()->reprogrammed_words == before.reprogrammed_words);
        CHECK(fcm_stats()->words_programmed - before.words_programmed == (at + sizeof(text) - 1 + 3) / 4 - at / 4);
    }
    /* a held word is programmed before a program elsewhere (order) and
     * dropped by the erase of its block */
    CHECK(flash_program(f, 0x501, "h", 1) == FLASH_OK && region()[0x501] == 0xFF);
    CHECK(flash_program(f, 0x600, "next", 4) == FLASH_OK && region()[0x501] == 'h');
    CHECK(flash_program(f, 0x201 + 4 * KIB, "e", 1) == FLASH_OK && logical(0x201 + 4 * KIB) == 'e');
    CHECK(flash_erase(f, 4) == FLASH_OK && logical(0x201 + 4 * KIB) == 0xFF);
    CHECK(flash_sync(f) == FLASH_OK && all_ff(region() + 4 * KIB, KIB));

    /* errors, each leaving flash as it was */
    before = *fcm_stats();
    CHECK(flash_program(f, 0x104, "\xFF", 1) == FLASH_ERR_NOR);        /* 'b' -> 0xFF */
    CHECK(flash_program(f, 0x200, "\x00\x7F", 2) == FLASH_ERR_NOR);   /* 0x7F over 0x01 */
    CHECK(region()[0x200] == 0xFF && region()[0x104] == 'b');
    CHECK(flash_program(f, 126, "\0\0\0\0", 4) == FLASH_ERR_PAGE);
    CHECK(flash_program(f, REGION_SIZE - 1, "\0\0", 2) == FLASH_ERR_RANGE);
    CHECK(flash_program(f, REGION_SIZE + 4, "\0", 1) == FLASH_ERR_RANGE);
    CHECK(flash_program(f, REGION_SIZE, "", 0) == FLASH_OK);
    CHECK(flash_read(f, REGION_SIZE - 4, buf, 8) == FLASH_ERR_RANGE);
    CHECK(flash_erase(f, REGION_SIZE / KIB) == FLASH_ERR_RANGE);
    CHECK(fcm_stats()->words_programmed == before.words_programmed);
    CHECK(region()[126] == 0xFF && region()[128] == 0xFF);

    /* a whole page in one buffered write, then erase */
    memset(buf, 0x5A, sizeof(buf));
    {
        uint8_t page[128];
        memset(page, 0x3C, sizeof(page));
        before = *fcm_stats();
        CHECK(flash_program(f, 5 * KIB + 128, page, 128) == FLASH_OK);
        CHECK(memcmp(region() + 5 * KIB + 128, page, 128) == 0);
        CHECK(fcm_stats()->buffered_writes == before.buffered_writes + 1);
        CHECK(fcm_stats()->words_programmed == before.words_programmed + 32);
    }
    CHECK(flash_erase(f, 5) == FLASH_OK && all_ff(region() + 5 * KIB, KIB));
    CHECK(flash_erase(f, 0) == FLASH_OK && all_ff(region(), KIB));
    CHECK(region()[KIB - 1] == 0xFF && all_ff(fcm_array(), REGION_BASE));
    CHECK(flash_program(f, 0x100, "XYZ", 3) == FLASH_OK);   /* programmable again */
    CHECK(flash_sync(f) == FLASH_OK && memcmp(region() + 0x100, "XYZ", 3) == 0);

    CHECK(fcm_stats()->violations == 0 && fcm_stats()->wrong_key == 0);
    CHECK(fcm_stats()->repulsed_cells == 0);
}

/* A protected 2 KiB block: program and erase fail with FLASH_ERR_IO, nothing
 * changes, and the next operation elsewhere works (ARIS was cleared). */
static void test_protected(void)
{
    const struct flash *f = &ifl.flash;
    uint8_t page[128];

    fresh();
    memset(page, 0, sizeof(page));
    CHECK(flash_program(f, 6 * KIB, "\x11\x22\x33\x44", 4) == FLASH_OK);
    fcm_protect(REGION_BASE + 6 * KIB);   /* blocks 6 and 7 of the region */
    CHECK(flash_program(f, 6 * KIB + 100, "x", 1) == FLASH_OK);   /* held in RAM */
    CHECK(flash_sync(f) == FLASH_ERR_IO);                         /* refused */
    CHECK(flash_program(f, 6 * KIB + 100, "wxyz", 4) == FLASH_ERR_IO);
    CHECK(flash_program(f, 7 * KIB, page, 128) == FLASH_ERR_IO);
    CHECK(flash_erase(f, 6) == FLASH_ERR_IO);
    CHECK(flash_erase(f, 7) == FLASH_ERR_IO);
    CHECK(region()[6 * KIB] == 0x11 && region()[6 * KIB + 3] == 0x44);
    CHECK(all_ff(region() + 6 * KIB + 4, 2 * KIB - 4));
    CHECK(fcm_stats()->access_errors == 5);
    CHECK(flash_program(f, 8 * KIB, "ok", 2) == FLASH_OK && flash_sync(f) == FLASH_OK);
    CHECK(memcmp(region() + 8 * KIB, "ok", 2) == 0);
    CHECK(flash_erase(f, 5) == FLASH_OK);
    CHECK(fcm_reg_read(0x00C) == 0);   /* FCRIS: ARIS and PRIS cleared by the driver */
    CHECK(fcm_stats()->violations == 0 && fcm_stats()->wrong_key == 0);
}

/* The model itself honours the key and the busy time (so the driver tests
 * above can tell a driver that does not). */
static void test_model(void)
{
    fcm_reset();
    fcm_reg_write(0x000, 0x1000);           /* FMA */
    fcm_reg_write(0x004, 0x12345678);       /* FMD */
    fcm_reg_write(0x008, 0xA4410001u);      /* wrong key */
    CHECK(fcm_word_read(0x1000) == 0xFFFFFFFFu && fcm_stats()->wrong_key == 1);
    fcm_reg_write(0x008, 0xA4420001u);
    CHECK(fcm_reg_read(0x008) & 1);         /* busy */
    fcm_reg_write(0x004, 0);                /* while busy: lost */
    CHECK(fcm_stats()->violations == 1);
    while (fcm_reg_read(0x008) & 1)
        ;
    CHECK(fcm_word_read(0x1000) == 0x12345678u);
    fcm_reg_write(0x004, 0xFFFF0000u);      /* AND: only clears */
    fcm_reg_write(0x008, 0xA4420001u);
    while (fcm_reg_read(0x008) & 1)
        ;
    CHECK(fcm_word_read(0x1000) == 0x12340000u);
    CHECK(fcm_stats()->reprogrammed_words == 1 && fcm_stats()->repulsed_cells > 0);
    fcm_reg_write(0x000, 0x1000);
    fcm_reg_write(0x008, 0xA4420002u);      /* erase */
    while (fcm_reg_read(0x008) & 2)
        ;
    CHECK(fcm_word_read(0x1000) == 0xFFFFFFFFu && fcm_word_read(0x13FC) == 0xFFFFFFFFu);
    fcm_reg_write(0x000, 256 * KIB);        /* outside the array */
    fcm_reg_write(0x008, 0xA4420002u);
    CHECK((fcm_reg_read(0x00C) & 1) && fcm_stats()->access_errors == 1);
}

/* Random programs and erases on the driver and on the RAM flash. */
static void test_random(uint64_t seed, unsigned ops)
{
    const struct flash *f = &ifl.flash, *g = &ref.flash;
    unsigned i, mismatches = 0, programs_ok = 0;
    static uint8_t data[160], view[KIB];

    rng_seed(seed);
    fresh();
    CHECK(flash_ram_init(&ref, ram_mem, REGION_SIZE, KIB, 128) == FLASH_OK);
    for (i = 0; i < ops; i++) {
        /* stay in a few blocks so programs meet programmed words often */
        uint32_t block = (uint32_t)rnd(8), addr, len, k;
        int a, b;
        if (chance(3)) {
            a = flash_erase(f, block);
            b = flash_erase(g, block);
            addr = block * KIB;
            len = KIB;
        } else {
            addr = block * KIB + (uint32_t)rnd(KIB);
            len = 1 + (uint32_t)rnd(chance(20) ? 150 : 12);
            if (addr + len > REGION_SIZE)
                len = REGION_SIZE - addr;
            for (k = 0; k < len; k++) {
                data[k] = (uint8_t)rng_next();
                if (!chance(2))   /* mostly valid NOR programs */
                    data[k] &= ram_mem[addr + k];
            }
            a = flash_program(f, addr, data, len);
            b = flash_program(g, addr, data, len);
            programs_ok += a == FLASH_OK;
        }
        if (chance(5))
            a |= flash_sync(f);
        if (a != b || flash_read(f, block * KIB, view, KIB) ||
            memcmp(view, ram_mem + block * KIB, KIB) ||
            (addr + len > (block + 1) * KIB &&
             (flash_read(f, addr, view, len) || memcmp(view, ram_mem + addr, len)))) {
            if (mismatches++ < 5)
                fprintf(stderr, "op %u: addr %u len %u: driver %d, RAM flash %d or contents differ\n",
                        i, (unsigned)addr, (unsigned)len, a, b);
        }
    }
    CHECKF(mismatches == 0, "%u of %u operations differ from the RAM flash", mismatches, ops);
    CHECK(flash_sync(f) == FLASH_OK && memcmp(region(), ram_mem, REGION_SIZE) == 0);
    CHECK(programs_ok > ops / 2);
    CHECK(fcm_stats()->violations == 0 && fcm_stats()->wrong_key == 0 &&
          fcm_stats()->access_errors == 0);
    CHECK(fcm_stats()->repulsed_cells == 0);
    printf("random: %u operations (%u programs accepted), %u word writes, %u buffered writes, "
           "%u erases\n", ops, programs_ok, (unsigned)fcm_stats()->word_writes,
           (unsigned)fcm_stats()->buffered_writes, (unsigned)fcm_stats()->erases);
}

/* ---- the store on the driver ------------------------------------------- */

STORE_MEMORY_DEFINE(mem_if, 512, 8, 4);
STORE_MEMORY_DEFINE(mem_ref, 512, 8, 4);
static struct store st_if, st_ref;
static const struct store_config store_cfg = {2048, 200};
static const char *const users[] = {"demo", "alice"};

struct pair_stats { unsigned puts, deletes, streamed, mismatches; };

static void both(struct pair_stats *ps, const char *what, int a, int b)
{
    if (a != b && ps->mismatches++ < 5)
        fprintf(stderr, "%s: driver store %d, RAM store %d\n", what, a, b);
}

static void test_store(uint64_t seed, unsigned ops)
{
    struct store_mount_stats ms_if, ms_ref;
    struct pair_stats ps = {0, 0, 0, 0};
    struct digest d_if, d_ref, d_again;
    uint32_t coll_if[2], coll_ref[2], etag_a, etag_b;
    static uint8_t body[2048];
    unsigned i;
    int a, b;

    rng_seed(seed ^ 0x5707e);
    fresh();
    CHECK(flash_ram_init(&ref, ram_mem, REGION_SIZE, KIB, 128) == FLASH_OK);
    CHECK(store_mount(&st_if, &ifl.flash, &store_cfg, &mem_if, &ms_if) == STORE_OK);
    CHECK(store_mount(&st_ref, &ref.flash, &store_cfg, &mem_ref, &ms_ref) == STORE_OK);
    CHECK(store_user_set(&st_if, users[0], (const uint8_t *)"0123456789abcdef", 16) == STORE_OK);
    CHECK(store_user_set(&st_ref, users[0], (const uint8_t *)"0123456789abcdef", 16) == STORE_OK);
    CHECK(store_coll_create(&st_if, "demo", "/dav/demo/a/", &coll_if[0]) == STORE_OK);
    CHECK(store_coll_create(&st_ref, "demo", "/dav/demo/a/", &coll_ref[0]) == STORE_OK);
    CHECK(store_coll_create(&st_if, "demo", "/dav/demo/b/", &coll_if[1]) == STORE_OK);
    CHECK(store_coll_create(&st_ref, "demo", "/dav/demo/b/", &coll_ref[1]) == STORE_OK);
    CHECK(store_coll_set_prop(&st_if, coll_if[0], STORE_PROP_DISPLAYNAME, "Office", 6) == STORE_OK);
    CHECK(store_coll_set_prop(&st_ref, coll_ref[0], STORE_PROP_DISPLAYNAME, "Office", 6) == STORE_OK);

    for (i = 0; i < ops; i++) {
        char name[32];
        unsigned c = (unsigned)rnd(2);
        uint32_t len = 1 + (uint32_t)rnd(chance(10) ? sizeof(body) : 700), k;
        size_t nlen = (size_t)snprintf(name, sizeof(name), "event-%u.ics", (unsigned)rnd(40));
        for (k = 0; k < len; k++)
            body[k] = (uint8_t)(' ' + rnd(90));
        if (chance(15)) {
            a = store_delete_object(&st_if, coll_if[c], name, nlen, NULL);
            b = store_delete_object(&st_ref, coll_ref[c], name, nlen, NULL);
            both(&ps, "delete", a, b);
            ps.deletes += a == STORE_OK;
        } else if (chance(30)) {
            /* streamed in odd-sized pieces, as TCP segments arrive */
            uint32_t off = 0, piece;
            a = store_put_begin(&st_if, coll_if[c], name, nlen, len, NULL, 0);
            b = store_put_begin(&st_ref, coll_ref[c], name, nlen, len, NULL, 0);
            both(&ps, "put_begin", a, b);
            if (a != STORE_OK || b != STORE_OK)
                continue;
            while (off < len) {
                piece = 1 + (uint32_t)rnd(97);
                if (piece > len - off)
                    piece = len - off;
                both(&ps, "put_write", store_put_write(&st_if, body + off, piece),
                     store_put_write(&st_ref, body + off, piece));
                off += piece;
            }
            a = store_put_commit(&st_if, &etag_a);
            b = store_put_commit(&st_ref, &etag_b);
            both(&ps, "put_commit", a, b);
            if (a == STORE_OK && b == STORE_OK)
                both(&ps, "etag", (int)etag_a, (int)etag_b);
            ps.streamed += a == STORE_OK;
        } else {
            a = store_put_object(&st_if, coll_if[c], name, nlen, body, len, NULL, 0, &etag_a);
            b = store_put_object(&st_ref, coll_ref[c], name, nlen, body, len, NULL, 0, &etag_b);
            both(&ps, "put", a, b);
            ps.puts += a == STORE_OK;
        }
    }
    CHECKF(ps.mismatches == 0, "%u store results differ between the driver and the RAM flash",
           ps.mismatches);
    CHECK(ps.puts + ps.streamed > ops / 2 && ps.deletes > 0 && ps.streamed > 0);
    CHECK(!ifl.held);   /* every store write ends with sync */
    CHECK(memcmp(region(), ram_mem, REGION_SIZE) == 0);
    CHECK(st_if.compactions > 0);
    CHECK(store_digest(&st_if, &d_if, users, 2) == 0 && store_digest(&st_ref, &d_ref, users, 2) == 0);
    CHECK(d_if.items > 10 && d_if.sum == d_ref.sum && d_if.items == d_ref.items);

    /* reset: a new driver over the same chip flash, mount replays the log */
    CHECK(internal_flash_init(&ifl, REGION_BASE, REGION_SIZE) == FLASH_OK);
    CHECK(store_mount(&st_if, &ifl.flash, &store_cfg, &mem_if, &ms_if) == STORE_OK);
    CHECK(ms_if.torn_bytes == 0 && ms_if.collections == 2 && ms_if.users == 1);
    CHECK(store_digest(&st_if, &d_again, users, 2) == 0);
    CHECK(d_again.sum == d_if.sum && d_again.items == d_if.items);
    CHECK(store_put_object(&st_if, coll_if[0], "after-reset.ics", 15, "BEGIN", 5, NULL, 0, &etag_a) ==
          STORE_OK);

    CHECK(fcm_stats()->violations == 0 && fcm_stats()->wrong_key == 0 &&
          fcm_stats()->access_errors == 0);
    CHECK(fcm_stats()->repulsed_cells == 0);
    printf("store: %u puts, %u streamed puts, %u deletes, %u blocks compacted, %u erases, "
           "%u words programmed (%u of them a second time since their erase)\n",
           ps.puts, ps.streamed, ps.deletes, (unsigned)st_ref.compactions,
           (unsigned)fcm_stats()->erases, (unsigned)fcm_stats()->words_programmed,
           (unsigned)fcm_stats()->reprogrammed_words);
}

int main(int argc, char **argv)
{
    uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 1;
    unsigned random_ops = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 0) : 20000;
    unsigned store_ops = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 0) : 3000;

    (void)fresh_flash;   /* store_testlib.h's file flash is not used here */
    test_model();
    test_init();
    test_basic();
    test_protected();
    test_random(seed, random_ops);
    test_store(seed, store_ops);
    return check_summary();
}
