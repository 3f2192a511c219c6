/*
 * Mount: find the log among the block headers, replay its records into the
 * RAM tables (collections and users, then history floors, then objects),
 * and decide where writing continues (docs/store.md, "Mount (replay)").
 */
#include "store/store_internal.h"

#include <string.h>

/* FLOOR records: applied before the objects, so that tombstones the floor
 * has already forgotten never take an index slot. */
static int replay_floor(struct store *s, uint32_t a, const struct rhdr *h)
{
    uint8_t p[8];
    int slot;
    if (h->type != REC_FLOOR)
        return STORE_OK;
    if (h->len != 8 || store_lread(s, store_adv(s, a, RHDR), p, 8))
        return s->failed ? STORE_ERR_IO : STORE_OK;
    if ((slot = store_coll_slot_by_id(s, get32(p))) < 0) {
        s->replay_floor_pass = 1;  /* its collection record comes later */
        return STORE_OK;
    }
    if (get32(p + 4) >= s->mem.colls[slot].floor) {
        s->mem.colls[slot].floor = get32(p + 4);
        s->mem.colls[slot].floor_addr = a;
    }
    return STORE_OK;
}

static int replay_pass1(struct store *s, uint32_t a, const struct rhdr *h)
{
    uint8_t p[1 + STORE_OWNER_MAX];
    uint32_t id, len, hash, i;
    struct coll_view v;
    int slot, rc;

    switch (h->type) {
    case REC_USER:
        if (h->len < 2 || store_lread(s, store_adv(s, a, RHDR), p, 1) || p[0] > STORE_OWNER_MAX ||
            (uint32_t)p[0] + 2 > h->len)
            return s->failed ? STORE_ERR_IO : STORE_OK;
        len = p[0];
        if ((rc = store_lread(s, store_adv(s, a, RHDR + 1), p + 1, len)) != STORE_OK)
            return rc;
        hash = fnv1a(p + 1, len);
        if ((rc = store_user_slot_by_name(s, p + 1, len, hash, &slot)) != STORE_OK)
            return rc;
        if (slot < 0) {
            for (i = 0; i < s->mem.user_slots && s->mem.users[i].used; i++)
                ;
            if (i == s->mem.user_slots)
                return STORE_ERR_TOO_MANY_USERS;
            slot = (int)i;
            s->mem.users[i].used = 1;
            s->mem.users[i].name_hash = hash;
            s->mem.users[i].rec_seq = h->seq;
        }
        if (h->seq >= s->mem.users[slot].rec_seq) {
            s->mem.users[slot].addr = a;
            s->mem.users[slot].rec_seq = h->seq;
        }
        return STORE_OK;
    case REC_COLL:
        if (h->len > STORE_COLL_RECORD_MAX)
            return STORE_OK;
        if ((rc = store_lread(s, store_adv(s, a, RHDR), s->scratch, h->len)) != STORE_OK)
            return rc;
        if (!store_coll_parse(s->scratch, h->len, &v))
            return STORE_OK;
        id = get32(s->scratch);
        slot = store_coll_slot_by_id(s, id);
        if (slot < 0) {
            for (i = 0; i < s->mem.coll_slots && s->mem.colls[i].used; i++)
                ;
            if (i == s->mem.coll_slots)
                return STORE_ERR_TOO_MANY_COLLECTIONS;
            slot = (int)i;
            memset(&s->mem.colls[i], 0, sizeof(s->mem.colls[i]));
            s->mem.colls[i].used = 1;
            s->mem.colls[i].id = id;
            s->mem.colls[i].floor_addr = FIRST_NONE;
            s->mem.colls[i].rec_seq = h->seq;
        }
        if (h->seq >= s->mem.colls[slot].rec_seq) {
            s->mem.colls[slot].rec_addr = a;
            s->mem.colls[slot].rec_seq = h->seq;
            s->mem.colls[slot].path_hash = fnv1a(v.path, v.path_len);
        }
        return STORE_OK;
    case REC_FLOOR:
        return replay_floor(s, a, h);
    case REC_COLL_DEL:
        if (h->len != 4 || store_lread(s, store_adv(s, a, RHDR), p, 4))
            return s->failed ? STORE_ERR_IO : STORE_OK;
        if ((slot = store_coll_slot_by_id(s, get32(p))) >= 0)
            memset(&s->mem.colls[slot], 0, sizeof(s->mem.colls[slot]));
        return STORE_OK;
    default:
        return STORE_OK;
    }
}

/* A MOVE's put counts only when its MDEL is the next record (REC_MPUT):
 * 1, 0, or a store status. */
