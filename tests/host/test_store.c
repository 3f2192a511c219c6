/* Unit tests of the flash store (firmware/app/store/) on the host flash
 * model (firmware/ports/host/flash_file.c).
 *
 *   test_store [scratch-dir]      flash files are created there (default .)
 *
 * Covers: CRC-32, the NOR rules of the flash model, put/get/delete/list,
 * collection properties, users, sync changes and token limits, If-Match /
 * If-None-Match, every explicit limit, streamed puts and aborts, compaction,
 * torn tails, member lists and tags, COPY/MOVE (a MOVE cut by a power
 * loss at every byte it programs: all or nothing), dead properties (property lists of objects and
 * collections), "remount equals the state before" (and store_check finds
 * nothing wrong), store_check on a damaged flash. Last line:
 * "N passed, M failed". */
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "store_testlib.h"

#define KIB 1024u

STORE_MEMORY_DEFINE(mem, 256, 8, 4);

static struct flash_file ff;
static struct store st;
static const char *const user_names[] = {"alice", "bob"};

static const struct store_config default_cfg = {8 * KIB, 50};
/* the configuration check_remount_same mounts with */
static const struct store_config *cur_cfg = &default_cfg;
static const struct store_memory *cur_mem = &mem;

static int mount(const struct store_config *cfg, struct store_mount_stats *stats)
{
    return store_mount(&st, &ff.flash, cfg, &mem, stats);
}

static int put(uint32_t coll, const char *name, const char *body, uint32_t *etag)
{
    return store_put_object(&st, coll, name, strlen(name), body, (uint32_t)strlen(body), NULL, 0, etag);
}

/* whole body as a C string into buf (cap > body) */
static int get(uint32_t coll, const char *name, char *buf, size_t cap, struct store_object_info *info)
{
    uint32_t got, off = 0;
    int rc;
    do {
        rc = store_get_object(&st, coll, name, strlen(name), off, buf + off, (uint32_t)(cap - 1 - off),
                              &got, info);
        if (rc)
            return rc;
        off += got;
    } while (got && off < cap - 1);
    buf[off] = 0;
    return STORE_OK;
}

static void digest_now(struct digest *d)
{
    CHECK(store_digest(&st, d, user_names, 2) == 0);
}

/* remount and compare everything visible with the state before */
static void check_remount_same(const char *when)
{
    struct digest before, after;
    struct store_mount_stats ms;
    struct store_check sc;
    digest_now(&before);
    CHECKF(store_mount(&st, &ff.flash, cur_cfg, cur_mem, &ms) == STORE_OK, "remount %s", when);
    digest_now(&after);
    CHECKF(before.sum == after.sum && before.items == after.items,
           "state differs after remount (%s): %u vs %u items", when, before.items, after.items);
    CHECKF(store_check(&st, &sc) == STORE_OK && sc.problems == 0, "store check after remount (%s): %s",
           when, sc.first_problem ? sc.first_problem : "-");
}

static void test_crc32(void)
{
    CHECK(crc32_update(0, "123456789", 9) == 0xCBF43926u);
    CHECK(crc32_update(crc32_update(0, "1234", 4), "56789", 5) == 0xCBF43926u);
    CHECK(crc32_update(0, "", 0) == 0);
}

static void test_flash_model(void)
{
    uint8_t buf[300], rd[300];
    CHECK(fresh_flash(&ff, "model.flash", 64 * KIB, 4 * KIB) == FLASH_OK);
    ff.abort_on_misuse = 0;
    CHECK(flash_read(&ff.flash, 100, rd, 4) == FLASH_OK && rd[0] == 0xff && rd[3] == 0xff);
    memset(buf, 0x0f, sizeof(buf));
    CHECK(flash_program(&ff.flash, 0, buf, 256) == FLASH_OK);
    CHECK(flash_program(&ff.flash, 200, buf, 100) == FLASH_ERR_PAGE);   /* crosses a page */
    CHECK(flash_program(&ff.flash, 64 * KIB - 4, buf, 8) == FLASH_ERR_RANGE);
    buf[0] = 0x1f;                                                      /* sets a 0 bit */
    CHECK(flash_program(&ff.flash, 0, buf, 1) == FLASH_ERR_NOR);
    buf[0] = 0x07;                                                      /* clears more: fine */
    CHECK(flash_program(&ff.flash, 0, buf, 1) == FLASH_OK);
    CHECK(flash_read(&ff.flash, 0, rd, 2) == FLASH_OK && rd[0] == 0x07 && rd[1] == 0x0f);
    CHECK(ff.misuse == 3);
    CHECK(flash_erase(&ff.flash, 0) == FLASH_OK);
    CHECK(flash_read(&ff.flash, 0, rd, 1) == FLASH_OK && rd[0] == 0xff);
    CHECK(flash_erase(&ff.flash, 16) == FLASH_ERR_RANGE);

    /* power cut: 10 bytes land, the 11th is torn, then nothing works */
    flash_file_cut_after(&ff, 10, 7);
    memset(buf, 0x00, sizeof(buf));
    CHECK(flash_program(&ff.flash, 256, buf, 32) == FLASH_ERR_POWER);
    CHECK(flash_read(&ff.flash, 256, rd, 1) == FLASH_ERR_POWER);
    CHECK(flash_sync(&ff.flash) == FLASH_ERR_POWER);
    flash_file_power_on(&ff);
    CHECK(flash_read(&ff.flash, 256, rd, 32) == FLASH_OK);
    CHECK(rd[0] == 0 && rd[9] == 0 && rd[11] == 0xff && rd[31] == 0xff);
    /* torn erase: the block is neither what it was nor necessarily erased */
    flash_file_cut_after(&ff, 0, 3);
    CHECK(flash_erase(&ff.flash, 0) == FLASH_ERR_POWER);
    flash_file_power_on(&ff);
    flash_file_close(&ff);
}

static void test_basic(void)
{
    uint32_t cal, other, etag1, etag2, etag3, id;
    char body[512];
    struct store_object_info info;
    struct store_mount_stats ms;
    struct store_space sp;

    CHECK(fresh_flash(&ff, "basic.flash", 256 * KIB, 4 * KIB) == FLASH_OK);
    CHECK(mount(&default_cfg, &ms) == STORE_OK);
    CHECK(ms.records == 0 && ms.blocks_used == 0 && ms.torn_bytes == 0);
    store_space(&st, &sp);
    CHECK(sp.total > 200 * KIB && sp.live == 0 && sp.free > 0 && sp.free < sp.total);

    CHECK(store_coll_create(&st, "alice", "/calendars/alice/home/", &cal) == STORE_OK);
    CHECK(store_coll_create(&st, "alice", "/calendars/alice/home/", &id) == STORE_ERR_EXISTS);
    CHECK(store_coll_create(&st, "bob", "/calendars/bob/work/", &other) == STORE_OK);
    CHECK(cal != other);
    CHECK(store_coll_find(&st, "/calendars/bob/work/", 20, &id) == STORE_OK && id == other);
    CHECK(store_coll_find(&st, "/calendars/bob/none/", 20, &id) == STORE_ERR_NOT_FOUND);

    CHECK(put(cal, "a.ics", "BEGIN:VCALENDAR A1", &etag1) == STORE_OK);
    CHECK(put(cal, "b.ics", "BEGIN:VCALENDAR B1", &etag2) == STORE_OK);
    CHECK(put(other, "a.ics", "other collection", &etag3) == STORE_OK);
    CHECK(etag1 != etag2 && etag2 != etag3);
    CHECK(get(cal, "a.ics", body, sizeof(body), &info) == STORE_OK && strcmp(body, "BEGIN:VCALENDAR A1") == 0);
    CHECK(info.etag == etag1 && info.size == 18 && info.sync_seq == 1);
    CHECK(get(other, "a.ics", body, sizeof(body), NULL) == STORE_OK && strcmp(body, "other collection") == 0);
    CHECK(get(cal, "c.ics", body, sizeof(body), NULL) == STORE_ERR_NOT_FOUND);
    CHECK(get(12345, "a.ics", body, sizeof(body), NULL) == STORE_ERR_NOT_FOUND);

    /* streaming read at an offset into a small buffer */
    {
        uint32_t got;
        char small[4];
        CHECK(store_get_object(&st, cal, "a.ics", 5, 6, small, 4, &got, NULL) == STORE_OK);
        CHECK(got == 4 && memcmp(small, "VCAL", 4) == 0);
        CHECK(store_get_object(&st, cal, "a.ics", 5, 18, small, 4, &got, NULL) == STORE_OK && got == 0);
        CHECK(store_get_object(&st, cal, "a.ics", 5, 1000, small, 4, &got, NULL) == STORE_OK && got == 0);
    }

    /* replace, then delete */
    CHECK(put(cal, "a.ics", "BEGIN:VCALENDAR A2", &etag3) == STORE_OK && etag3 != etag1);
    CHECK(get(cal, "a.ics", body, sizeof(body), &info) == STORE_OK && strcmp(body, "BEGIN:VCALENDAR A2") == 0);
    CHECK(info.etag == etag3 && info.sync_seq == 3);
    CHECK(store_delete_object(&st, cal, "b.ics", 5, NULL) == STORE_OK);
    CHECK(store_delete_object(&st, cal, "b.ics", 5, NULL) == STORE_ERR_NOT_FOUND);
    CHECK(get(cal, "b.ics", body, sizeof(body), NULL) == STORE_ERR_NOT_FOUND);
    {
        struct store_collection ci;
        CHECK(store_coll_info(&st, cal, &ci) == STORE_OK);
        CHECK(ci.sync_seq == 4 && ci.objects == 1 && ci.history_floor == 0);
        CHECK(ci.path_len == 22 && memcmp(ci.path, "/calendars/alice/home/", 22) == 0);
        CHECK(ci.owner_len == 5 && memcmp(ci.owner, "alice", 5) == 0);
    }
    /* bad names */
    CHECK(store_put_object(&st, cal, "", 0, "x", 1, NULL, 0, NULL) == STORE_ERR_INVALID);
    {
        char longname[300];
        memset(longname, 'n', sizeof(longname));
        CHECK(store_put_object(&st, cal, longname, 256, "x", 1, NULL, 0, NULL) == STORE_ERR_INVALID);
        CHECK(store_put_object(&st, cal, longname, 255, "x", 1, NULL, 0, NULL) == STORE_OK);
        CHECK(store_get_object(&st, cal, longname, 255, 0, body, 10, NULL, &info) == STORE_OK && info.size == 1);
    }
    check_remount_same("basic");
    CHECK(get(cal, "a.ics", body, sizeof(body), &info) == STORE_OK && strcmp(body, "BEGIN:VCALENDAR A2") == 0);
    CHECK(info.etag == etag3);

    /* collection delete removes its objects, also after remount */
    CHECK(store_coll_delete(&st, other) == STORE_OK);
    CHECK(store_coll_delete(&st, other) == STORE_ERR_NOT_FOUND);
    CHECK(get(other, "a.ics", body, sizeof(body), NULL) == STORE_ERR_NOT_FOUND);
    CHECK(store_coll_find(&st, "/calendars/bob/work/", 20, &id) == STORE_ERR_NOT_FOUND);
    check_remount_same("collection delete");
    CHECK(store_coll_find(&st, "/calendars/bob/work/", 20, &id) == STORE_ERR_NOT_FOUND);
    /* re-created collection gets a new id, empty */
    CHECK(store_coll_create(&st, "bob", "/calendars/bob/work/", &id) == STORE_OK && id != other);
    CHECK(get(id, "a.ics", body, sizeof(body), NULL) == STORE_ERR_NOT_FOUND);
    flash_file_close(&ff);
}

