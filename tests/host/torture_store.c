/* Power-cut torture test of the flash store against a model.
 *
 *   torture_store scratch-dir [seed [cycles]]      (defaults: 12345, 300)
 *
 * One cycle: arm a power cut after a random number of programmed bytes
 * (from a few bytes to a few hundred KiB, so cuts land inside record
 * headers, bodies, block openings, compaction copies, obsolete marks and
 * erases), run random operations (puts of 0 B to 6 KiB spanning blocks,
 * conditional puts, deletes, streamed puts with aborts, COPY and MOVE of
 * objects, properties (a collection's displayname alone, or with its dead
 * properties in one write; an object's dead properties), users, collection
 * create/delete, explicit compaction) until the power goes,
 * then remount and check against the model:
 *   - every acknowledged operation is there, byte for byte (bodies, ETags,
 *     properties, secrets, collection ids);
 *   - the operation cut short is atomic: entirely old or entirely new (a
 *     MOVE across collections too: the object at one of its two names; a
 *     collection's displayname and dead properties written together);
 *   - sync: changes_since(t) lists exactly the members changed after t, or
 *     refuses t when it is older than the collection's history floor;
 *   - replay is deterministic (a second mount gives the same digest) and
 *     the store keeps working.
 * Prints the seed, the number of power cuts survived (and how many hit an
 * operation that was compacting), then "N passed, M failed". */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "store_testlib.h"

#define KIB 1024u
#define NCOLL 3
#define NNAMES 16
#define NUSERS 2
#define MAX_BODY (6 * KIB)

STORE_MEMORY_DEFINE(mem, 160, 4, NUSERS);
static const struct store_config cfg = {MAX_BODY, 12};

static struct flash_file ff;
static struct store st;

#include "test_rng.h"

/* ---- the model ---------------------------------------------------------- */

struct obj_model {
    int present;
    uint32_t body_seed, body_len, etag;
    uint32_t props_seed;     /* its dead properties: make_props(props_seed); 0: none */
    uint32_t changed_at;     /* collection sync seq of the last change (0: never) */
};

struct coll_model {
    int exists;
    uint32_t id;
    struct obj_model obj[NNAMES];
    uint32_t sync, floor;
    char displayname[40];    /* "" = unset */
    uint32_t props_seed;     /* its dead properties, as an object's */
    uint32_t tokens[8];      /* sync tokens handed out, for changes_since */
    unsigned ntokens;
};

struct model {
    struct coll_model coll[NCOLL];
    uint32_t generation[NCOLL];  /* path suffix: a re-created collection gets a new path */
    uint8_t secret[NUSERS][16];
    int has_user[NUSERS];
};

static struct model model, pending_new;
static int pending;              /* an operation was cut: pending_new is its outcome */
/* the operation is a MOVE of object pm_n of collection pm_c to pm_n2 of pm_c2: a cut one is
 * at its source or its destination, whatever each collection looks like alone */
static int pending_move;
static unsigned pm_c, pm_n, pm_c2, pm_n2;
static const char *const user_names[NUSERS] = {"alice", "bob"};
static uint8_t body_buf[MAX_BODY], read_buf[MAX_BODY];
static unsigned long ops_done, cuts, cuts_compacting, no_space, index_full, streamed_aborts, moves, copies;
static unsigned long prop_writes;  /* dead property lists written */

static void name_of(unsigned i, char *buf) { sprintf(buf, "event-%02u.ics", i); }

static void path_of(unsigned c, uint32_t generation, char *buf)
{
    sprintf(buf, "/calendars/%s/cal%u-%u/", user_names[c % NUSERS], c, (unsigned)generation);
}

static void make_body(uint32_t seed, uint32_t len, uint8_t *out)
{
    uint32_t i, x = seed * 2654435761u + 1;
    for (i = 0; i < len; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        out[i] = (uint8_t)x;
    }
}

/* A property list (store.h) of 1 to 4 dead properties of up to 40 bytes
 * each from seed, or none for seed 0: at most 172 bytes, so that a body of
 * MAX_BODY and its properties always fit an object record. */
