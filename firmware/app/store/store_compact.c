/*
 * Space and compaction: live-byte accounting, FIFO compaction of the tail
 * block (live records copied byte for byte to the head, tombstones dropped
 * behind a raised history floor), making room for a write, and the public
 * store_compact / store_space.
 */
#include "store/store_internal.h"

#include "util/crc32.h"

void store_supersede(struct store *s, uint32_t old_addr)
{
    uint32_t len;
    if (store_rec_len_at(s, old_addr, &len) == STORE_OK)
        s->live_bytes -= len;
}

/* The slot's history floor as a FLOOR record; compact_step syncs it with
 * the copies. */
static int write_floor(struct store *s, uint32_t slot)
{
    struct store_coll_slot *c = &s->mem.colls[slot];
    uint8_t p[8];
    int rc;
    put32(p, c->id);
    put32(p + 4, c->floor);
    store_wr_begin(s, REC_FLOOR, 8);
    if ((rc = store_wr_data(s, p, 8)) || (rc = store_wr_commit(s, 0)))
        return rc;
    if (c->floor_addr != FIRST_NONE)
        store_supersede(s, c->floor_addr);
    c->floor_addr = s->wr_start;
    s->live_bytes += FLOOR_RECORD;
    return STORE_OK;
}

/* Copy a valid record to the head, byte for byte (same seq, same CRC) but
 * for a MOVE's put, which is copied as a PUT (PMPUT as PPUT): its MDEL does
 * not follow the copy (store_internal.h). Returns its new address. */
static int copy_record(struct store *s, uint32_t a, const struct rhdr *h, uint32_t *to)
{
    uint8_t buf[IO_CHUNK], raw[RHDR];
    uint32_t done, src = store_adv(s, a, RHDR), dst, crc;
    int rc;
    if (store_blocks_needed(s, RHDR + h->len) > free_blocks(s))
        return STORE_ERR_NO_SPACE;
    store_make_rhdr(raw, rec_is_move_put(h->type) ? rec_put_type(0, rec_has_props(h->type)) : h->type,
                    h->len, h->seq);
    crc = crc32_update(0, raw, 12);
    s->wr_start = s->write_addr;
    s->wr_end = store_adv(s, s->wr_start, RHDR + h->len);
    dst = store_adv(s, s->wr_start, RHDR);
    for (done = 0; done < h->len;) {
        uint32_t n = h->len - done < IO_CHUNK ? h->len - done : IO_CHUNK;
        if ((rc = store_lread(s, src, buf, n)) || (rc = store_prog(s, dst, buf, n)))
            return rc;
        crc = crc32_update(crc, buf, n);
        src = store_adv(s, src, n);
        dst = store_adv(s, dst, n);
        done += n;
    }
    put32(raw + 12, crc);
    if ((rc = store_prog(s, s->wr_start, raw, RHDR)) != STORE_OK)
        return rc;
    *to = s->wr_start;
    s->write_addr = s->wr_end;
    return STORE_OK;
}

/* Decide whether the record at a (in the tail) is live; copy or drop it. */
static int compact_record(struct store *s, uint32_t a, const struct rhdr *h)
{
    uint8_t p[8];
    uint32_t id, sync, len, to, i;
    int slot, e, rc;

    switch (h->type) {
    case REC_PUT:
    case REC_PPUT:
    case REC_DEL:
    case REC_MPUT:  /* not live if its MOVE was cut: no slot holds it */
    case REC_PMPUT:
    case REC_MDEL:
        if ((rc = store_read_obj_prefix(s, a, &id, &sync, &len)) != STORE_OK)
            return rc;
        if ((slot = store_coll_slot_by_id(s, id)) < 0)
            return STORE_OK;
        e = store_idx_find_addr(s, (uint32_t)slot, fnv1a(s->name_buf, len), a);
        if (e < 0)
            return STORE_OK;
        if (rec_is_del(h->type)) {
            /* RFC 6578 3.2: history before this change is forgotten */
            struct store_coll_slot *c = &s->mem.colls[slot];
            if (c->floor < s->mem.index[e].sync_seq)
                c->floor = s->mem.index[e].sync_seq;
            c->floor_pending = 1;
            s->live_bytes -= RHDR + h->len;
            store_idx_remove(s, (uint32_t)e);
            return STORE_OK;
        }
        if ((rc = copy_record(s, a, h, &to)) != STORE_OK)
            return rc;
        s->mem.index[e].addr = to;
        return STORE_OK;
    case REC_COLL:
    case REC_FLOOR:
        if ((rc = store_lread(s, store_adv(s, a, RHDR), p, 4)) != STORE_OK)
            return rc;
        if ((slot = store_coll_slot_by_id(s, get32(p))) < 0)
            return STORE_OK;
        if (h->type == REC_COLL && s->mem.colls[slot].rec_addr == a) {
            if ((rc = copy_record(s, a, h, &to)) != STORE_OK)
                return rc;
            s->mem.colls[slot].rec_addr = to;
        } else if (h->type == REC_FLOOR && s->mem.colls[slot].floor_addr == a) {
            if ((rc = copy_record(s, a, h, &to)) != STORE_OK)
                return rc;
            s->mem.colls[slot].floor_addr = to;
        }
        return STORE_OK;
    case REC_USER:
        for (i = 0; i < s->mem.user_slots; i++) {
            if (s->mem.users[i].used && s->mem.users[i].addr == a) {
                if ((rc = copy_record(s, a, h, &to)) != STORE_OK)
                    return rc;
                s->mem.users[i].addr = to;
            }
        }
        return STORE_OK;
    default:  /* PAD, COLL_DEL: nothing older than the tail is left to cancel */
        return STORE_OK;
    }
}