static void test_props_users(void)
{
    uint32_t cal;
    char buf[STORE_COLL_RECORD_MAX + 8];
    size_t len;
    uint8_t secret[STORE_SECRET_MAX];
    static const uint8_t hash_a[32] = {1, 2, 3, 4, 5};
    static const uint8_t hash_b[20] = {9, 8, 7};

    CHECK(fresh_flash(&ff, "props.flash", 256 * KIB, 4 * KIB) == FLASH_OK);
    CHECK(mount(&default_cfg, NULL) == STORE_OK);
    CHECK(store_coll_create(&st, "alice", "/cal/alice/home/", &cal) == STORE_OK);
    CHECK(store_coll_get_prop(&st, cal, STORE_PROP_DISPLAYNAME, buf, sizeof(buf), &len) == STORE_ERR_NOT_FOUND);
    CHECK(store_coll_set_prop(&st, cal, STORE_PROP_DISPLAYNAME, "Home", 4) == STORE_OK);
    CHECK(store_coll_set_prop(&st, cal, STORE_PROP_COLOR, "#ff0000", 7) == STORE_OK);
    CHECK(store_coll_set_prop(&st, cal, STORE_PROP_DESCRIPTION, "Family things", 13) == STORE_OK);
    CHECK(store_coll_set_prop(&st, cal, STORE_PROP_DISPLAYNAME, "Home sweet home", 15) == STORE_OK);
    CHECK(store_coll_get_prop(&st, cal, STORE_PROP_DISPLAYNAME, buf, sizeof(buf), &len) == STORE_OK);
    CHECK(len == 15 && memcmp(buf, "Home sweet home", 15) == 0);
    CHECK(store_coll_get_prop(&st, cal, STORE_PROP_COLOR, buf, sizeof(buf), &len) == STORE_OK);
    CHECK(len == 7 && memcmp(buf, "#ff0000", 7) == 0);
    CHECK(store_coll_get_prop(&st, cal, STORE_PROP_COLOR, buf, 3, &len) == STORE_ERR_TOO_LARGE);
    CHECK(store_coll_set_prop(&st, cal, STORE_PROP_COLOR, NULL, 0) == STORE_OK);  /* remove */
    CHECK(store_coll_get_prop(&st, cal, STORE_PROP_COLOR, buf, sizeof(buf), &len) == STORE_ERR_NOT_FOUND);
    CHECK(store_coll_set_prop(&st, cal, (enum store_prop)99, "x", 1) == STORE_ERR_INVALID);
    memset(buf, 'd', sizeof(buf));
    CHECK(store_coll_set_prop(&st, cal, STORE_PROP_DESCRIPTION, buf, STORE_COLL_RECORD_MAX) == STORE_ERR_TOO_LARGE);
    CHECK(store_coll_set_prop(&st, cal, STORE_PROP_TIMEZONE, buf, 900) == STORE_OK);
    CHECK(store_coll_get_prop(&st, cal, STORE_PROP_DESCRIPTION, buf, sizeof(buf), &len) == STORE_OK);
    CHECK(len == 13 && memcmp(buf, "Family things", 13) == 0);

    CHECK(store_user_get(&st, "alice", secret, sizeof(secret), &len) == STORE_ERR_NOT_FOUND);
    CHECK(store_user_set(&st, "alice", hash_a, sizeof(hash_a)) == STORE_OK);
    CHECK(store_user_set(&st, "bob", hash_b, sizeof(hash_b)) == STORE_OK);
    CHECK(store_user_get(&st, "alice", secret, sizeof(secret), &len) == STORE_OK);
    CHECK(len == 32 && memcmp(secret, hash_a, 32) == 0);
    CHECK(store_user_set(&st, "alice", hash_b, sizeof(hash_b)) == STORE_OK);   /* replace */
    CHECK(store_user_get(&st, "alice", secret, sizeof(secret), &len) == STORE_OK);
    CHECK(len == 20 && memcmp(secret, hash_b, 20) == 0);
    CHECK(store_user_get(&st, "carol", secret, sizeof(secret), &len) == STORE_ERR_NOT_FOUND);
    CHECK(store_user_set(&st, "carol", hash_a, 8) == STORE_OK);
    CHECK(store_user_set(&st, "dave", hash_a, 8) == STORE_OK);
    CHECK(store_user_set(&st, "erin", hash_a, 8) == STORE_ERR_TOO_MANY_USERS);  /* 4 slots */
    CHECK(store_user_set(&st, "", hash_a, 8) == STORE_ERR_INVALID);
    CHECK(store_user_set(&st, "frank", hash_a, STORE_SECRET_MAX + 1) == STORE_ERR_INVALID);
    check_remount_same("props and users");
    CHECK(store_user_get(&st, "alice", secret, sizeof(secret), &len) == STORE_OK);
    CHECK(len == 20 && memcmp(secret, hash_b, 20) == 0);
    CHECK(store_coll_get_prop(&st, cal, STORE_PROP_TIMEZONE, buf, sizeof(buf), &len) == STORE_OK && len == 900);
    flash_file_close(&ff);
}

static void test_preconditions(void)
{
    uint32_t cal, etag, etag2, wrong;
    char body[64];
    CHECK(fresh_flash(&ff, "precond.flash", 256 * KIB, 4 * KIB) == FLASH_OK);
    CHECK(mount(&default_cfg, NULL) == STORE_OK);
    CHECK(store_coll_create(&st, "alice", "/c/", &cal) == STORE_OK);
    /* If-None-Match: * creates only */
    CHECK(store_put_object(&st, cal, "x", 1, "v1", 2, NULL, 1, &etag) == STORE_OK);
    CHECK(store_put_object(&st, cal, "x", 1, "v2", 2, NULL, 1, NULL) == STORE_ERR_PRECONDITION);
    /* If-Match on the current ETag only */
    wrong = etag + 1000;
    CHECK(store_put_object(&st, cal, "x", 1, "v2", 2, &wrong, 0, NULL) == STORE_ERR_PRECONDITION);
    CHECK(store_put_object(&st, cal, "y", 1, "v2", 2, &etag, 0, NULL) == STORE_ERR_PRECONDITION);
    CHECK(store_put_object(&st, cal, "x", 1, "v2", 2, &etag, 0, &etag2) == STORE_OK);
    CHECK(store_put_object(&st, cal, "x", 1, "v3", 2, &etag, 0, NULL) == STORE_ERR_PRECONDITION);
    CHECK(get(cal, "x", body, sizeof(body), NULL) == STORE_OK && strcmp(body, "v2") == 0);
    CHECK(store_delete_object(&st, cal, "x", 1, &etag) == STORE_ERR_PRECONDITION);
    CHECK(store_delete_object(&st, cal, "x", 1, &etag2) == STORE_OK);
    /* after a delete, If-None-Match: * succeeds again */
    CHECK(store_put_object(&st, cal, "x", 1, "v4", 2, NULL, 1, NULL) == STORE_OK);
    flash_file_close(&ff);
}

struct change_log {
    unsigned n, deleted;
    char names[32][16];
    int del[32];
};