static size_t make_props(uint32_t seed, uint8_t *out)
{
    uint32_t x = seed, i, j, n = seed ? 1 + seed % 4 : 0, vlen;
    size_t len = 0;
    for (i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        vlen = (x >> 16) % 41;
        out[len++] = STORE_PROP_DEAD;
        out[len++] = (uint8_t)vlen;
        out[len++] = 0;
        for (j = 0; j < vlen; j++)
            out[len++] = (uint8_t)(x >> (j % 24));
    }
    return len;
}

/* The dead properties of a property list, in their order. */
static size_t dead_part(const uint8_t *list, size_t len, uint8_t *out)
{
    size_t at = 0, n = 0, e;
    while (at + STORE_PROP_HEAD <= len) {
        e = STORE_PROP_HEAD + (list[at + 1] | (size_t)list[at + 2] << 8);
        if (list[at] == STORE_PROP_DEAD) {
            memcpy(out + n, list + at, e);
            n += e;
        }
        at += e;
    }
    return n;
}

static uint32_t random_len(void)
{
    unsigned r = rnd(100);
    if (r < 5)
        return 0;
    if (r < 65)
        return 1 + rnd(300);
    if (r < 93)
        return 300 + rnd(2000);
    return 2300 + rnd(MAX_BODY - 2300 + 1);
}

/* ---- operations: each updates `next` as it would be once acknowledged ---- */

static int refresh_sync(struct model *m, unsigned c)
{
    struct store_collection ci;
    int rc = store_coll_info(&st, m->coll[c].id, &ci);
    if (rc == STORE_OK) {
        m->coll[c].sync = ci.sync_seq;
        m->coll[c].floor = ci.history_floor;
        if (m->coll[c].ntokens < 8)
            m->coll[c].tokens[m->coll[c].ntokens++] = ci.sync_seq;
        else
            m->coll[c].tokens[rnd(8)] = ci.sync_seq;
    }
    return rc;
}

/* Run one random operation. Returns its store status; on success the model
 * is updated, on STORE_ERR_IO `pending_new` holds the model as it would be
 * had the operation completed. */