static int move_committed(struct store *s, uint32_t a, const struct rhdr *h)
{
    struct rhdr n;
    uint32_t next = store_adv(s, a, RHDR + h->len);
    int rc;
    if (!store_in_log(s, blk_of(s, next)))
        return 0;
    rc = store_rec_check_crc(s, next, &n, 1);
    return rc < 0 ? rc : rc == REC_VALID && n.type == REC_MDEL;
}

/* Objects: PUT, DEL and their MOVE and property-list kinds. */
static int replay_pass2(struct store *s, uint32_t a, const struct rhdr *h)
{
    uint32_t id, sync, len, hash, head;
    int slot, e, rc, del = rec_is_del(h->type);

    if (!rec_is_put(h->type) && !del)
        return STORE_OK;
    if (h->len < OBJ_PREFIX + 1)
        return STORE_OK;
    if (rec_is_move_put(h->type) && (rc = move_committed(s, a, h)) != 1)
        return rc;  /* 0: the MOVE was cut, it never happened */
    if ((rc = store_read_obj_prefix(s, a, &id, &sync, &len)) != STORE_OK)
        return rc;
    head = OBJ_PREFIX + len + (rec_has_props(h->type) ? PROPS_PREFIX : 0);
    if (len == 0 || head > h->len || (del && head != h->len))
        return STORE_OK;
    if ((slot = store_coll_slot_by_id(s, id)) < 0)
        return STORE_OK;  /* collection deleted */
    hash = fnv1a(s->name_buf, len);
    memcpy(s->scratch, s->name_buf, len);
    if ((rc = store_idx_lookup(s, (uint32_t)slot, s->scratch, len, hash, &e)) != STORE_OK)
        return rc;
    if (e >= 0 && sync < s->mem.index[e].sync_seq)
        return STORE_OK;
    if (del && sync <= s->mem.colls[slot].floor) {
        if (e >= 0)  /* deleted, and the deletion is beyond the history kept */
            store_idx_remove(s, (uint32_t)e);
        return STORE_OK;
    }
    /* a replay may briefly hold objects whose deletion comes later in the log */
    if (e < 0 && (e = store_idx_insert(s, (uint32_t)slot, hash, s->mem.index_slots - 1)) < 0)
        return STORE_ERR_INDEX_FULL;
    s->mem.index[e].addr = a;
    s->mem.index[e].sync_seq = sync;
    s->mem.index[e].state = del ? SLOT_TOMB : SLOT_LIVE;
    slot_etag_set(s, (uint32_t)e, h->seq);
    if (rec_has_props(h->type) && s->mem.index_etags) {
        uint8_t etag[4];  /* a PPUT keeps the ETag of the body it carries */
        if ((rc = store_lread(s, store_adv(s, a, RHDR + OBJ_PREFIX + len), etag, 4)) != STORE_OK)
            return rc;
        slot_etag_set(s, (uint32_t)e, get32(etag));
    }
    if (sync > s->mem.colls[slot].sync_seq)
        s->mem.colls[slot].sync_seq = sync;
    return STORE_OK;
}

typedef int (*visit_fn)(struct store *s, uint32_t a, const struct rhdr *h);

/* Replay every valid record in log order; returns where the log ends.
 * Records of sealed blocks are taken on their header; the others are checked
 * with their CRC, and with `seal` a block whose records all passed, left by
 * the walk at a record's end (no blank or torn bytes in it), is sealed. */