static int record_change(void *ctx, const struct store_entry *e)
{
    struct change_log *c = ctx;
    if (c->n < 32 && e->name_len < 16) {
        memcpy(c->names[c->n], e->name, e->name_len);
        c->names[c->n][e->name_len] = 0;
        c->del[c->n] = e->deleted;
    }
    c->n++;
    c->deleted += e->deleted != 0;
    return 0;
}

static int has_change(const struct change_log *c, const char *name, int deleted)
{
    unsigned i;
    for (i = 0; i < c->n && i < 32; i++)
        if (strcmp(c->names[i], name) == 0 && c->del[i] == deleted)
            return 1;
    return 0;
}

static void test_sync(void)
{
    uint32_t cal, token1, token2;
    struct store_collection ci;
    struct change_log ch;

    CHECK(fresh_flash(&ff, "sync.flash", 256 * KIB, 4 * KIB) == FLASH_OK);
    CHECK(mount(&default_cfg, NULL) == STORE_OK);
    CHECK(store_coll_create(&st, "alice", "/c/", &cal) == STORE_OK);
    CHECK(put(cal, "a", "1", NULL) == STORE_OK);
    CHECK(put(cal, "b", "1", NULL) == STORE_OK);
    CHECK(store_coll_info(&st, cal, &ci) == STORE_OK);
    token1 = ci.sync_seq;
    CHECK(token1 == 2);
    CHECK(put(cal, "c", "1", NULL) == STORE_OK);
    CHECK(put(cal, "a", "2", NULL) == STORE_OK);
    CHECK(store_delete_object(&st, cal, "b", 1, NULL) == STORE_OK);
    CHECK(store_coll_info(&st, cal, &ci) == STORE_OK);
    token2 = ci.sync_seq;
    CHECK(token2 == 5);

    memset(&ch, 0, sizeof(ch));
    CHECK(store_changes_since(&st, cal, token1, record_change, &ch) == STORE_OK);
    CHECK(ch.n == 3 && ch.deleted == 1);
    CHECK(has_change(&ch, "a", 0) && has_change(&ch, "b", 1) && has_change(&ch, "c", 0));
    memset(&ch, 0, sizeof(ch));
    CHECK(store_changes_since(&st, cal, token2, record_change, &ch) == STORE_OK && ch.n == 0);
    memset(&ch, 0, sizeof(ch));
    CHECK(store_changes_since(&st, cal, 0, record_change, &ch) == STORE_OK);  /* initial sync */
    CHECK(ch.n == 2 && ch.deleted == 0);
    CHECK(store_changes_since(&st, cal, token2 + 1, record_change, &ch) == STORE_ERR_SYNC_TOKEN);
    memset(&ch, 0, sizeof(ch));
    CHECK(store_list(&st, cal, record_change, &ch) == STORE_OK && ch.n == 2 && ch.deleted == 0);

    /* tombstones survive remount; compaction forgets them and raises the floor */
    check_remount_same("sync");
    memset(&ch, 0, sizeof(ch));
    CHECK(store_changes_since(&st, cal, token1, record_change, &ch) == STORE_OK);
    CHECK(ch.n == 3 && has_change(&ch, "b", 1));
    CHECK(store_compact(&st, 0, NULL) == STORE_OK);
    CHECK(store_coll_info(&st, cal, &ci) == STORE_OK);
    CHECK(ci.sync_seq == token2);
    CHECKF(ci.history_floor == 5, "floor %u", ci.history_floor);
    CHECK(store_changes_since(&st, cal, token1, record_change, &ch) == STORE_ERR_SYNC_TOKEN);
    memset(&ch, 0, sizeof(ch));
    CHECK(store_changes_since(&st, cal, token2, record_change, &ch) == STORE_OK && ch.n == 0);
    CHECK(put(cal, "d", "1", NULL) == STORE_OK);
    memset(&ch, 0, sizeof(ch));
    CHECK(store_changes_since(&st, cal, token2, record_change, &ch) == STORE_OK && ch.n == 1);
    check_remount_same("after compaction");
    CHECK(store_changes_since(&st, cal, token1, record_change, &ch) == STORE_ERR_SYNC_TOKEN);
    CHECK(store_coll_info(&st, cal, &ci) == STORE_OK && ci.sync_seq == token2 + 1 && ci.history_floor == 5);
    flash_file_close(&ff);
}

static void test_limits(void)
{
    static char big[16 * KIB];
    struct store_config cfg = {4 * KIB, 5};
    struct store_space sp;
    uint32_t cal, cal2, i, etag;
    char name[16];
    int rc = STORE_OK;

    cur_cfg = &cfg;
    CHECK(fresh_flash(&ff, "limits.flash", 128 * KIB, 4 * KIB) == FLASH_OK);
    CHECK(mount(&cfg, NULL) == STORE_OK);
    CHECK(store_coll_create(&st, "alice", "/c/", &cal) == STORE_OK);
    memset(big, 'x', sizeof(big));
    CHECK(store_put_object(&st, cal, "big", 3, big, 4 * KIB + 1, NULL, 0, NULL) == STORE_ERR_TOO_LARGE);
    CHECK(store_put_object(&st, cal, "big", 3, big, 4 * KIB, NULL, 0, NULL) == STORE_OK);
    for (i = 0; i < 4; i++) {
        snprintf(name, sizeof(name), "o%u", (unsigned)i);
        CHECK(put(cal, name, "small", NULL) == STORE_OK);
    }
    CHECK(put(cal, "o9", "small", NULL) == STORE_ERR_COLL_FULL);
    CHECK(put(cal, "o1", "replacing is fine", NULL) == STORE_OK);
    CHECK(store_delete_object(&st, cal, "o1", 2, NULL) == STORE_OK);
    CHECK(put(cal, "o9", "room again", NULL) == STORE_OK);

    /* collections: 8 slots */
    for (i = 1; i < 8; i++) {
        snprintf(name, sizeof(name), "/c%u/", (unsigned)i);
        CHECK(store_coll_create(&st, "alice", name, &cal2) == STORE_OK);
    }
    CHECK(store_coll_create(&st, "alice", "/c99/", &cal2) == STORE_ERR_TOO_MANY_COLLECTIONS);
    CHECK(store_coll_create(&st, "alice", "", &cal2) == STORE_ERR_INVALID);

    /* flash full: distinct error, the store keeps working */
    CHECK(store_coll_delete(&st, cal2) == STORE_OK);
    CHECK(store_coll_create(&st, "alice", "/fill/", &cal2) == STORE_OK);
    cfg.max_objects_per_collection = 1000;
    CHECK(mount(&cfg, NULL) == STORE_OK);
    for (i = 0; i < 200 && rc == STORE_OK; i++) {
        snprintf(name, sizeof(name), "f%u", (unsigned)i);
        rc = store_put_object(&st, cal2, name, strlen(name), big, 4 * KIB, NULL, 0, &etag);
    }
    CHECKF(rc == STORE_ERR_NO_SPACE, "rc %d after %u puts", rc, (unsigned)i);
    store_space(&st, &sp);
    CHECK(sp.live <= sp.total && sp.live > 100 * KIB);
    CHECK(put(cal, "o0", "still readable and writable in place?", NULL) == STORE_OK ||
          put(cal, "o0", "x", NULL) == STORE_ERR_NO_SPACE);
    snprintf(name, sizeof(name), "f%u", 0u);
    CHECK(store_delete_object(&st, cal2, name, strlen(name), NULL) == STORE_OK);
    snprintf(name, sizeof(name), "f%u", 1u);
    CHECK(store_delete_object(&st, cal2, name, strlen(name), NULL) == STORE_OK);
    /* deleting made room: compaction reclaims it on the next put */
    CHECK(store_put_object(&st, cal2, "again", 5, big, 4 * KIB, NULL, 0, NULL) == STORE_OK);
    check_remount_same("full flash");
    flash_file_close(&ff);

    /* index full: 16 slots hold 14 entries; compaction drops tombstones first */
    {
        STORE_MEMORY_DEFINE(tiny, 16, 2, 1);
        struct store_config c2 = {1 * KIB, 100};
        struct store_collection ci;
        CHECK(fresh_flash(&ff, "index.flash", 128 * KIB, 4 * KIB) == FLASH_OK);
        CHECK(store_mount(&st, &ff.flash, &c2, &tiny, NULL) == STORE_OK);
        CHECK(store_coll_create(&st, "a", "/i/", &cal) == STORE_OK);
        rc = STORE_OK;
        for (i = 0; i < 20 && rc == STORE_OK; i++) {
            snprintf(name, sizeof(name), "n%u", (unsigned)i);
            rc = put(cal, name, "v", NULL);
        }
        CHECKF(rc == STORE_ERR_INDEX_FULL && i == 15, "rc %d at %u", rc, (unsigned)i);
        CHECK(store_delete_object(&st, cal, "n3", 2, NULL) == STORE_OK);
        CHECK(store_delete_object(&st, cal, "n5", 2, NULL) == STORE_OK);
        CHECK(store_coll_info(&st, cal, &ci) == STORE_OK && ci.history_floor == 0);
        /* compaction drops both tombstones (they share a block) */
        CHECK(put(cal, "new1", "v", NULL) == STORE_OK);
        CHECK(store_coll_info(&st, cal, &ci) == STORE_OK && ci.history_floor == 16);
        CHECK(put(cal, "new2", "v", NULL) == STORE_OK);
        CHECK(put(cal, "new3", "v", NULL) == STORE_ERR_INDEX_FULL);
        CHECK(store_coll_info(&st, cal, &ci) == STORE_OK && ci.history_floor == 16);
        CHECK(store_mount(&st, &ff.flash, &c2, &tiny, NULL) == STORE_OK);
        CHECK(store_coll_info(&st, cal, &ci) == STORE_OK && ci.history_floor == 16 && ci.objects == 14);
        flash_file_close(&ff);
    }
}