static int do_op(void)
{
    struct model next = model;
    unsigned c = rnd(NCOLL), n = rnd(NNAMES), r = rnd(100);
    uint32_t tag_out = 0;
    struct coll_model *cm = &next.coll[c];
    char name[32], path[80];
    int rc = STORE_OK;

    pending_move = 0;
    name_of(n, name);
    if (!cm->exists)  /* create it, or do something that needs no collection */
        r = chance(80) ? 101 : 87 + rnd(10);
    if (r >= 100) {                        /* collection create */
        uint32_t id;
        if (cm->exists)
            return STORE_OK;
        next.generation[c]++;
        path_of(c, next.generation[c], path);
        pending_new = next;  /* the id is unknown until acknowledged */
        rc = store_coll_create(&st, user_names[c % NUSERS], path, &id);
        if (rc == STORE_OK) {
            memset(cm, 0, sizeof(*cm));
            cm->exists = 1;
            cm->id = id;
            model = next;
        }
        return rc;
    }
    if (r < 45) {                          /* put, maybe conditional */
        struct obj_model *o = &cm->obj[n];
        uint32_t seed = (uint32_t)rng_next(), len = random_len(), etag, tag, *if_match = NULL;
        int inm = 0, expect = STORE_OK;
        unsigned k = rnd(10);
        if (k == 0) {
            inm = 1;
            if (o->present)
                expect = STORE_ERR_PRECONDITION;
        } else if (k == 1) {
            tag = o->present && chance(60) ? o->etag : o->etag + 7777;
            if_match = &tag;
            if (!o->present || tag != o->etag)
                expect = STORE_ERR_PRECONDITION;
        }
        if (expect == STORE_OK && !o->present) {
            unsigned i, count = 0;
            for (i = 0; i < NNAMES; i++)
                count += cm->obj[i].present;
            if (count >= cfg.max_objects_per_collection)
                expect = STORE_ERR_COLL_FULL;
        }
        make_body(seed, len, body_buf);
        pending_new = next;
        if (!o->present)
            pending_new.coll[c].obj[n].props_seed = 0;
        pending_new.coll[c].obj[n].present = 1;
        pending_new.coll[c].obj[n].body_seed = seed;
        pending_new.coll[c].obj[n].body_len = len;
        pending_new.coll[c].obj[n].etag = 0;  /* learnt after the remount */
        if (chance(25)) {                  /* streamed, sometimes abandoned */
            uint32_t done = 0;
            int abandon = chance(20);
            rc = store_put_begin(&st, cm->id, name, strlen(name), len, if_match, inm);
            while (rc == STORE_OK && done < len) {
                uint32_t piece = 1 + rnd(1500);
                if (piece > len - done)
                    piece = len - done;
                if (abandon && done + piece >= len / 2 + 1) {
                    rc = store_put_abort(&st);
                    streamed_aborts++;
                    if (rc == STORE_OK) {
                        CHECKF(expect == STORE_OK, "streamed put began despite expected %d", expect);
                        return STORE_OK;  /* nothing changed */
                    }
                    pending_new = next;   /* an abort never shows the new body */
                    return rc;
                }
                rc = store_put_write(&st, body_buf + done, piece);
                done += piece;
            }
            if (rc == STORE_OK && abandon) {
                rc = store_put_abort(&st);
                streamed_aborts++;
                if (rc == STORE_OK)
                    return STORE_OK;
                pending_new = next;
                return rc;
            }
            if (rc == STORE_OK)
                rc = store_put_commit(&st, &etag);
        } else {
            rc = store_put_object(&st, cm->id, name, strlen(name), body_buf, len, if_match, inm, &etag);
        }
        if (rc == STORE_ERR_NO_SPACE || rc == STORE_ERR_INDEX_FULL) {
            no_space += rc == STORE_ERR_NO_SPACE;
            index_full += rc == STORE_ERR_INDEX_FULL;
            return STORE_OK;
        }
        if (rc == STORE_ERR_IO)
            return rc;
        CHECKF(rc == expect, "put %s in coll %u: %d, expected %d", name, c, rc, expect);
        if (rc == STORE_OK) {
            next.coll[c].obj[n] = pending_new.coll[c].obj[n];
            next.coll[c].obj[n].etag = etag;
            model = next;
            refresh_sync(&model, c);
            model.coll[c].obj[n].changed_at = model.coll[c].sync;
        }
        return STORE_OK;
    }
    if (r < 65) {                          /* delete, maybe conditional */
        struct obj_model *o = &cm->obj[n];
        uint32_t tag = o->etag, *if_match = NULL;
        int expect = o->present ? STORE_OK : STORE_ERR_NOT_FOUND;
        if (chance(10)) {
            if (chance(50))
                tag += 99;
            if_match = &tag;
            if (o->present && tag != o->etag)
                expect = STORE_ERR_PRECONDITION;
        }
        pending_new = next;
        pending_new.coll[c].obj[n].present = 0;
        pending_new.coll[c].obj[n].props_seed = 0;
        rc = store_delete_object(&st, cm->id, name, strlen(name), if_match);
        if (rc == STORE_ERR_NO_SPACE) {
            no_space++;
            return STORE_OK;
        }
        if (rc == STORE_ERR_IO)
            return rc;
        CHECKF(rc == expect, "delete %s in coll %u: %d, expected %d", name, c, rc, expect);
        if (rc == STORE_OK) {
            model = pending_new;
            refresh_sync(&model, c);
            model.coll[c].obj[n].changed_at = model.coll[c].sync;
        }
        return STORE_OK;
    }
    if (r < 72) {                          /* COPY or MOVE to another name, maybe elsewhere */
        unsigned c2 = rnd(NCOLL), n2 = rnd(NNAMES), i, count = 0;
        int move = chance(60), expect = STORE_OK;
        char name2[32];
        const struct obj_model *o = &cm->obj[n];
        if (!next.coll[c2].exists || (c2 == c && n2 == n))
            return STORE_OK;
        name_of(n2, name2);
        for (i = 0; i < NNAMES; i++)
            count += next.coll[c2].obj[i].present;
        if (!o->present)
            expect = STORE_ERR_NOT_FOUND;
        else if (!next.coll[c2].obj[n2].present && !(move && c2 == c) &&
                 count >= cfg.max_objects_per_collection)
            expect = STORE_ERR_COLL_FULL;
        pending_new = next;
        pending_new.coll[c2].obj[n2] = *o;
        pending_new.coll[c2].obj[n2].etag = 0;  /* learnt after the remount */
        if (move) {
            pending_new.coll[c].obj[n].present = 0;
            pending_new.coll[c].obj[n].props_seed = 0;
        }
        pending_move = move && o->present;
        pm_c = c, pm_n = n, pm_c2 = c2, pm_n2 = n2;
        rc = store_copy_object(&st, cm->id, name, strlen(name), next.coll[c2].id, name2, strlen(name2),
                               move, &tag_out);
        if (rc == STORE_ERR_NO_SPACE || rc == STORE_ERR_INDEX_FULL) {
            no_space += rc == STORE_ERR_NO_SPACE;
            index_full += rc == STORE_ERR_INDEX_FULL;
            return STORE_OK;
        }
        if (rc == STORE_ERR_IO)
            return rc;
        CHECKF(rc == expect, "%s %u/%u to %u/%u: %d, expected %d", move ? "move" : "copy", c, n, c2, n2,
               rc, expect);
        if (rc == STORE_OK) {
            model = pending_new;
            model.coll[c2].obj[n2].etag = tag_out;
            refresh_sync(&model, c2);
            model.coll[c2].obj[n2].changed_at = model.coll[c2].sync;
            if (move) {
                refresh_sync(&model, c);
                model.coll[c].obj[n].changed_at = model.coll[c].sync;
            }
            moves += move;
            copies += !move;
        }
        return STORE_OK;
    }
    if (r < 76) {                          /* an object's dead properties (PROPPATCH) */
        struct obj_model *o = &cm->obj[n];
        uint8_t list[256];
        uint32_t pseed = chance(15) ? 0 : (uint32_t)rng_next() | 1;
        size_t len = make_props(pseed, list);
        pending_new = next;
        pending_new.coll[c].obj[n].props_seed = pseed;  /* the same body and ETag */
        rc = store_obj_set_props(&st, cm->id, name, strlen(name), list, len);
        if (rc == STORE_ERR_NO_SPACE) {
            no_space++;
            return STORE_OK;
        }
        if (rc == STORE_ERR_IO)
            return rc;
        CHECKF(rc == (o->present ? STORE_OK : STORE_ERR_NOT_FOUND), "object props %s coll %u: %d", name, c,
               rc);
        if (rc == STORE_OK) {
            model = pending_new;
            refresh_sync(&model, c);
            model.coll[c].obj[n].changed_at = model.coll[c].sync;
            prop_writes++;
        }
        return STORE_OK;
    }
    if (r < 80) {                          /* read back, no change */
        struct obj_model *o = &cm->obj[n];
        uint32_t got;
        struct store_object_info info;
        rc = store_get_object(&st, cm->id, name, strlen(name), 0, read_buf, sizeof(read_buf), &got, &info);
        if (rc == STORE_ERR_IO)
            return rc;
        if (o->present) {
            make_body(o->body_seed, o->body_len, body_buf);
            CHECKF(rc == STORE_OK && got == o->body_len && memcmp(read_buf, body_buf, got) == 0 &&
                   info.etag == o->etag, "get %s coll %u: rc %d got %u want %u", name, c, rc,
                   (unsigned)got, (unsigned)o->body_len);
        } else {
            CHECKF(rc == STORE_ERR_NOT_FOUND, "get of absent %s: %d", name, rc);
        }
        return STORE_OK;
    }
    if (r < 87) {                          /* property: displayname, or with dead ones in one write */
        char value[40];
        uint8_t list[256];
        size_t len = 0;
        sprintf(value, chance(20) ? "" : "Calendar %u", (unsigned)rnd(100000));
        pending_new = next;
        strcpy(pending_new.coll[c].displayname, value);
        if (chance(50)) {
            rc = store_coll_set_prop(&st, cm->id, STORE_PROP_DISPLAYNAME, value, strlen(value));
        } else {
            pending_new.coll[c].props_seed = chance(15) ? 0 : (uint32_t)rng_next() | 1;
            if (*value) {
                list[0] = STORE_PROP_DISPLAYNAME;
                list[1] = (uint8_t)strlen(value);
                list[2] = 0;
                memcpy(list + STORE_PROP_HEAD, value, strlen(value));
                len = STORE_PROP_HEAD + strlen(value);
            }
            len += make_props(pending_new.coll[c].props_seed, list + len);
            rc = store_coll_set_props(&st, cm->id, list, len);
            prop_writes += rc == STORE_OK;
        }
        if (rc == STORE_ERR_NO_SPACE) {
            no_space++;
            return STORE_OK;
        }
        if (rc == STORE_OK)
            model = pending_new;
        return rc;
    }
    if (r < 92) {                          /* user */
        unsigned u = rnd(NUSERS), i;
        pending_new = next;
        for (i = 0; i < 16; i++)
            pending_new.secret[u][i] = (uint8_t)rng_next();
        pending_new.has_user[u] = 1;
        rc = store_user_set(&st, user_names[u], pending_new.secret[u], 16);
        if (rc == STORE_ERR_NO_SPACE) {
            no_space++;
            return STORE_OK;
        }
        if (rc == STORE_OK)
            model = pending_new;
        return rc;
    }
    if (r < 97) {                          /* explicit compaction */
        uint32_t reclaimed;
        pending_new = next;
        rc = store_compact(&st, 1 + rnd(6), &reclaimed);
        if (rc == STORE_ERR_NO_SPACE)
            return STORE_OK;
        if (rc == STORE_OK) {
            unsigned k;
            for (k = 0; k < NCOLL; k++)
                if (model.coll[k].exists)
                    refresh_sync(&model, k);
        }
        return rc;
    }
    /* collection delete (rare) */
    pending_new = next;
    memset(&pending_new.coll[c], 0, sizeof(pending_new.coll[c]));
    rc = store_coll_delete(&st, cm->id);
    if (rc == STORE_ERR_NO_SPACE) {
        no_space++;
        return STORE_OK;
    }
    CHECKF(rc == STORE_OK || rc == STORE_ERR_IO, "collection delete: %d", rc);
    if (rc == STORE_OK)
        model = pending_new;
    return rc;
}

