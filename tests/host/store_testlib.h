/* Shared by test_store.c and torture_store.c: a flash file in a scratch
 * directory and an order-independent digest of everything a store holds, to
 * compare a store before and after a remount. */
#ifndef LITEDAV_STORE_TESTLIB_H
#define LITEDAV_STORE_TESTLIB_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/crc32.h"
#include "flash_file.h"
#include "store/store.h"

static const char *scratch_dir = ".";

static void flash_path(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "%s/%s", scratch_dir, name);
}

/* Open a fresh (erased) flash file for a test. */
static int fresh_flash(struct flash_file *ff, const char *name, uint32_t size, uint32_t block)
{
    char path[512];
    int rc;
    flash_path(path, sizeof(path), name);
    remove(path);
    rc = flash_file_open(ff, path, size, block, 256);
    if (rc == FLASH_OK)
        ff->durable = 0;  /* power cuts are simulated in-process; fsync adds nothing */
    return rc;
}

struct digest {
    uint64_t sum;       /* order-independent: sum of per-item hashes */
    uint32_t items;
};

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

static void digest_add(struct digest *d, uint32_t kind, const void *a, size_t alen, uint32_t x,
                       uint32_t y, uint32_t z)
{
    uint64_t h = crc32_update(kind, a, alen);
    h = mix64(h ^ ((uint64_t)x << 32) ^ y);
    h = mix64(h ^ ((uint64_t)z << 17) ^ kind);
    d->sum += h;
    d->items++;
}

struct digest_ctx {
    struct store *s;
    struct digest *d;
    uint32_t coll;
    int failed;
};

static int digest_entry(void *ctx, const struct store_entry *e)
{
    struct digest_ctx *c = ctx;
    digest_add(c->d, e->deleted ? 3 : 2, e->name, e->name_len, e->etag, e->size, e->sync_seq);
    digest_add(c->d, 4, &c->coll, 4, e->etag, 0, 0);
    return 0;
}

/* body CRCs need store calls, which the enumeration callback must not make:
 * gather names first */
struct name_list {
    char names[64][STORE_NAME_MAX + 1];
    size_t lens[64];
    unsigned n, overflow;
};

static int collect_name(void *ctx, const struct store_entry *e)
{
    struct name_list *l = ctx;
    if (l->n == 64) {
        l->overflow++;
        return 0;
    }
    memcpy(l->names[l->n], e->name, e->name_len);
    l->lens[l->n++] = e->name_len;
    return 0;
}

static int digest_coll(void *ctx, const struct store_collection *c)
{
    struct digest_ctx *dc = ctx;
    static struct name_list names;
    static uint8_t body[4096];
    static const enum store_prop props[] = {STORE_PROP_DISPLAYNAME, STORE_PROP_DESCRIPTION,
                                            STORE_PROP_COLOR, STORE_PROP_TIMEZONE};
    uint8_t val[STORE_COLL_RECORD_MAX];
    size_t vlen;
    unsigned i;
    uint32_t id = c->id;

    digest_add(dc->d, 1, c->path, c->path_len, c->id, c->sync_seq, c->history_floor);
    digest_add(dc->d, 5, c->owner, c->owner_len, c->objects, 0, 0);
    for (i = 0; i < sizeof(props) / sizeof(props[0]); i++) {
        if (store_coll_get_prop(dc->s, id, props[i], val, sizeof(val), &vlen) == STORE_OK)
            digest_add(dc->d, 6, val, vlen, id, props[i], 0);
    }
    dc->coll = id;
    if (store_changes_since(dc->s, id, c->history_floor ? c->history_floor : 0, digest_entry, dc))
        dc->failed = 1;
    names.n = names.overflow = 0;
    if (store_list(dc->s, id, collect_name, &names))
        dc->failed = 1;
    for (i = 0; i < names.n; i++) {
        uint32_t off = 0, got, crc = 0;
        struct store_object_info info;
        do {
            if (store_get_object(dc->s, id, names.names[i], names.lens[i], off, body, sizeof(body),
                                 &got, &info) != STORE_OK) {
                dc->failed = 1;
                break;
            }
            crc = crc32_update(crc, body, got);
            off += got;
        } while (got);
        digest_add(dc->d, 7, names.names[i], names.lens[i], crc, off, id);
    }
    return 0;
}

/* Everything visible through the API, plus live bytes and index use. */
static int store_digest(struct store *s, struct digest *d, const char *const *users, unsigned nusers)
{
    struct digest_ctx dc = {s, d, 0, 0};
    struct store_space sp;
    unsigned i;
    memset(d, 0, sizeof(*d));
    if (store_coll_list(s, digest_coll, &dc) != STORE_OK)
        return -1;
    for (i = 0; i < nusers; i++) {
        uint8_t secret[STORE_SECRET_MAX];
        size_t len;
        if (store_user_get(s, users[i], secret, sizeof(secret), &len) == STORE_OK)
            digest_add(d, 8, secret, len, i, 0, 0);
    }
    store_space(s, &sp);
    digest_add(d, 9, "", 0, sp.live, sp.index_used, 0);
    return dc.failed ? -1 : 0;
}

#endif