static void test_streaming(void)
{
    static uint8_t body[20000], back[20000];
    uint32_t cal, i, etag, got;
    struct store_object_info info;
    struct store_mount_stats ms;
    struct store_config cfg = {32 * KIB, 100};
    int rc;

    for (i = 0; i < sizeof(body); i++)
        body[i] = (uint8_t)(i * 7 + i / 256);
    cur_cfg = &cfg;
    CHECK(fresh_flash(&ff, "stream.flash", 256 * KIB, 4 * KIB) == FLASH_OK);
    CHECK(store_mount(&st, &ff.flash, &cfg, &mem, NULL) == STORE_OK);
    CHECK(store_coll_create(&st, "alice", "/c/", &cal) == STORE_OK);
    /* a body spanning several 4 KiB blocks, written in odd pieces */
    CHECK(store_put_begin(&st, cal, "big.ics", 7, sizeof(body), NULL, 0) == STORE_OK);
    CHECK(store_put_object(&st, cal, "other", 5, "x", 1, NULL, 0, NULL) == STORE_ERR_BUSY);
    CHECK(store_compact(&st, 1, NULL) == STORE_ERR_BUSY);
    for (i = 0; i < sizeof(body); i += 777)
        CHECK(store_put_write(&st, body + i, sizeof(body) - i < 777 ? (uint32_t)(sizeof(body) - i) : 777) == STORE_OK);
    CHECK(store_put_write(&st, body, 1) == STORE_ERR_TOO_LARGE);
    CHECK(store_put_commit(&st, &etag) == STORE_OK);
    CHECK(store_get_object(&st, cal, "big.ics", 7, 0, back, sizeof(back), &got, &info) == STORE_OK);
    CHECK(got == sizeof(body) && memcmp(back, body, sizeof(body)) == 0 && info.etag == etag);

    /* an aborted put leaves no trace, and what follows it replays */
    CHECK(store_put_begin(&st, cal, "half", 4, 9000, NULL, 0) == STORE_OK);
    CHECK(store_put_write(&st, body, 3000) == STORE_OK);
    CHECK(store_put_commit(&st, NULL) == STORE_ERR_INVALID);  /* short */
    CHECK(store_put_abort(&st) == STORE_OK);
    CHECK(store_get_object(&st, cal, "half", 4, 0, back, 10, &got, NULL) == STORE_ERR_NOT_FOUND);
    CHECK(store_put_object(&st, cal, "after", 5, "tail", 4, NULL, 0, NULL) == STORE_OK);
    check_remount_same("aborted put");
    CHECK(store_get_object(&st, cal, "after", 5, 0, back, 10, &got, NULL) == STORE_OK && got == 4);
    CHECK(store_get_object(&st, cal, "half", 4, 0, back, 10, &got, NULL) == STORE_ERR_NOT_FOUND);

    /* torn tail: power cut in the middle of a put; remount drops it */
    flash_file_cut_after(&ff, 5000, 1);
    rc = store_put_object(&st, cal, "torn", 4, body, 12000, NULL, 0, NULL);
    CHECKF(rc == STORE_ERR_IO, "rc %d", rc);
    CHECK(store_put_object(&st, cal, "x", 1, "x", 1, NULL, 0, NULL) == STORE_ERR_IO);  /* stays failed */
    flash_file_power_on(&ff);
    CHECK(store_mount(&st, &ff.flash, &cfg, &mem, &ms) == STORE_OK);
    CHECKF(ms.torn_bytes >= 4900, "torn %u", ms.torn_bytes);
    CHECK(store_get_object(&st, cal, "torn", 4, 0, back, 10, &got, NULL) == STORE_ERR_NOT_FOUND);
    CHECK(store_get_object(&st, cal, "big.ics", 7, 0, back, sizeof(back), &got, &info) == STORE_OK);
    CHECK(got == sizeof(body) && memcmp(back, body, sizeof(body)) == 0 && info.etag == etag);
    CHECK(store_put_object(&st, cal, "torn", 4, body, 12000, NULL, 0, NULL) == STORE_OK);
    check_remount_same("after torn tail");
    CHECK(store_get_object(&st, cal, "torn", 4, 0, back, sizeof(back), &got, NULL) == STORE_OK);
    CHECK(got == 12000 && memcmp(back, body, 12000) == 0);
    flash_file_close(&ff);
}

static void test_compaction(void)
{
    static uint8_t body[3000];
    struct store_space sp, sp2;
    uint32_t cal, i, round, reclaimed;
    char name[16];
    struct store_config cfg = {4 * KIB, 100};

    memset(body, 'c', sizeof(body));
    cur_cfg = &cfg;
    CHECK(fresh_flash(&ff, "compact.flash", 128 * KIB, 4 * KIB) == FLASH_OK);
    CHECK(store_mount(&st, &ff.flash, &cfg, &mem, NULL) == STORE_OK);
    CHECK(store_coll_create(&st, "alice", "/c/", &cal) == STORE_OK);
    CHECK(store_user_set(&st, "alice", (const uint8_t *)"hash", 4) == STORE_OK);
    /* rewrite ten objects many times: far more than the flash holds */
    for (round = 0; round < 40; round++) {
        for (i = 0; i < 10; i++) {
            snprintf(name, sizeof(name), "obj%u", (unsigned)i);
            body[0] = (uint8_t)round;
            CHECK(store_put_object(&st, cal, name, strlen(name), body, 1000 + i * 200, NULL, 0, NULL) == STORE_OK);
        }
    }
    for (i = 0; i < 10; i++) {
        uint8_t back[3000];
        uint32_t got;
        snprintf(name, sizeof(name), "obj%u", (unsigned)i);
        CHECK(store_get_object(&st, cal, name, strlen(name), 0, back, sizeof(back), &got, NULL) == STORE_OK);
        CHECK(got == 1000 + i * 200 && back[0] == 39 && back[1] == 'c');
    }
    check_remount_same("after wrap-around");
    store_space(&st, &sp);
    CHECK(store_compact(&st, 0, &reclaimed) == STORE_OK);
    store_space(&st, &sp2);
    CHECK(sp2.live == sp.live && sp2.used <= sp.used);
    check_remount_same("after explicit compaction");
    flash_file_close(&ff);

    /* 64 KiB erase blocks and an object of the full 64 KiB */
    {
        static uint8_t huge[64 * KIB], back[64 * KIB];
        struct store_config c64 = {64 * KIB, 10};
        uint32_t got;
        for (i = 0; i < sizeof(huge); i++)
            huge[i] = (uint8_t)(i ^ (i >> 9));
        cur_cfg = &c64;
        CHECK(fresh_flash(&ff, "big_blocks.flash", 1024 * KIB, 64 * KIB) == FLASH_OK);
        CHECK(store_mount(&st, &ff.flash, &c64, &mem, NULL) == STORE_OK);
        CHECK(store_coll_create(&st, "alice", "/c/", &cal) == STORE_OK);
        for (round = 0; round < 12; round++)
            CHECK(store_put_object(&st, cal, "huge", 4, huge, sizeof(huge), NULL, 0, NULL) == STORE_OK);
        check_remount_same("64 KiB blocks");
        CHECK(store_get_object(&st, cal, "huge", 4, 0, back, sizeof(back), &got, NULL) == STORE_OK);
        CHECK(got == sizeof(huge) && memcmp(back, huge, sizeof(huge)) == 0);
        flash_file_close(&ff);
    }
}

/* Member lists (store_list in name hash order, resumable with
 * store_list_from) and tags (store_tag_next / store_tag_set): a tag is
 * known only once set, forgotten by a new version, a remount or a delete,
 * and follows its object through compaction and slot moves. */
struct listed { unsigned n; uint32_t last_hash; int ordered; char names[64][16]; };

static int note_listed(void *ctx, const struct store_entry *e)
{
    struct listed *l = ctx;
    if (l->n && e->name_hash < l->last_hash)
        l->ordered = 0;
    l->last_hash = e->name_hash;
    if (l->n < 64 && e->name_len < 16) {
        memcpy(l->names[l->n], e->name, e->name_len);
        l->names[l->n][e->name_len] = 0;
    }
    l->n++;
    return 0;
}

/* the candidates store_tag_next gives for tag, as a bit set of objN */
static uint64_t tag_candidates(uint32_t coll, uint32_t tag, uint64_t *known_set)
{
    uint32_t pos = STORE_TAG_START;
    char name[STORE_NAME_MAX + 1];
    size_t len;
    int known, rc;
    uint64_t set = 0;
    *known_set = 0;
    while ((rc = store_tag_next(&st, coll, tag, &pos, name, sizeof(name), &len, &known)) == 1) {
        unsigned i = (unsigned)atoi(name + 3);
        set |= 1ull << i;
        if (known)
            *known_set |= 1ull << i;
    }
    CHECK(rc == 0);
    return set;
}