/* ---- checks after a remount --------------------------------------------- */

struct seen {
    int listed[NNAMES], deleted[NNAMES];
    unsigned extra;
};

static int note_entry(void *ctx, const struct store_entry *e)
{
    struct seen *sn = ctx;
    unsigned i;
    char name[32];
    for (i = 0; i < NNAMES; i++) {
        name_of(i, name);
        if (e->name_len == strlen(name) && memcmp(e->name, name, e->name_len) == 0) {
            sn->listed[i]++;
            sn->deleted[i] = e->deleted;
            return 0;
        }
    }
    sn->extra++;
    return 0;
}

/* Are the dead properties of a property list (store_obj_props or
 * store_coll_props: rc, list, len) those of seed? */
static int props_match(uint32_t seed, int rc, const uint8_t *list, size_t len)
{
    uint8_t want[256], got[STORE_PROPS_MAX];
    size_t wlen = make_props(seed, want), glen;
    if (rc != STORE_OK)
        return 0;
    glen = dead_part(list, len, got);
    return glen == wlen && memcmp(got, want, wlen) == 0;
}

/* Is object n of collection c as in m? */
static int object_matches(unsigned c, unsigned n, const struct obj_model *o, uint32_t id,
                          uint32_t *etag_out)
{
    char name[32];
    uint32_t got;
    struct store_object_info info;
    const uint8_t *list;
    size_t len;
    int rc;
    name_of(n, name);
    rc = store_get_object(&st, id, name, strlen(name), 0, read_buf, sizeof(read_buf), &got, &info);
    (void)c;
    if (!o->present)
        return rc == STORE_ERR_NOT_FOUND;
    if (rc != STORE_OK || got != o->body_len || info.size != o->body_len)
        return 0;
    make_body(o->body_seed, o->body_len, body_buf);
    if (memcmp(read_buf, body_buf, got) != 0)
        return 0;
    if (o->etag && info.etag != o->etag)
        return 0;
    rc = store_obj_props(&st, id, name, strlen(name), &list, &len);
    if (!props_match(o->props_seed, rc, list, len))
        return 0;
    if (etag_out)
        *etag_out = info.etag;
    return 1;
}