static int walk(struct store *s, visit_fn visit, uint32_t *end, struct store_mount_stats *st,
                int seal)
{
    uint32_t b = s->tail, pos, n, torn, prev_pos, skip_from, cur = FIRST_NONE;
    struct bhdr bh;
    struct rhdr h;
    int rc, cur_sealed = 0;

    if (!s->nused) {
        *end = data_start(s, s->tail);
        return STORE_OK;
    }
    pos = FIRST_NONE;
    for (n = 0; n < s->nused; n++, b = ring_next(s, b)) {
        if ((rc = store_read_bhdr(s, b, &bh)) != STORE_OK)
            return rc;
        if (bh.first != FIRST_NONE) {
            pos = data_start(s, b) + bh.first;
            break;
        }
    }
    if (pos == FIRST_NONE) {
        *end = data_start(s, ring_next(s, head_blk(s)));
        return STORE_OK;
    }
    for (;;) {
        if (!store_in_log(s, blk_of(s, pos))) {
            *end = pos;
            return STORE_OK;
        }
        if (blk_of(s, pos) != cur) {
            cur = blk_of(s, pos);
            if ((rc = store_block_sealed(s, cur, &cur_sealed)) != STORE_OK)
                return rc;
        }
        prev_pos = store_log_pos(s, pos);
        rc = store_rec_check_crc(s, pos, &h, !cur_sealed);
        if (rc < 0)
            return rc;
        if (rc == REC_VALID) {
            if ((rc = visit(s, pos, &h)) != STORE_OK)
                return rc;
            if (st)
                st->records++;
            if (h.seq >= s->next_rec_seq)
                s->next_rec_seq = h.seq + 1;
            if (RHDR + h.len > s->max_record)
                s->max_record = RHDR + h.len;
            pos = store_adv(s, pos, RHDR + h.len);
            if (store_in_log(s, blk_of(s, pos)) && store_log_pos(s, pos) <= prev_pos) {
                *end = data_start(s, ring_next(s, head_blk(s)));  /* ring full */
                return STORE_OK;
            }
            if (seal && !cur_sealed && blk_of(s, pos) != cur && (rc = store_seal_block(s, cur)) != STORE_OK)
                return rc;
            continue;
        }
        /* blank or torn: nothing more starts in this block (left unsealed) */
        b = blk_of(s, pos);
        skip_from = pos;
        for (n = ring_dist(s, s->tail, b) + 1; n < s->nused; n++) {
            b = (s->tail + n) % s->nblocks;
            if ((rc = store_read_bhdr(s, b, &bh)) != STORE_OK)
                return rc;
            if (bh.first != FIRST_NONE)
                break;
        }
        if (st) {  /* count what is skipped: up to the next record or the log end */
            uint32_t to = n < s->nused ? store_log_pos(s, data_start(s, b) + bh.first) : s->nused * s->data_size;
            while (store_log_pos(s, skip_from) < to) {
                uint32_t room = blk_end(s, blk_of(s, skip_from)) - skip_from;
                if (room > to - store_log_pos(s, skip_from))
                    room = to - store_log_pos(s, skip_from);
                if ((rc = store_is_blank(s, skip_from, room, &torn)) < 0)
                    return rc;
                st->torn_bytes += torn;
                skip_from = store_adv(s, skip_from, room);
                if (!store_in_log(s, blk_of(s, skip_from)))
                    break;
            }
        }
        if (n >= s->nused) {
            *end = pos;
            return STORE_OK;
        }
        pos = data_start(s, b) + bh.first;
    }
}

/* Find the log: the chain of live blocks with consecutive sequence numbers
 * that ends in the highest one. */
static STORE_SCAN_CODE int find_log(struct store *s, struct store_mount_stats *st)
{
    struct bhdr bh, prev;
    uint32_t b, top = 0, top_seq = 0, max_seq = 0, count, written = 0;
    int have = 0, rc;

    /* one read of each block's header: on a large chip behind a slow bus (32 MiB of SPI NOR:
     * 8,192 headers) this loop is most of the mount */
    for (b = 0; b < s->nblocks; b++) {
        if ((rc = store_read_bhdr(s, b, &bh)) != STORE_OK)
            return rc;
        written += !bh.blank;
        if (bh.crc_ok) {
            if (bh.seq >= max_seq)
                max_seq = bh.seq;
            if (bh.rec_seq_base > s->next_rec_seq)
                s->next_rec_seq = bh.rec_seq_base;
        }
        if (bh.live && (!have || bh.seq > top_seq)) {
            have = 1;
            top = b;
            top_seq = bh.seq;
        }
    }
    s->next_block_seq = max_seq + 1;
    s->tail = 0;
    s->nused = 0;
    if (have) {
        s->tail = top;
        count = 1;
        bh.seq = top_seq;
        while (count < s->nblocks) {
            b = (s->tail + s->nblocks - 1) % s->nblocks;
            if ((rc = store_read_bhdr(s, b, &prev)) != STORE_OK)
                return rc;
            if (!prev.live || prev.seq != bh.seq - 1)
                break;
            s->tail = b;
            bh = prev;
            count++;
        }
        s->nused = count;
    }
    /* every block of the log has a header: the other written ones are stale */
    st->stale_blocks = written - s->nused;
    return STORE_OK;
}