static void test_members_and_tags(void)
{
    struct store_config cfg = {4 * KIB, 100};
    struct listed l;
    uint32_t a, b, i, from;
    uint64_t cand, known;
    char name[16], body[600];

    cur_cfg = &cfg;
    CHECK(fresh_flash(&ff, "tags.flash", 128 * KIB, 4 * KIB) == FLASH_OK);
    CHECK(store_mount(&st, &ff.flash, &cfg, &mem, NULL) == STORE_OK);
    CHECK(store_coll_create(&st, "alice", "/a/", &a) == STORE_OK);
    CHECK(store_coll_create(&st, "alice", "/b/", &b) == STORE_OK);
    memset(body, 'x', sizeof(body) - 1);
    body[sizeof(body) - 1] = 0;
    for (i = 0; i < 40; i++) {
        snprintf(name, sizeof(name), "obj%u", (unsigned)i);
        CHECK(put(i % 4 ? a : b, name, body, NULL) == STORE_OK);
    }
    memset(&l, 0, sizeof(l));
    l.ordered = 1;
    CHECK(store_list(&st, a, note_listed, &l) == STORE_OK && l.n == 30 && l.ordered);
    /* resuming at a hash lists exactly the members from it on */
    from = l.last_hash;
    memset(&l, 0, sizeof(l));
    l.ordered = 1;
    CHECK(store_list_from(&st, a, from, note_listed, &l) == STORE_OK && l.n >= 1 && l.ordered);
    CHECK(l.last_hash == from);

    /* nothing known yet: every live member of the collection is a candidate */
    CHECK(tag_candidates(b, 7, &known) == 0x1111111111ull && known == 0);
    CHECK(store_tag_set(&st, b, "obj0", 4, 7) == STORE_OK);
    CHECK(store_tag_set(&st, b, "obj4", 4, 8) == STORE_OK);
    CHECK(store_tag_set(&st, a, "obj4", 4, 7) == STORE_ERR_NOT_FOUND);
    cand = tag_candidates(b, 7, &known);
    CHECK(cand == (0x1111111111ull & ~0x10ull) && known == 1);  /* obj4 (tag 8) left out */
    /* a new version forgets the tag */
    CHECK(put(b, "obj4", "new content", NULL) == STORE_OK);
    CHECK(tag_candidates(b, 7, &known) == 0x1111111111ull && known == 1);
    CHECK(store_tag_set(&st, b, "obj4", 4, 8) == STORE_OK);
    /* a deleted object is no candidate */
    CHECK(store_delete_object(&st, b, "obj0", 4, NULL) == STORE_OK);
    CHECK(tag_candidates(b, 7, &known) == (0x1111111111ull & ~0x11ull) && known == 0);
    /* deletes in the other collection move slots (backward shift); compaction moves
     * records: tags stay with their objects, the lists stay whole */
    CHECK(store_tag_set(&st, b, "obj8", 4, 7) == STORE_OK);
    for (i = 1; i < 40; i += 4) {
        snprintf(name, sizeof(name), "obj%u", (unsigned)i);
        CHECK(store_delete_object(&st, a, name, strlen(name), NULL) == STORE_OK);
    }
    for (i = 0; i < 30; i++)  /* rewrites wrap the log: every block compacted */
        CHECK(put(a, "obj2", body, NULL) == STORE_OK);
    CHECK(store_compact(&st, 0, NULL) == STORE_OK);
    CHECK(st.compactions > 0);
    cand = tag_candidates(b, 7, &known);
    CHECK(cand == (0x1111111111ull & ~0x11ull) && known == 0x100);
    CHECK(tag_candidates(b, 8, &known) == (0x1111111111ull & ~0x101ull) && known == 0x10);
    memset(&l, 0, sizeof(l));
    l.ordered = 1;
    CHECK(store_list(&st, a, note_listed, &l) == STORE_OK && l.n == 20 && l.ordered);
    /* a remount knows no tag */
    check_remount_same("members and tags");
    CHECK(tag_candidates(b, 8, &known) == (0x1111111111ull & ~0x1ull) && known == 0);
    flash_file_close(&ff);
    cur_cfg = &default_cfg;
}

static void test_bad_geometry(void)
{
    struct store_config cfg = {64 * KIB, 10};
    CHECK(fresh_flash(&ff, "small.flash", 64 * KIB, 4 * KIB) == FLASH_OK);
    /* 16 blocks cannot hold the reserve a 64 KiB object needs */
    CHECK(store_mount(&st, &ff.flash, &cfg, &mem, NULL) == STORE_ERR_INVALID);
    CHECK(store_coll_create(&st, "a", "/x/", NULL) == STORE_ERR_IO);
    cfg.max_object_size = 0;
    CHECK(store_mount(&st, &ff.flash, &cfg, &mem, NULL) == STORE_ERR_INVALID);
    flash_file_close(&ff);
    /* a flash full of foreign data mounts empty and gets reused */
    {
        uint8_t junk[256];
        uint32_t b, cal;
        struct store_mount_stats ms;
        cur_cfg = &cfg;
        CHECK(fresh_flash(&ff, "junk.flash", 128 * KIB, 4 * KIB) == FLASH_OK);
        memset(junk, 0x5a, sizeof(junk));
        for (b = 0; b < 128 * KIB; b += 256)
            flash_program(&ff.flash, b, junk, 256);
        cfg.max_object_size = 4 * KIB;
        CHECK(store_mount(&st, &ff.flash, &cfg, &mem, &ms) == STORE_OK);
        CHECK(ms.records == 0 && ms.stale_blocks == 32);
        CHECK(store_coll_create(&st, "a", "/x/", &cal) == STORE_OK);
        CHECK(put(cal, "k", "v", NULL) == STORE_OK);
        check_remount_same("foreign data");
        flash_file_close(&ff);
    }
}

/* flash address of the first occurrence of text, or -1 */
static long find_on_flash(const char *text)
{
    static uint8_t image[64 * KIB];
    size_t len = strlen(text), i;
    if (ff.flash.geo.size > sizeof(image) || flash_read(&ff.flash, 0, image, ff.flash.geo.size))
        return -1;
    for (i = 0; i + len <= ff.flash.geo.size; i++)
        if (!memcmp(image + i, text, len))
            return (long)i;
    return -1;
}

/* store_check must notice damage on the flash that the RAM state relies on */
static void test_check_finds_damage(void)
{
    static const uint8_t zero = 0, marker[4] = {1, 2, 3, 4};
    struct store_check sc;
    uint32_t coll, etag;
    long at;

    CHECK(fresh_flash(&ff, "check.flash", 64 * KIB, 4 * KIB) == FLASH_OK);
    CHECK(mount(&default_cfg, NULL) == STORE_OK);
    CHECK(store_coll_create(&st, "alice", "/cal/alice/home/", &coll) == STORE_OK);
    CHECK(put(coll, "a.ics", "BEGIN:VCALENDAR first body", &etag) == STORE_OK);
    CHECK(put(coll, "b.ics", "BEGIN:VCALENDAR second body", &etag) == STORE_OK);
    CHECK(store_check(&st, &sc) == STORE_OK && sc.problems == 0);
    CHECK(sc.objects == 2 && sc.collections == 1 && sc.blocks == 1);

    /* bytes programmed where the next record goes */
    CHECK(flash_program(&ff.flash, st.write_addr + 8, marker, sizeof(marker)) == FLASH_OK);
    CHECK(store_check(&st, &sc) == STORE_OK && sc.problems == 1);
    CHECK(sc.first_problem && strstr(sc.first_problem, "after the write position"));
    /* a remount writes on in a fresh block */
    CHECK(mount(&default_cfg, NULL) == STORE_OK);
    CHECK(store_check(&st, &sc) == STORE_OK && sc.problems == 0 && sc.objects == 2);

    /* a bit cleared inside a stored body: its CRC no longer matches */
    at = find_on_flash("first body");
    CHECK(at >= 0);
    CHECK(flash_program(&ff.flash, (uint32_t)at, &zero, 1) == FLASH_OK);
    CHECK(store_check(&st, &sc) == STORE_OK && sc.problems >= 1);
    CHECK(sc.first_problem && strstr(sc.first_problem, "object record invalid"));
    flash_file_close(&ff);
}

/* ---- COPY and MOVE (store_copy_object) ----------------------------------- */

static int copy(uint32_t sc, const char *s, uint32_t dc, const char *d, int move, uint32_t *etag)
{
    return store_copy_object(&st, sc, s, strlen(s), dc, d, strlen(d), move, etag);
}

/* the changes of coll after token: n, and the deleted ones as a bit mask in list order */
struct changes { unsigned n, deleted; char names[8][16]; };
static int note_change(void *ctx, const struct store_entry *e)
{
    struct changes *c = ctx;
    if (c->n < 8) {
        snprintf(c->names[c->n], sizeof(c->names[0]), "%.*s", (int)e->name_len, e->name);
        if (e->deleted)
            c->deleted |= 1u << c->n;
    }
    c->n++;
    return 0;
}