static void check_collection(unsigned c, struct coll_model *cm, const struct coll_model *alt)
{
    struct store_collection ci;
    struct seen sn;
    unsigned n, i;
    uint8_t val[64];
    size_t vlen, len;
    const uint8_t *list;
    int rc;

    CHECKF(store_coll_info(&st, cm->id, &ci) == STORE_OK, "collection %u (id %u) lost", c, (unsigned)cm->id);
    for (n = 0; n < NNAMES; n++) {
        uint32_t etag = 0;
        if (object_matches(c, n, &cm->obj[n], cm->id, &etag))
            continue;
        if (alt && object_matches(c, n, &alt->obj[n], cm->id, &etag)) {
            cm->obj[n] = alt->obj[n];  /* the cut operation made it */
            cm->obj[n].etag = etag;
            cm->obj[n].changed_at = ci.sync_seq;
            continue;
        }
        CHECKF(0, "collection %u object %u: neither acknowledged nor pending state", c, n);
    }
    /* the displayname and the dead properties: both as acknowledged, or both as the cut write
     * would have left them */
    rc = store_coll_get_prop(&st, cm->id, STORE_PROP_DISPLAYNAME, val, sizeof(val), &vlen);
    if (rc == STORE_ERR_NOT_FOUND)
        vlen = 0;
    rc = store_coll_props(&st, cm->id, &list, &len);
    if (!(vlen == strlen(cm->displayname) && memcmp(val, cm->displayname, vlen) == 0 &&
          props_match(cm->props_seed, rc, list, len))) {
        CHECKF(alt && vlen == strlen(alt->displayname) && memcmp(val, alt->displayname, vlen) == 0 &&
               props_match(alt->props_seed, rc, list, len), "collection %u displayname and dead properties", c);
        if (alt) {
            strcpy(cm->displayname, alt->displayname);
            cm->props_seed = alt->props_seed;
        }
    }
    CHECKF(ci.sync_seq >= cm->sync, "collection %u sync went back: %u < %u", c,
           (unsigned)ci.sync_seq, (unsigned)cm->sync);
    CHECKF(ci.history_floor >= cm->floor, "floor went back");
    cm->sync = ci.sync_seq;
    cm->floor = ci.history_floor;

    /* RFC 6578: changes since each token handed out */
    for (i = 0; i < cm->ntokens; i++) {
        uint32_t t = cm->tokens[i];
        memset(&sn, 0, sizeof(sn));
        rc = store_changes_since(&st, cm->id, t, note_entry, &sn);
        if (t && t < ci.history_floor) {
            CHECKF(rc == STORE_ERR_SYNC_TOKEN, "token %u below floor %u accepted", (unsigned)t,
                   (unsigned)ci.history_floor);
            continue;
        }
        CHECKF(rc == STORE_OK, "changes_since(%u): %d", (unsigned)t, rc);
        CHECK(sn.extra == 0);
        for (n = 0; n < NNAMES; n++) {
            const struct obj_model *o = &cm->obj[n];
            int expected = o->changed_at > t && (t != 0 || o->present);
            CHECKF(sn.listed[n] == expected, "coll %u token %u: object %u listed %d, expected %d (changed at %u)",
                   c, (unsigned)t, n, sn.listed[n], expected, (unsigned)o->changed_at);
            if (sn.listed[n])
                CHECKF(sn.deleted[n] == !o->present, "coll %u token %u: object %u deletion flag", c,
                       (unsigned)t, n);
        }
    }
    /* listing: exactly the present objects */
    memset(&sn, 0, sizeof(sn));
    CHECK(store_list(&st, cm->id, note_entry, &sn) == STORE_OK);
    for (n = 0; n < NNAMES; n++)
        CHECKF(sn.listed[n] == cm->obj[n].present, "coll %u list object %u", c, n);
}