int store_mount(struct store *s, const struct flash *f, const struct store_config *cfg,
                const struct store_memory *mem, struct store_mount_stats *stats)
{
    struct store_mount_stats local;
    struct store_mount_stats *st = stats ? stats : &local;
    uint32_t end, i, len, programmed;
    int rc;

    memset(s, 0, sizeof(*s));
    memset(st, 0, sizeof(*st));
    s->failed = 1;  /* until the mount succeeds */
    s->flash = f;
    s->cfg = *cfg;
    s->mem = *mem;
    s->block_size = f->geo.block_size;
    if (!f->geo.block_size || f->geo.size % f->geo.block_size || f->geo.block_size < 4 * BHDR ||
        f->geo.page_size < 32 || f->geo.block_size % f->geo.page_size ||
        !cfg->max_object_size || cfg->max_object_size > f->geo.size ||
        mem->index_slots < 8 || mem->index_slots >= LINK_NONE || !mem->coll_slots ||
        mem->coll_slots > 0xFFFF || !mem->user_slots)
        return STORE_ERR_INVALID;
    s->nblocks = f->geo.size / f->geo.block_size;
    if ((s->block_size & (s->block_size - 1)) == 0)
        while ((1u << s->block_shift) < s->block_size)
            s->block_shift++;
    s->data_size = s->block_size - BHDR;
    s->max_record = RHDR + OBJ_PREFIX + STORE_NAME_MAX + cfg->max_object_size;
    if (s->max_record < RHDR + STORE_COLL_RECORD_MAX)
        s->max_record = RHDR + STORE_COLL_RECORD_MAX;
    memset(mem->index, 0, mem->index_slots * sizeof(*mem->index));
    memset(mem->colls, 0, mem->coll_slots * sizeof(*mem->colls));
    memset(mem->users, 0, mem->user_slots * sizeof(*mem->users));
    s->next_rec_seq = 1;

    /* pass 1 checks the CRC of every record outside sealed blocks and seals
     * the blocks that passed: the later passes read their headers only */
    if ((rc = find_log(s, st)) != STORE_OK || (rc = walk(s, replay_pass1, &end, NULL, 1)) != STORE_OK)
        goto out;
    if (s->replay_floor_pass && (rc = walk(s, replay_floor, &end, NULL, 0)) != STORE_OK)
        goto out;
    if ((rc = walk(s, replay_pass2, &end, st, 0)) != STORE_OK)
        goto out;

    /* where writing continues: never after torn bytes in the same block */
    s->write_addr = end;
    if (store_in_log(s, blk_of(s, end))) {
        rc = store_is_blank(s, end, blk_end(s, blk_of(s, end)) - end, &programmed);
        if (rc < 0)
            goto out;
        if (!rc || blk_of(s, end) != head_blk(s))
            s->write_addr = data_start(s, ring_next(s, head_blk(s)));
    }
    /* blocks the writer fills from here on are sealed once it has left them
     * and synced; those behind (torn bytes, an old head) stay as they are */
    s->seal_next = blk_of(s, s->write_addr);
    /* the reserve must hold the largest record plus one block of copies */
    s->reserve_blocks = (s->data_size + s->max_record + s->data_size - 1) / s->data_size + 1;
    if (s->nblocks < s->reserve_blocks + 3) {
        rc = STORE_ERR_INVALID;
        goto out;
    }

    store_chains_build(s);
    /* history floors, then live bytes and object counts */
    for (i = 0; i < s->mem.coll_slots; i++) {
        struct store_coll_slot *c = &s->mem.colls[i];
        if (!c->used)
            continue;
        if (c->sync_seq < c->floor)
            c->sync_seq = c->floor;
        if ((rc = store_idx_drop(s, i, 1, c->floor)) != STORE_OK)
            goto out;
    }
    s->live_bytes = 0;
    for (i = 0; i < s->mem.coll_slots; i++) {
        struct store_coll_slot *c = &s->mem.colls[i];
        if (!c->used)
            continue;
        if ((rc = store_rec_len_at(s, c->rec_addr, &len)) != STORE_OK)
            goto out;
        s->live_bytes += len;
        if (c->floor_addr != FIRST_NONE)
            s->live_bytes += FLOOR_RECORD;
        st->collections++;
    }
    for (i = 0; i < s->mem.index_slots; i++) {
        struct store_index_slot *e = &s->mem.index[i];
        if (e->state == SLOT_EMPTY)
            continue;
        if ((rc = store_rec_len_at(s, e->addr, &len)) != STORE_OK)
            goto out;
        s->live_bytes += len;
        if (e->state == SLOT_LIVE) {
            s->mem.colls[e->coll].objects++;
            st->objects++;
        } else {
            st->tombstones++;
        }
    }
    for (i = 0; i < s->mem.user_slots; i++) {
        if (!s->mem.users[i].used)
            continue;
        if ((rc = store_rec_len_at(s, s->mem.users[i].addr, &len)) != STORE_OK)
            goto out;
        s->live_bytes += len;
        st->users++;
    }
    st->blocks_used = s->nused;
    s->failed = 0;
    rc = STORE_OK;
out:
    return rc;
}