static void test_copy_move(void)
{
    uint32_t a, b, e1, e2, e3, i;
    char body[256];
    struct store_object_info info;
    struct store_collection ca, cb;
    struct changes ch;
    struct store_check sc;

    cur_cfg = &default_cfg;  /* test_bad_geometry left it on its own (gone) one */
    CHECK(fresh_flash(&ff, "copymove.flash", 64 * KIB, 4 * KIB) == FLASH_OK);
    CHECK(mount(&default_cfg, NULL) == STORE_OK);
    CHECK(store_coll_create(&st, "alice", "/a/", &a) == STORE_OK);
    CHECK(store_coll_create(&st, "alice", "/b/", &b) == STORE_OK);
    CHECK(put(a, "x.ics", "body of x", &e1) == STORE_OK);

    /* copy: both there, a new ETag, only the destination's collection changes */
    CHECK(store_coll_info(&st, a, &ca) == STORE_OK && ca.sync_seq == 1);
    CHECK(copy(a, "x.ics", b, "y.ics", 0, &e2) == STORE_OK && e2 != e1);
    CHECK(get(b, "y.ics", body, sizeof(body), &info) == STORE_OK && strcmp(body, "body of x") == 0);
    CHECK(info.etag == e2 && info.sync_seq == 1);
    CHECK(get(a, "x.ics", body, sizeof(body), &info) == STORE_OK && info.etag == e1);
    CHECK(store_coll_info(&st, a, &ca) == STORE_OK && ca.sync_seq == 1 && ca.objects == 1);
    CHECK(copy(a, "x.ics", a, "x.ics", 0, NULL) == STORE_ERR_INVALID);
    CHECK(copy(a, "x.ics", a, "x.ics", 1, NULL) == STORE_ERR_INVALID);
    CHECK(copy(a, "none", b, "z.ics", 1, NULL) == STORE_ERR_NOT_FOUND);
    CHECK(copy(a, "x.ics", 999, "z.ics", 1, NULL) == STORE_ERR_NOT_FOUND);
    check_remount_same("copy");

    /* move across collections, over an existing object */
    CHECK(put(b, "z.ics", "old z", &e3) == STORE_OK);
    CHECK(store_coll_info(&st, b, &cb) == STORE_OK && cb.sync_seq == 2 && cb.objects == 2);
    CHECK(copy(a, "x.ics", b, "z.ics", 1, &e3) == STORE_OK);
    CHECK(get(a, "x.ics", body, sizeof(body), NULL) == STORE_ERR_NOT_FOUND);
    CHECK(get(b, "z.ics", body, sizeof(body), &info) == STORE_OK && strcmp(body, "body of x") == 0);
    CHECK(info.etag == e3);
    CHECK(store_coll_info(&st, a, &ca) == STORE_OK && ca.sync_seq == 2 && ca.objects == 0);
    CHECK(store_coll_info(&st, b, &cb) == STORE_OK && cb.sync_seq == 3 && cb.objects == 2);
    /* RFC 6578: the source's collection reports a deletion, the destination's a change */
    memset(&ch, 0, sizeof(ch));
    CHECK(store_changes_since(&st, a, 1, note_change, &ch) == STORE_OK);
    CHECK(ch.n == 1 && ch.deleted == 1 && strcmp(ch.names[0], "x.ics") == 0);
    memset(&ch, 0, sizeof(ch));
    CHECK(store_changes_since(&st, b, 2, note_change, &ch) == STORE_OK);
    CHECK(ch.n == 1 && ch.deleted == 0 && strcmp(ch.names[0], "z.ics") == 0);
    check_remount_same("move across collections");
    CHECK(get(b, "z.ics", body, sizeof(body), &info) == STORE_OK && info.etag == e3);

    /* move inside one collection: two changes, the put's then the delete's */
    CHECK(copy(b, "z.ics", b, "w.ics", 1, &e1) == STORE_OK);
    CHECK(store_coll_info(&st, b, &cb) == STORE_OK && cb.sync_seq == 5 && cb.objects == 2);
    memset(&ch, 0, sizeof(ch));
    CHECK(store_changes_since(&st, b, 3, note_change, &ch) == STORE_OK && ch.n == 2);
    check_remount_same("move inside a collection");
    CHECK(get(b, "w.ics", body, sizeof(body), &info) == STORE_OK && strcmp(body, "body of x") == 0);
    CHECK(get(b, "z.ics", body, sizeof(body), NULL) == STORE_ERR_NOT_FOUND);

    /* a MOVE's put survives compaction (copied as a plain PUT, its MDEL dropped) */
    for (i = 0; i < 60; i++)
        CHECK(put(a, "churn", "churn churn churn churn churn churn churn churn churn churn", NULL) == STORE_OK);
    for (i = 0; i < 40; i++) {
        static char pad[1501];
        memset(pad, 'p', 1500);
        CHECK(put(a, "pad", pad, NULL) == STORE_OK);
    }
    CHECK(store_compact(&st, 0, NULL) == STORE_OK);
    CHECK(st.compactions > 0);
    CHECK(store_check(&st, &sc) == STORE_OK && sc.problems == 0);
    check_remount_same("move compacted");
    CHECK(get(b, "w.ics", body, sizeof(body), &info) == STORE_OK && strcmp(body, "body of x") == 0);
    CHECK(info.etag == e1);

    /* collections: a copy is new and empty with the same properties, a rename keeps
     * its id, members and sync state */
    {
        uint32_t c2, id;
        size_t len;
        char buf[32];
        CHECK(store_coll_set_prop(&st, b, STORE_PROP_DISPLAYNAME, "Bee", 3) == STORE_OK);
        CHECK(store_coll_info(&st, b, &cb) == STORE_OK);
        CHECK(store_coll_copy(&st, b, "/a/", 0, &c2) == STORE_ERR_EXISTS);
        CHECK(store_coll_copy(&st, b, "/c/", 0, &c2) == STORE_OK && c2 != b);
        CHECK(store_coll_info(&st, c2, &ca) == STORE_OK && ca.objects == 0 && ca.sync_seq == 0);
        CHECK(ca.path_len == 3 && memcmp(ca.path, "/c/", 3) == 0);
        CHECK(store_coll_get_prop(&st, c2, STORE_PROP_DISPLAYNAME, buf, sizeof(buf), &len) == STORE_OK);
        CHECK(len == 3 && memcmp(buf, "Bee", 3) == 0);
        CHECK(store_coll_copy(&st, b, "/bb/", 1, &id) == STORE_OK && id == b);
        CHECK(store_coll_find(&st, "/b/", 3, &id) == STORE_ERR_NOT_FOUND);
        CHECK(store_coll_find(&st, "/bb/", 4, &id) == STORE_OK && id == b);
        CHECK(store_coll_info(&st, b, &ca) == STORE_OK && ca.objects == cb.objects && ca.sync_seq == cb.sync_seq);
        check_remount_same("collection copy and rename");
        CHECK(store_coll_find(&st, "/bb/", 4, &id) == STORE_OK && id == b);
        CHECK(get(b, "w.ics", body, sizeof(body), NULL) == STORE_OK);
        CHECK(store_coll_get_prop(&st, b, STORE_PROP_DISPLAYNAME, buf, sizeof(buf), &len) == STORE_OK);
        CHECK(store_coll_delete(&st, c2) == STORE_OK);
    }

    /* the destination collection's limit; a move inside a full one is fine */
    {
        struct store_config cfg = {8 * KIB, 2};
        cur_cfg = &cfg;
        CHECK(mount(&cfg, NULL) == STORE_OK);
        CHECK(store_delete_object(&st, a, "churn", 5, NULL) == STORE_OK);
        CHECK(put(a, "q", "q", NULL) == STORE_OK);
        CHECK(store_coll_info(&st, b, &cb) == STORE_OK && cb.objects == 2);
        CHECK(copy(a, "q", b, "q", 0, NULL) == STORE_ERR_COLL_FULL);
        CHECK(copy(a, "q", b, "q", 1, NULL) == STORE_ERR_COLL_FULL);
        CHECK(copy(b, "w.ics", b, "v.ics", 1, NULL) == STORE_OK);
        check_remount_same("limits");
        cur_cfg = &default_cfg;
    }
    flash_file_close(&ff);
}

/* The MOVE of one object cut by a power loss after every number of bytes it
 * programs: after a remount the object is at exactly one of its names (with
 * its body; the overwritten destination's old body if at the source), the
 * store checks clean, and what follows (a put at the cut's place, a
 * compaction of every block) cannot complete the cut move. */