static void check_all(int after_cut)
{
    unsigned c, u;
    char path[80];
    uint32_t id;
    const struct obj_model old_dst = model.coll[pm_c2].obj[pm_n2];
    for (c = 0; c < NCOLL; c++) {
        struct coll_model *cm = &model.coll[c];
        const struct coll_model *alt = after_cut && pending ? &pending_new.coll[c] : NULL;
        path_of(c, model.generation[c], path);
        if (!cm->exists) {
            /* absent, or created by the cut operation (under its new path) */
            CHECKF(store_coll_find(&st, path, strlen(path), &id) == STORE_ERR_NOT_FOUND,
                   "collection %u resurrected", c);
            if (alt && pending_new.generation[c] != model.generation[c]) {
                path_of(c, pending_new.generation[c], path);
                if (store_coll_find(&st, path, strlen(path), &id) == STORE_OK) {
                    memset(cm, 0, sizeof(*cm));
                    cm->exists = 1;
                    cm->id = id;
                    model.generation[c] = pending_new.generation[c];
                }
            }
            continue;
        }
        CHECKF(store_coll_find(&st, path, strlen(path), &id) == STORE_OK || (alt && !alt->exists),
               "collection %u path lost", c);
        if (alt && !alt->exists && store_coll_find(&st, path, strlen(path), &id) != STORE_OK) {
            memset(cm, 0, sizeof(*cm));  /* the cut delete made it */
            continue;
        }
        CHECKF(id == cm->id, "collection %u id changed", c);
        check_collection(c, cm, alt && alt->exists ? alt : NULL);
    }
    if (after_cut && pending && pending_move) {
        /* all or nothing across the two collections (unless the destination held that body) */
        const struct obj_model *nw = &pending_new.coll[pm_c2].obj[pm_n2], *d = &model.coll[pm_c2].obj[pm_n2];
        int src_gone = !model.coll[pm_c].obj[pm_n].present;
        int dst_new = d->present && d->body_seed == nw->body_seed && d->body_len == nw->body_len;
        CHECKF(src_gone == dst_new || (old_dst.present && old_dst.body_seed == nw->body_seed &&
                                       old_dst.body_len == nw->body_len),
               "cut move %u/%u to %u/%u: source gone %d, destination new %d", pm_c, pm_n, pm_c2, pm_n2,
               src_gone, dst_new);
    }
    for (u = 0; u < NUSERS; u++) {
        uint8_t secret[STORE_SECRET_MAX];
        size_t len;
        int rc = store_user_get(&st, user_names[u], secret, sizeof(secret), &len);
        int ok_old = model.has_user[u] ? rc == STORE_OK && len == 16 && !memcmp(secret, model.secret[u], 16)
                                       : rc == STORE_ERR_NOT_FOUND;
        int ok_new = after_cut && pending && pending_new.has_user[u] && rc == STORE_OK && len == 16 &&
                     !memcmp(secret, pending_new.secret[u], 16);
        CHECKF(ok_old || ok_new, "user %s", user_names[u]);
        if (ok_new && !ok_old) {
            model.has_user[u] = 1;
            memcpy(model.secret[u], pending_new.secret[u], 16);
        }
    }
}