/* Reclaim the tail block. Needs two blocks in use, so the head block (whose
 * rec_seq_base keeps sequence numbers monotonic) always survives. */
static int compact_step(struct store *s)
{
    static const uint8_t obsolete[4] = {0, 0, 0, 0};
    uint32_t t = s->tail, pos, i;
    struct bhdr bh;
    struct rhdr h;
    int rc;

    if (s->nused < 2)
        return STORE_ERR_NO_SPACE;
    s->compactions++;
    if ((rc = store_read_bhdr(s, t, &bh)) != STORE_OK)
        return rc;
    if (bh.first != FIRST_NONE) {
        pos = data_start(s, t) + bh.first;
        while (blk_of(s, pos) == t) {
            rc = store_rec_check_crc(s, pos, &h, 1);
            if (rc < 0)
                return rc;
            if (rc != REC_VALID)
                break;
            if ((rc = compact_record(s, pos, &h)) != STORE_OK)
                return rc;
            pos = store_adv(s, pos, RHDR + h.len);
        }
    }
    for (i = 0; i < s->mem.coll_slots; i++) {
        struct store_coll_slot *c = &s->mem.colls[i];
        if (!c->used || !c->floor_pending)
            continue;
        if ((rc = write_floor(s, i)) || (rc = store_idx_drop(s, i, 1, c->floor)))
            return rc;
        c->floor_pending = 0;
    }
    /* copies durable, then the tail stops counting, then it is erased */
    if (flash_sync(s->flash))
        return io_fail(s);
    if ((rc = store_seal_behind(s)) != STORE_OK)
        return rc;
    if (flash_program(s->flash, t * s->block_size + BHDR_STATE, obsolete, 4) ||
        flash_sync(s->flash) || flash_erase(s->flash, t))
        return io_fail(s);
    s->tail = ring_next(s, t);
    s->nused--;
    if (s->seal_next == t)
        s->seal_next = s->tail;
    return STORE_OK;
}

/* Close the head block so that all of it can be compacted: the next
 * records go to a fresh block, which keeps the sequence numbers going. */
static int seal_head(struct store *s)
{
    uint32_t b = ring_next(s, head_blk(s));
    if (free_blocks(s) <= 1)
        return STORE_ERR_NO_SPACE;
    s->write_addr = s->wr_start = s->wr_end = data_start(s, b);
    return store_open_block(s, b);
}

/* Make room for `bytes` at the head (user writes keep the reserve free). */
int store_ensure_space(struct store *s, uint32_t bytes)
{
    uint32_t steps = 0;
    uint32_t usable = (s->nblocks - s->reserve_blocks - 1) * s->data_size;
    if (bytes > usable || s->live_bytes > usable - bytes)
        return STORE_ERR_NO_SPACE;
    while (free_blocks(s) < store_blocks_needed(s, bytes) + s->reserve_blocks) {
        int rc;
        if (steps++ > s->nblocks)
            return STORE_ERR_NO_SPACE;
        if ((rc = compact_step(s)) != STORE_OK)
            return rc;
    }
    return STORE_OK;
}

/* The index is full: compact until tombstones drop out of it (compaction
 * forgets tombstones of the tail block and raises the history floors). The
 * records stay consistent with the index, so a replay never needs more. */
int store_evict_tombstones(struct store *s)
{
    uint32_t i, steps = 0, limit = s->nused + 1;
    int rc;
    for (i = 0; i < s->mem.index_slots && s->mem.index[i].state != SLOT_TOMB; i++)
        ;
    if (i == s->mem.index_slots)
        return STORE_ERR_INDEX_FULL;
    while (s->index_used >= index_limit(s)) {
        if (steps++ > limit || free_blocks(s) < s->reserve_blocks)
            return STORE_ERR_INDEX_FULL;
        if (s->nused < 2 && (rc = seal_head(s)) != STORE_OK)
            return rc == STORE_ERR_NO_SPACE ? STORE_ERR_INDEX_FULL : rc;
        if ((rc = compact_step(s)) != STORE_OK)
            return rc;
    }
    return STORE_OK;
}

int store_compact(struct store *s, uint32_t max_blocks, uint32_t *reclaimed)
{
    uint32_t done = 0, before;
    int rc = writable(s);
    if (reclaimed)
        *reclaimed = 0;
    if (rc)
        return rc;
    if (!max_blocks)
        max_blocks = s->nused;
    if (s->nused == 1 && s->write_addr != data_start(s, s->tail) &&
        (rc = seal_head(s)) != STORE_OK)
        return rc;
    while (done < max_blocks && s->nused >= 2) {
        before = s->nused;
        if ((rc = compact_step(s)) != STORE_OK)
            return rc;
        done++;
        if (reclaimed && s->nused < before)
            *reclaimed += before - s->nused;
    }
    return STORE_OK;
}

void store_space(const struct store *s, struct store_space *sp)
{
    uint32_t head_room = 0;
    uint32_t b = blk_of(s, s->write_addr);
    if (store_in_log(s, b))
        head_room = blk_end(s, b) - s->write_addr;
    sp->total = s->nblocks * s->data_size;
    sp->used = s->nused * s->data_size - head_room;
    sp->live = s->live_bytes;
    sp->reserve = s->reserve_blocks * s->data_size;
    sp->free = free_blocks(s) > s->reserve_blocks
                   ? (free_blocks(s) - s->reserve_blocks) * s->data_size + head_room : head_room;
    sp->index_used = s->index_used;
    sp->index_max = index_limit(s);
}