static void move_cut(int same_coll, int overwrite, int64_t budget, int *moved)
{
    uint32_t a, b, dc, sync_a, sync_b;
    char body[256];
    struct store_check sc;
    struct store_collection ci;
    int rc, at_src, at_dst, i;

    CHECK(fresh_flash(&ff, "movecut.flash", 64 * KIB, 4 * KIB) == FLASH_OK);
    CHECK(mount(&default_cfg, NULL) == STORE_OK);
    CHECK(store_coll_create(&st, "alice", "/a/", &a) == STORE_OK);
    CHECK(store_coll_create(&st, "alice", "/b/", &b) == STORE_OK);
    dc = same_coll ? a : b;
    /* fill most of the first block so the move's records cross into the next */
    memset(body, 'f', 200);
    body[200] = 0;
    for (i = 0; i < 18; i++) {
        char name[16];
        snprintf(name, sizeof(name), "f%d", i);
        CHECK(put(b, name, body, NULL) == STORE_OK);
    }
    CHECK(put(a, "src.ics", "BEGIN:VCALENDAR the moving body END:VCALENDAR", NULL) == STORE_OK);
    if (overwrite)
        CHECK(put(dc, "dst.ics", "old destination", NULL) == STORE_OK);
    CHECK(store_coll_info(&st, a, &ci) == STORE_OK);
    sync_a = ci.sync_seq;
    CHECK(store_coll_info(&st, b, &ci) == STORE_OK);
    sync_b = ci.sync_seq;

    flash_file_cut_after(&ff, budget, (uint64_t)budget + 1);
    rc = copy(a, "src.ics", dc, "dst.ics", 1, NULL);
    flash_file_power_on(&ff);
    CHECKF(rc == STORE_OK || rc == STORE_ERR_IO, "move rc %d at %lld", rc, (long long)budget);
    CHECKF(mount(&default_cfg, NULL) == STORE_OK, "remount after a cut at %lld", (long long)budget);
    CHECK(store_check(&st, &sc) == STORE_OK && sc.problems == 0);
    at_src = get(a, "src.ics", body, sizeof(body), NULL) == STORE_OK;
    CHECKF(!at_src || strstr(body, "the moving body"), "source body at %lld", (long long)budget);
    at_dst = get(dc, "dst.ics", body, sizeof(body), NULL) == STORE_OK && strstr(body, "the moving body");
    CHECKF(at_src != at_dst, "cut at %lld: at source %d, at destination %d", (long long)budget, at_src, at_dst);
    if (at_src && overwrite)
        CHECKF(get(dc, "dst.ics", body, sizeof(body), NULL) == STORE_OK && strcmp(body, "old destination") == 0,
               "overwritten destination at %lld", (long long)budget);
    if (at_src && !overwrite)
        CHECK(get(dc, "dst.ics", body, sizeof(body), NULL) == STORE_ERR_NOT_FOUND);
    if (rc == STORE_OK)
        CHECKF(at_dst, "acknowledged move lost at %lld", (long long)budget);
    /* sync tokens: unchanged, or advanced as the move's records say */
    CHECK(store_coll_info(&st, a, &ci) == STORE_OK);
    CHECKF(at_src ? ci.sync_seq == sync_a : ci.sync_seq == sync_a + 1 + same_coll, "sync a at %lld",
           (long long)budget);
    if (!same_coll) {
        CHECK(store_coll_info(&st, b, &ci) == STORE_OK);
        CHECKF(at_src ? ci.sync_seq == sync_b : ci.sync_seq == sync_b + 1, "sync b at %lld", (long long)budget);
    }
    *moved = at_dst;
    /* writes after the cut and a compaction of every block keep it so */
    CHECK(put(b, "after", "after the cut", NULL) == STORE_OK);
    check_remount_same("after a cut move");
    CHECK(store_compact(&st, 0, NULL) == STORE_OK);
    check_remount_same("compacted after a cut move");
    CHECK((get(a, "src.ics", body, sizeof(body), NULL) == STORE_OK) == at_src);
    flash_file_close(&ff);
}

static void test_move_power_cut(void)
{
    int same, over, moved;
    for (same = 0; same < 2; same++) {
        for (over = 0; over < 2; over++) {
            int64_t budget, cuts = 0, done_at = -1;
            /* every byte of the move, until it completes without a cut */
            for (budget = 0; budget < 4096 && done_at < 0; budget++) {
                move_cut(same, over, budget, &moved);
                cuts++;
                if (moved)
                    done_at = budget;
            }
            CHECKF(done_at > 40 && cuts == done_at + 1, "move (same %d, overwrite %d) visible after %lld bytes", same, over,
                   (long long)done_at);
            /* and every budget past that keeps it moved */
            for (budget = done_at; budget < done_at + 64; budget++) {
                move_cut(same, over, budget, &moved);
                CHECKF(moved, "cut at %lld undid a move (same %d, overwrite %d)", (long long)budget, same, over);
            }
        }
    }
}

/* Property lists: 'D' entries as dead properties, one entry per value. */
static size_t dead_list(uint8_t *out, const char *const *values, unsigned n)
{
    size_t len = 0, v;
    unsigned i;
    for (i = 0; i < n; i++) {
        v = strlen(values[i]);
        out[len++] = STORE_PROP_DEAD;
        out[len++] = (uint8_t)v;
        out[len++] = (uint8_t)(v >> 8);
        memcpy(out + len, values[i], v);
        len += v;
    }
    return len;
}

/* Is the object's (or, name NULL, the collection's) property list list[0..len)? */
static int props_are(uint32_t coll, const char *name, const uint8_t *want, size_t want_len)
{
    const uint8_t *list;
    size_t len;
    int rc = name ? store_obj_props(&st, coll, name, strlen(name), &list, &len)
                  : store_coll_props(&st, coll, &list, &len);
    return rc == STORE_OK && len == want_len && (!len || memcmp(list, want, len) == 0);
}

/* Dead properties (RFC 4918 section 4) of objects and collections: a list
 * replaced in one record, the object's body and ETag kept, carried by a PUT,
 * a COPY and a MOVE, gone with a DELETE, the limits, and a remount. */
static void test_dead_props(void)
{
    static const char *const two[] = {"first", "second value"}, *const one[] = {"only"};
    uint8_t list[STORE_PROPS_MAX + 64], list1[64], big[STORE_PROPS_MAX + 64];
    char body[64];
    uint32_t cal, other, etag, etag2, sync_before;
    struct store_object_info info;
    struct store_collection ci;
    size_t len = dead_list(list, two, 2), len1 = dead_list(list1, one, 1), vlen;

    static uint32_t etags[256];

    mem.index_etags = etags;  /* store_object_is_current from RAM: a PPUT's ETag field */
    CHECK(fresh_flash(&ff, "deadprops.flash", 256 * KIB, 4 * KIB) == FLASH_OK);
    CHECK(mount(&default_cfg, NULL) == STORE_OK);
    CHECK(store_coll_create(&st, "alice", "/cal/alice/a/", &cal) == STORE_OK);
    CHECK(store_coll_create(&st, "alice", "/cal/alice/b/", &other) == STORE_OK);
    CHECK(put(cal, "x.ics", "the body", &etag) == STORE_OK);
    CHECK(props_are(cal, "x.ics", NULL, 0));
    CHECK(store_obj_props(&st, cal, "none.ics", 8, (const uint8_t **)&body, &vlen) == STORE_ERR_NOT_FOUND);
    CHECK(store_obj_set_props(&st, cal, "none.ics", 8, list, len) == STORE_ERR_NOT_FOUND);

    /* an object's list: same body and ETag, the next sync */
    CHECK(store_coll_info(&st, cal, &ci) == STORE_OK);
    sync_before = ci.sync_seq;
    CHECK(store_obj_set_props(&st, cal, "x.ics", 5, list, len) == STORE_OK);
    CHECK(props_are(cal, "x.ics", list, len));
    CHECK(get(cal, "x.ics", body, sizeof(body), &info) == STORE_OK && strcmp(body, "the body") == 0);
    CHECK(info.etag == etag && info.props_len == len && info.size == 8 && info.sync_seq == sync_before + 1);
    CHECK(store_object_is_current(&st, cal, "x.ics", 5, etag) == 1);
    check_remount_same("object properties");
    CHECK(props_are(cal, "x.ics", list, len));
    CHECK(store_object_is_current(&st, cal, "x.ics", 5, etag) == 1);
    /* If-Match still takes the kept ETag */
    CHECK(store_put_object(&st, cal, "x.ics", 5, "new body", 8, &etag, 0, &etag2) == STORE_OK);
    CHECK(etag2 != etag && props_are(cal, "x.ics", list, len));  /* a PUT keeps them */
    CHECK(get(cal, "x.ics", body, sizeof(body), &info) == STORE_OK && strcmp(body, "new body") == 0);
    CHECK(info.etag == etag2);
    /* replace, then empty */
    CHECK(store_obj_set_props(&st, cal, "x.ics", 5, list1, len1) == STORE_OK && props_are(cal, "x.ics", list1, len1));
    CHECK(store_obj_set_props(&st, cal, "x.ics", 5, NULL, 0) == STORE_OK && props_are(cal, "x.ics", NULL, 0));
    CHECK(get(cal, "x.ics", body, sizeof(body), &info) == STORE_OK && info.etag == etag2 && info.size == 8);
    CHECK(store_obj_set_props(&st, cal, "x.ics", 5, list, len) == STORE_OK);

    /* COPY and MOVE carry the list; DELETE ends it */
    CHECK(store_copy_object(&st, cal, "x.ics", 5, other, "copy.ics", 8, 0, &etag) == STORE_OK);
    CHECK(props_are(other, "copy.ics", list, len) && props_are(cal, "x.ics", list, len));
    CHECK(store_copy_object(&st, cal, "x.ics", 5, other, "moved.ics", 9, 1, &etag) == STORE_OK);
    CHECK(props_are(other, "moved.ics", list, len));
    CHECK(get(other, "moved.ics", body, sizeof(body), &info) == STORE_OK && info.etag == etag &&
          strcmp(body, "new body") == 0);
    CHECK(store_delete_object(&st, other, "moved.ics", 9, NULL) == STORE_OK);
    CHECK(put(other, "moved.ics", "again", NULL) == STORE_OK && props_are(other, "moved.ics", NULL, 0));
    check_remount_same("copied and moved properties");
    CHECK(props_are(other, "copy.ics", list, len));
    CHECK(store_compact(&st, 0, NULL) == STORE_OK);
    check_remount_same("compacted properties");
    CHECK(props_are(other, "copy.ics", list, len));

    /* a collection's list: live and dead properties in one record */
    CHECK(store_coll_set_prop(&st, cal, STORE_PROP_DISPLAYNAME, "Cal", 3) == STORE_OK);
    CHECK(props_are(cal, NULL, (const uint8_t *)"\x01\x03\x00" "Cal", 6));
    memcpy(big, "\x01\x03\x00" "Cal", 6);
    memcpy(big + 6, list, len);
    CHECK(store_coll_set_props(&st, cal, big, 6 + len) == STORE_OK && props_are(cal, NULL, big, 6 + len));
    CHECK(store_coll_set_prop(&st, cal, STORE_PROP_COLOR, "#fff", 4) == STORE_OK);
    CHECK(store_coll_get_prop(&st, cal, STORE_PROP_DISPLAYNAME, body, sizeof(body), &vlen) == STORE_OK && vlen == 3);
    CHECK(store_coll_copy(&st, cal, "/cal/alice/c/", 0, &etag) == STORE_OK);  /* a COPY carries them */
    memcpy(big + 6 + len, "\x03\x04\x00#fff", 7);
    CHECK(props_are(etag, NULL, big, 6 + len + 7));
    check_remount_same("collection properties");
    CHECK(props_are(cal, NULL, big, 6 + len + 7));

    /* limits and malformed lists, nothing written */
    memset(big, 'v', sizeof(big));
    big[0] = STORE_PROP_DEAD;
    big[1] = (uint8_t)(STORE_PROPS_MAX - 2);
    big[2] = (uint8_t)((STORE_PROPS_MAX - 2) >> 8);
    CHECK(store_obj_set_props(&st, other, "copy.ics", 8, big, STORE_PROPS_MAX + 1) == STORE_ERR_TOO_LARGE);
    CHECK(store_obj_set_props(&st, other, "copy.ics", 8, big, STORE_PROPS_MAX - 1) == STORE_ERR_INVALID);
    CHECK(store_coll_set_props(&st, cal, big, STORE_PROPS_MAX + 1) == STORE_ERR_TOO_LARGE);
    big[1] = (uint8_t)(STORE_PROPS_MAX - 3);
    big[2] = (uint8_t)((STORE_PROPS_MAX - 3) >> 8);
    CHECK(store_obj_set_props(&st, other, "copy.ics", 8, big, STORE_PROPS_MAX) == STORE_OK);
    CHECK(props_are(other, "copy.ics", big, STORE_PROPS_MAX));
    CHECK(store_coll_set_props(&st, cal, big, STORE_PROPS_MAX) == STORE_ERR_TOO_LARGE);  /* + owner, path */
    CHECK(props_are(cal, NULL, big, 0) == 0);
    check_remount_same("properties at the limit");
    mem.index_etags = NULL;
    flash_file_close(&ff);
}