static unsigned long checks_passed;   /* store_check runs without a problem */

static void remount(int after_cut)
{
    struct store_check sc;
    struct store_mount_stats ms;
    struct digest d1, d2;
    int rc = store_mount(&st, &ff.flash, &cfg, &mem, &ms);
    CHECKF(rc == STORE_OK, "mount: %s", store_strerror(rc));
    if (rc != STORE_OK)
        return;
    rc = store_check(&st, &sc);
    CHECKF(rc == STORE_OK && sc.problems == 0, "store check after mount: %s, %u problems (%s at 0x%x)",
           store_strerror(rc), (unsigned)sc.problems, sc.first_problem ? sc.first_problem : "-",
           (unsigned)sc.first_problem_addr);
    check_all(after_cut);
    rc = store_check(&st, &sc);
    CHECKF(rc == STORE_OK && sc.problems == 0, "store check after the model check: %u problems (%s)",
           (unsigned)sc.problems, sc.first_problem ? sc.first_problem : "-");
    checks_passed++;
    pending = 0;
    /* replay is deterministic */
    CHECK(store_digest(&st, &d1, user_names, NUSERS) == 0);
    CHECK(store_mount(&st, &ff.flash, &cfg, &mem, NULL) == STORE_OK);
    CHECK(store_digest(&st, &d2, user_names, NUSERS) == 0);
    CHECK(d1.sum == d2.sum && d1.items == d2.items);
}

