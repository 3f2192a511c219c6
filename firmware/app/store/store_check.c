/*
 * The consistency check: everything the RAM state relies on, read back from
 * the flash without writing (docs/store.md, "Consistency check").
 */
#include "store/store_internal.h"

#include <string.h>

static void check_fail(struct store_check *r, const char *what, uint32_t addr)
{
    if (!r->problems++) {
        r->first_problem = what;
        r->first_problem_addr = addr;
    }
}

/* Everything the RAM state claims must be on the flash, and nothing may be
 * written where the next record will go. Reads only: safe at any time. */
static int check(struct store *s, struct store_check *r, int with_crc)
{
    struct bhdr bh;
    struct rhdr h;
    uint32_t b, n, i, j, id, sync, len, live = 0, used = 0, end_room, programmed, prev_seq = 0;
    uint32_t listed = 0;
    int rc, found;

    memset(r, 0, sizeof(*r));
    if (s->failed || s->put_active)
        return STORE_ERR_BUSY;
    /* 1. the log: live blocks with consecutive sequence numbers */
    for (n = 0, b = s->tail; n < s->nused; n++, b = ring_next(s, b)) {
        if ((rc = store_read_bhdr(s, b, &bh)) != STORE_OK)
            return rc;
        r->blocks++;
        r->sealed += bh.sealed != 0;
        if (!bh.live)
            check_fail(r, "log block header not live or bad CRC", b * s->block_size);
        else if (n && bh.seq != prev_seq + 1)
            check_fail(r, "log block sequence not consecutive", b * s->block_size);
        else if (bh.seq >= s->next_block_seq)
            check_fail(r, "log block sequence beyond the next one", b * s->block_size);
        prev_seq = bh.seq;
    }
    /* 2. where the next record goes is blank to the end of its block */
    if (store_in_log(s, blk_of(s, s->write_addr))) {
        if (blk_of(s, s->write_addr) != head_blk(s))
            check_fail(r, "write position outside the head block", s->write_addr);
        end_room = blk_end(s, blk_of(s, s->write_addr)) - s->write_addr;
        if ((rc = store_is_blank(s, s->write_addr, end_room, &programmed)) < 0)
            return rc;
        if (!rc)
            check_fail(r, "programmed bytes after the write position", s->write_addr);
    } else if (s->nused && blk_of(s, s->write_addr) != ring_next(s, head_blk(s))) {
        check_fail(r, "write position neither in the head nor after it", s->write_addr);
    }
    /* 3. every object in the index: a valid record of its collection, found by its name */
    for (i = 0; i < s->mem.index_slots; i++) {
        struct store_index_slot *e = &s->mem.index[i];
        if (e->state == SLOT_EMPTY)
            continue;
        used++;
        if (e->coll >= s->mem.coll_slots || !s->mem.colls[e->coll].used) {
            check_fail(r, "object of an unused collection slot", e->addr);
            continue;
        }
        if (!store_in_log(s, blk_of(s, e->addr))) {
            check_fail(r, "object record outside the log", e->addr);
            continue;
        }
        if ((rc = store_rec_check_crc(s, e->addr, &h, with_crc)) < 0)
            return rc;
        r->records++;
        if (rc != REC_VALID || (e->state == SLOT_LIVE ? !rec_is_put(h.type) : !rec_is_del(h.type))) {
            check_fail(r, "object record invalid or of the wrong type", e->addr);
            continue;
        }
        if (h.seq >= s->next_rec_seq)
            check_fail(r, "record sequence beyond the next one", e->addr);
        if ((rc = store_read_obj_prefix(s, e->addr, &id, &sync, &len)) != STORE_OK)
            return rc;
        if (id != s->mem.colls[e->coll].id || sync != e->sync_seq ||
            sync > s->mem.colls[e->coll].sync_seq || fnv1a(s->name_buf, len) != e->name_hash) {
            check_fail(r, "object record disagrees with its index slot", e->addr);
            continue;
        }
        memcpy(s->scratch, s->name_buf, len);
        if ((rc = store_idx_lookup(s, e->coll, s->scratch, len, e->name_hash, &found)) != STORE_OK)
            return rc;
        if (found != (int)i)
            check_fail(r, "object not found by its name (probe chain or duplicate)", e->addr);
        live += RHDR + h.len;
        if (e->state == SLOT_LIVE)
            r->objects++;
        else
            r->tombstones++;
    }
    if (used != s->index_used)
        check_fail(r, "index count differs from the slots in use", 0);
    /* 4. collections: their record, floor and object count */
    for (i = 0; i < s->mem.coll_slots; i++) {
        struct store_coll_slot *c = &s->mem.colls[i];
        if (!c->used)
            continue;
        r->collections++;
        if ((rc = store_rec_check_crc(s, c->rec_addr, &h, with_crc)) < 0)
            return rc;
        r->records++;
        if (!store_in_log(s, blk_of(s, c->rec_addr)) || rc != REC_VALID || h.type != REC_COLL ||
            store_lread(s, store_adv(s, c->rec_addr, RHDR), s->scratch, 4) || get32(s->scratch) != c->id) {
            check_fail(r, "collection record invalid", c->rec_addr);
            continue;
        }
        live += RHDR + h.len;
        if (c->floor_addr != FIRST_NONE) {
            if ((rc = store_rec_check_crc(s, c->floor_addr, &h, with_crc)) < 0)
                return rc;
            r->records++;
            if (rc != REC_VALID || h.type != REC_FLOOR || h.len != 8 ||
                store_lread(s, store_adv(s, c->floor_addr, RHDR), s->scratch, 8) ||
                get32(s->scratch) != c->id || get32(s->scratch + 4) != c->floor)
                check_fail(r, "history floor record invalid", c->floor_addr);
            live += FLOOR_RECORD;
        }
        /* its member list: its own slots, in hash order, each once */
        for (j = c->head, n = 0, len = 0; j != LINK_NONE && len <= s->mem.index_slots;
             j = s->mem.index[j].next, len++) {
            const struct store_index_slot *e = &s->mem.index[j];
            if (j >= s->mem.index_slots || e->state == SLOT_EMPTY || e->coll != i) {
                check_fail(r, "member list holds a slot of another collection", c->rec_addr);
                break;
            }
            if (e->next != LINK_NONE && e->next < s->mem.index_slots &&
                s->mem.index[e->next].name_hash < e->name_hash)
                check_fail(r, "member list out of hash order", c->rec_addr);
            n += e->state == SLOT_LIVE;
        }
        listed += len;
        if (n != c->objects)
            check_fail(r, "collection object count wrong", c->rec_addr);
        if (c->sync_seq < c->floor)
            check_fail(r, "collection sync sequence below its history floor", c->rec_addr);
    }
    if (listed != used)
        check_fail(r, "member lists do not hold every index slot once", 0);
    /* 5. users */
    for (i = 0; i < s->mem.user_slots; i++) {
        if (!s->mem.users[i].used)
            continue;
        r->users++;
        if ((rc = store_rec_check_crc(s, s->mem.users[i].addr, &h, with_crc)) < 0)
            return rc;
        r->records++;
        if (rc != REC_VALID || h.type != REC_USER) {
            check_fail(r, "user record invalid", s->mem.users[i].addr);
            continue;
        }
        live += RHDR + h.len;
    }
    if (live != s->live_bytes)
        check_fail(r, "live byte count differs from the live records", live);
    return s->failed ? STORE_ERR_IO : STORE_OK;
}

int store_check(struct store *s, struct store_check *r)
{
    return check(s, r, 1);
}

int store_check_quick(struct store *s, struct store_check *r)
{
    return check(s, r, 0);
}