/* An object's body and property list share the largest record. */
static void test_dead_props_share_the_record(void)
{
    static const struct store_config small = {2 * KIB, 50};
    static char body[2 * KIB];
    uint8_t list[STORE_PROPS_MAX];
    uint32_t cal;
    size_t room = STORE_NAME_MAX - 5 - 6 - STORE_PROP_HEAD;  /* the name's slack, a PPUT's head */

    cur_cfg = &small;
    CHECK(fresh_flash(&ff, "deadprops-record.flash", 256 * KIB, 4 * KIB) == FLASH_OK);
    CHECK(mount(&small, NULL) == STORE_OK);
    CHECK(store_coll_create(&st, "alice", "/cal/alice/a/", &cal) == STORE_OK);
    memset(body, 'b', sizeof(body));
    CHECK(store_put_object(&st, cal, "x.ics", 5, body, sizeof(body), NULL, 0, NULL) == STORE_OK);
    memset(list, 'p', sizeof(list));
    list[0] = STORE_PROP_DEAD;
    list[1] = (uint8_t)(room + 1);
    list[2] = 0;
    CHECK(store_obj_set_props(&st, cal, "x.ics", 5, list, STORE_PROP_HEAD + room + 1) == STORE_ERR_TOO_LARGE);
    list[1] = (uint8_t)room;
    CHECK(store_obj_set_props(&st, cal, "x.ics", 5, list, STORE_PROP_HEAD + room) == STORE_OK);
    /* a longer destination name leaves no room for the pair */
    CHECK(store_copy_object(&st, cal, "x.ics", 5, cal, "y.icsx", 6, 0, NULL) == STORE_ERR_TOO_LARGE);
    CHECK(store_put_object(&st, cal, "x.ics", 5, body, sizeof(body) - 1, NULL, 0, NULL) == STORE_OK);
    CHECK(store_copy_object(&st, cal, "x.ics", 5, cal, "y.icsx", 6, 0, NULL) == STORE_OK);
    check_remount_same("a full record");
    cur_cfg = &default_cfg;
    flash_file_close(&ff);
}

/* store_object_is_current: with index_etags kept it answers from RAM, and
 * gives what the flash says (store_get_object's ETag) through overwrites,
 * deletes (index slots moved by backward-shift deletion), COPY, MOVE,
 * compaction and a remount; an old ETag, another name's or a deleted
 * object's is never current. Without index_etags, the same answers. */
static void check_current(uint32_t cal, unsigned n, const uint32_t *old_etags, const char *when)
{
    unsigned i;
    for (i = 0; i < n; i++) {
        char name[16], other[16];
        struct store_object_info info;
        uint32_t got;
        int rc;
        snprintf(name, sizeof(name), "obj%u", i);
        snprintf(other, sizeof(other), "obj%u", (i + 1) % n);
        rc = store_get_object(&st, cal, name, strlen(name), 0, NULL, 0, &got, &info);
        if (rc == STORE_ERR_NOT_FOUND) {
            CHECKF(store_object_is_current(&st, cal, name, strlen(name), old_etags[i]) == 0,
                   "%s: deleted %s current", when, name);
            continue;
        }
        CHECK(rc == STORE_OK);
        CHECKF(store_object_is_current(&st, cal, name, strlen(name), info.etag) == 1,
               "%s: %s not current with its ETag", when, name);
        CHECKF(store_object_is_current(&st, cal, other, strlen(other), info.etag) == 0,
               "%s: %s current with %s's ETag", when, other, name);
        if (old_etags[i] != info.etag)
            CHECKF(store_object_is_current(&st, cal, name, strlen(name), old_etags[i]) == 0,
                   "%s: %s current with an old ETag", when, name);
    }
}

static void test_current_etags(void)
{
    static uint32_t etags[32];
    STORE_MEMORY_DEFINE(small, 32, 4, 2);
    struct store_config cfg = {4 * KIB, 100};
    uint32_t cal, other, old[24], e, reclaimed;
    unsigned i, round, pass;
    char name[16], body[64];

    for (pass = 0; pass < 2; pass++) {
        small.index_etags = pass == 0 ? etags : NULL;
        cur_cfg = &cfg;
        cur_mem = &small;
        CHECK(fresh_flash(&ff, "current.flash", 64 * KIB, 4 * KIB) == FLASH_OK);
        CHECK(store_mount(&st, &ff.flash, &cfg, &small, NULL) == STORE_OK);
        CHECK(store_coll_create(&st, "alice", "/c/", &cal) == STORE_OK);
        CHECK(store_coll_create(&st, "alice", "/d/", &other) == STORE_OK);
        for (i = 0; i < 24; i++) {
            snprintf(name, sizeof(name), "obj%u", i);
            CHECK(store_put_object(&st, cal, name, strlen(name), "v0", 2, NULL, 0, &old[i]) == STORE_OK);
        }
        check_current(cal, 24, old, "after puts");
        /* deletes move other slots back; overwrites and the log's wrap compact it */
        for (round = 0; round < 30; round++) {
            i = (round * 7) % 24;
            snprintf(name, sizeof(name), "obj%u", i);
            if (round % 3 == 0) {
                int rc = store_delete_object(&st, cal, name, strlen(name), NULL);
                CHECK(rc == STORE_OK || rc == STORE_ERR_NOT_FOUND);
            } else {
                snprintf(body, sizeof(body), "round %u", round);
                CHECK(store_put_object(&st, cal, name, strlen(name), body, (uint32_t)strlen(body), NULL, 0, &e) ==
                      STORE_OK);
            }
            check_current(cal, 24, old, "while rewriting");
        }
        CHECK(store_compact(&st, 0, &reclaimed) == STORE_OK);
        check_current(cal, 24, old, "after compaction");
        /* COPY into the other collection, then MOVE back over a live object */
        CHECK(store_copy_object(&st, cal, "obj1", 4, other, "obj1", 4, 0, &e) == STORE_OK);
        CHECK(store_object_is_current(&st, other, "obj1", 4, e) == 1);
        CHECK(store_object_is_current(&st, cal, "obj1", 4, e) == 0);
        CHECK(store_copy_object(&st, other, "obj1", 4, cal, "obj2", 4, 1, &e) == STORE_OK);
        CHECK(store_object_is_current(&st, cal, "obj2", 4, e) == 1);
        CHECK(store_object_is_current(&st, other, "obj1", 4, e) == 0);
        check_current(cal, 24, old, "after COPY and MOVE");
        check_remount_same("with ETags in the index");
        check_current(cal, 24, old, "after a remount");
        flash_file_close(&ff);
    }
    cur_mem = &mem;
    cur_cfg = &default_cfg;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        scratch_dir = argv[1];
    test_crc32();
    test_flash_model();
    test_basic();
    test_props_users();
    test_preconditions();
    test_sync();
    test_limits();
    test_streaming();
    test_compaction();
    test_members_and_tags();
    test_bad_geometry();
    test_check_finds_damage();
    test_copy_move();
    test_move_power_cut();
    test_dead_props();
    test_dead_props_share_the_record();
    test_current_etags();
    return check_summary();
}