int main(int argc, char **argv)
{
    uint64_t seed = 12345;
    unsigned long cycles = 300, cycle;
    int rc;

    if (argc < 2) {
        fprintf(stderr, "usage: torture_store scratch-dir [seed [cycles]]\n");
        return 2;
    }
    scratch_dir = argv[1];
    if (argc > 2)
        seed = strtoull(argv[2], NULL, 0);
    if (argc > 3)
        cycles = strtoul(argv[3], NULL, 0);
    printf("torture_store: seed %llu, %lu power-cut cycles\n", (unsigned long long)seed, cycles);
    rng_seed(seed);

    if (fresh_flash(&ff, "torture.flash", 256 * KIB, 4 * KIB) != FLASH_OK) {
        fprintf(stderr, "cannot create the flash file in %s\n", scratch_dir);
        return 2;
    }
    /* an erase takes about as long as programming its block: as likely a
     * place for the power to go */
    ff.erase_cost = 4 * KIB;
    CHECK(store_mount(&st, &ff.flash, &cfg, &mem, NULL) == STORE_OK);

    for (cycle = 0; cycle < cycles && !check_failed; cycle++) {
        /* budgets from a few bytes to ~256 KiB, log-uniform */
        int64_t budget = (int64_t)rnd(1u << (4 + rnd(15)));
        uint32_t compactions_before;
        unsigned k;
        flash_file_cut_after(&ff, budget, rng_next());
        for (k = 0; k < 2000; k++) {
            compactions_before = st.compactions;
            rc = do_op();
            ops_done++;
            if (rc == STORE_ERR_IO)
                break;
            CHECKF(rc == STORE_OK || rc == STORE_ERR_NOT_FOUND || rc == STORE_ERR_PRECONDITION ||
                   rc == STORE_ERR_COLL_FULL, "operation failed: %s", store_strerror(rc));
        }
        if (rc == STORE_ERR_IO) {
            CHECKF(ff.powered_off, "I/O error without a power cut");
            cuts++;
            cuts_compacting += st.compactions != compactions_before;
            pending = 1;
        }
        flash_file_power_on(&ff);
        remount(rc == STORE_ERR_IO);
    }
    printf("power cuts survived: %lu (%lu while compacting), operations: %lu, streamed aborts: %lu, "
           "flash-full: %lu, index-full: %lu, blocks erased: %llu\n",
           cuts, cuts_compacting, ops_done, streamed_aborts, no_space, index_full,
           (unsigned long long)ff.erases);
    printf("store checks passed: %lu, copies: %lu, moves: %lu, dead property writes: %lu\n", checks_passed,
           copies, moves, prop_writes);
    CHECK(prop_writes > 0);
    CHECK(cuts > 0);
    flash_file_close(&ff);
    return check_summary();
}
