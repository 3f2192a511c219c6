/*
 * Calendar objects: puts (streamed or whole, with the RFC 9110 preconditions),
 * reads, deletes (tombstones that keep the sync history), their dead
 * properties (a property list in the object's record) and the listings of
 * a collection's members (store_list, RFC 6578 changes).
 */
#include "store/store_internal.h"

#include <string.h>

#include "util/crc32.h"

int store_obj_lookup(struct store *s, uint32_t coll_id, const char *name, size_t len,
               int *coll_slot, int *entry)
{
    *entry = -1;
    if (s->failed)
        return STORE_ERR_IO;
    if (!len || len > STORE_NAME_MAX || !name)
        return STORE_ERR_INVALID;
    if ((*coll_slot = store_coll_slot_by_id(s, coll_id)) < 0)
        return STORE_ERR_NOT_FOUND;
    return store_idx_lookup(s, (uint32_t)*coll_slot, (const uint8_t *)name, (uint32_t)len,
                      fnv1a(name, len), entry);
}

/* The object record at addr: its info, its name (into name_buf) and, if
 * body_off is not NULL, where its body starts in the record (its property
 * list, info->props_len bytes, ends there). */
static int obj_info(struct store *s, uint32_t addr, uint32_t *name_len, struct store_object_info *info,
                    uint32_t *body_off)
{
    uint8_t raw[RHDR], ext[PROPS_PREFIX];
    uint32_t id, off;
    int rc;
    if ((rc = store_lread(s, addr, raw, RHDR)) ||
        (rc = store_read_obj_prefix(s, addr, &id, &info->sync_seq, name_len)))
        return rc;
    off = OBJ_PREFIX + *name_len;
    info->etag = get32(raw + 8);
    info->props_len = 0;
    if (rec_has_props(raw[2])) {
        if ((rc = store_lread(s, store_adv(s, addr, RHDR + off), ext, PROPS_PREFIX)) != STORE_OK)
            return rc;
        info->etag = get32(ext);
        info->props_len = (uint32_t)ext[4] | (uint32_t)ext[5] << 8;
        off += PROPS_PREFIX + info->props_len;
        if (off > get32(raw + 4))
            return io_fail(s);  /* a record its CRC vouches for cannot say this */
    }
    info->size = rec_is_put(raw[2]) ? get32(raw + 4) - off : 0;
    if (body_off)
        *body_off = RHDR + off;
    return STORE_OK;
}

/* The head of an object record: its prefix and name. */
static int wr_object_head(struct store *s, uint8_t type, uint32_t payload, uint32_t coll, uint32_t sync,
                          const char *name, size_t name_len)
{
    uint8_t p[OBJ_PREFIX];
    int rc;
    store_wr_begin(s, type, payload);
    put32(p, coll);
    put32(p + 4, sync);
    p[8] = (uint8_t)name_len;
    if ((rc = store_wr_data(s, p, OBJ_PREFIX)) != STORE_OK)
        return rc;
    return store_wr_data(s, name, (uint32_t)name_len);
}

/* A PPUT's ETag and property list length, after the name. */
static int wr_props_head(struct store *s, uint32_t etag, uint32_t props_len)
{
    uint8_t p[PROPS_PREFIX];
    put32(p, etag);
    p[4] = (uint8_t)props_len;
    p[5] = (uint8_t)(props_len >> 8);
    return store_wr_data(s, p, PROPS_PREFIX);
}

/* n bytes of the log from a, into the record being written. */
static int wr_copy(struct store *s, uint32_t a, uint32_t n)
{
    uint8_t buf[IO_CHUNK];
    int rc;
    while (n) {
        uint32_t k = n < IO_CHUNK ? n : IO_CHUNK;
        if ((rc = store_lread(s, a, buf, k)) || (rc = store_wr_data(s, buf, k)))
            return rc;
        a = store_adv(s, a, k);
        n -= k;
    }
    return STORE_OK;
}

/* Bytes a record gives to a property list of props_len bytes. */
static uint32_t props_part(uint32_t props_len)
{
    return props_len ? PROPS_PREFIX + props_len : 0;
}

/* The property list of the live object at index slot e (none: 0): its
 * length, so that a new version can carry it. */
static int live_props_len(struct store *s, int e, uint32_t *props_len)
{
    struct store_object_info info;
    uint32_t nlen;
    int rc;
    *props_len = 0;
    if (e < 0 || s->mem.index[e].state != SLOT_LIVE)
        return STORE_OK;
    if ((rc = obj_info(s, s->mem.index[e].addr, &nlen, &info, NULL)) != STORE_OK)
        return rc;
    *props_len = info.props_len;
    return STORE_OK;
}

/* After a new version's head: the old version's property list (at index
 * slot e), under the new record's own ETag. */
static int wr_carried_props(struct store *s, int e)
{
    struct store_object_info info;
    uint32_t nlen, body_off;
    int rc;
    if ((rc = obj_info(s, s->mem.index[e].addr, &nlen, &info, &body_off)) ||
        (rc = wr_props_head(s, s->wr_seq, info.props_len)))
        return rc;
    return wr_copy(s, store_adv(s, s->mem.index[e].addr, body_off - info.props_len), info.props_len);
}

int store_put_begin(struct store *s, uint32_t coll, const char *name, size_t name_len,
                    uint32_t body_len, const uint32_t *if_match, int if_none_match)
{
    struct store_object_info info;
    uint32_t rec, props_len, nlen;
    int slot, e, live, rc;

    if ((rc = writable(s)) != STORE_OK)
        return rc;
    if (!name || !name_len || name_len > STORE_NAME_MAX)
        return STORE_ERR_INVALID;
    if (store_coll_slot_by_id(s, coll) < 0)
        return STORE_ERR_NOT_FOUND;
    if (body_len > s->cfg.max_object_size)
        return STORE_ERR_TOO_LARGE;
    /* a new body keeps the dead properties of the version it replaces */
    if ((rc = store_obj_lookup(s, coll, name, name_len, &slot, &e)) != STORE_OK ||
        (rc = live_props_len(s, e, &props_len)) != STORE_OK)
        return rc;
    rec = RHDR + OBJ_PREFIX + (uint32_t)name_len + props_part(props_len) + body_len;
    if (rec > obj_record_max(s))
        return STORE_ERR_TOO_LARGE;
    if ((rc = store_ensure_space(s, rec)) != STORE_OK)
        return rc;
    if ((rc = store_obj_lookup(s, coll, name, name_len, &slot, &e)) != STORE_OK)
        return rc;
    live = e >= 0 && s->mem.index[e].state == SLOT_LIVE;
    /* RFC 9110 13.1.2: If-None-Match: * fails when a current representation exists */
    if (if_none_match && live)
        return STORE_ERR_PRECONDITION;
    /* RFC 9110 13.1.1: If-Match fails without a current representation or on
     * a different strong ETag */
    if (if_match) {
        if (!live)
            return STORE_ERR_PRECONDITION;
        if ((rc = obj_info(s, s->mem.index[e].addr, &nlen, &info, NULL)) != STORE_OK)
            return rc;
        if (info.etag != *if_match)
            return STORE_ERR_PRECONDITION;
    }
    if (!live && s->mem.colls[slot].objects >= s->cfg.max_objects_per_collection)
        return STORE_ERR_COLL_FULL;
    if (e < 0 && s->index_used >= index_limit(s) &&
        ((rc = store_evict_tombstones(s)) != STORE_OK || (rc = store_ensure_space(s, rec)) != STORE_OK))
        return rc;
    s->put_coll = (uint32_t)slot;
    s->put_sync = s->mem.colls[slot].sync_seq + 1;
    s->put_left = body_len;
    s->put_name_hash = fnv1a(name, name_len);
    s->put_name_len = (uint8_t)name_len;
    if ((rc = wr_object_head(s, rec_put_type(0, props_len != 0), rec - RHDR, coll, s->put_sync, name,
                             name_len)) != STORE_OK ||
        (props_len && (rc = wr_carried_props(s, e)) != STORE_OK))
        return rc;
    s->put_active = 1;
    return STORE_OK;
}

int store_put_write(struct store *s, const void *data, uint32_t len)
{
    int rc;
    if (s->failed)
        return STORE_ERR_IO;
    if (!s->put_active)
        return STORE_ERR_INVALID;
    if (len > s->put_left)
        return STORE_ERR_TOO_LARGE;
    if ((rc = store_wr_data(s, data, len)) != STORE_OK)
        return rc;
    s->put_left -= len;
    return STORE_OK;
}

int store_put_commit(struct store *s, uint32_t *etag)
{
    uint32_t name_len = s->put_name_len;
    int e, rc;
    struct store_coll_slot *c;

    if (s->failed)
        return STORE_ERR_IO;
    if (!s->put_active || s->put_left)
        return STORE_ERR_INVALID;
    if ((rc = store_wr_commit(s, 1)) != STORE_OK)
        return rc;
    s->put_active = 0;
    c = &s->mem.colls[s->put_coll];
    /* the name as written, to find the index entry again */
    if ((rc = store_lread(s, store_adv(s, s->wr_start, RHDR + OBJ_PREFIX), s->scratch, name_len)) != STORE_OK ||
        (rc = store_idx_lookup(s, s->put_coll, s->scratch, name_len, s->put_name_hash, &e)) != STORE_OK)
        return rc;
    if (e < 0) {
        if ((e = store_idx_insert(s, s->put_coll, s->put_name_hash, index_limit(s))) < 0)
            return io_fail(s);  /* put_begin made room; cannot happen */
        c->objects++;
    } else {
        if (s->mem.index[e].state != SLOT_LIVE)
            c->objects++;
        store_supersede(s, s->mem.index[e].addr);
    }
    s->mem.index[e].addr = s->wr_start;
    s->mem.index[e].sync_seq = s->put_sync;
    s->mem.index[e].state = SLOT_LIVE;
    slot_etag_set(s, (uint32_t)e, s->wr_seq);
    s->mem.index[e].flags &= (uint8_t)~SLOT_TAG_KNOWN;  /* new content */
    c->sync_seq = s->put_sync;
    s->live_bytes += RHDR + s->wr_len;
    if (etag)
        *etag = s->wr_seq;
    return STORE_OK;
}

/* Turn the half-written record into padding so replay steps over it. */
int store_put_abort(struct store *s)
{
    uint8_t raw[RHDR], buf[IO_CHUNK];
    uint32_t crc, a, i;
    int rc;
    if (!s->put_active)
        return STORE_OK;
    s->put_active = 0;
    if (s->failed)
        return STORE_ERR_IO;
    /* programming 0xFF changes no bit but opens every block the record was
     * to cover, so their headers point past it and its CRC is stable */
    memset(buf, 0xff, sizeof(buf));
    while (s->wr_pos != s->wr_end) {
        uint32_t left = store_log_pos(s, s->wr_end) - store_log_pos(s, s->wr_pos);
        uint32_t n = left < IO_CHUNK ? left : IO_CHUNK;
        if ((rc = store_prog(s, s->wr_pos, buf, n)) != STORE_OK)
            return rc;
        s->wr_pos = store_adv(s, s->wr_pos, n);
    }
    store_make_rhdr(raw, REC_PAD, s->wr_len, s->wr_seq);
    crc = crc32_update(0, raw, 12);
    a = store_adv(s, s->wr_start, RHDR);
    for (i = 0; i < s->wr_len;) {
        uint32_t n = s->wr_len - i < IO_CHUNK ? s->wr_len - i : IO_CHUNK;
        if ((rc = store_lread(s, a, buf, n)) != STORE_OK)
            return rc;
        crc = crc32_update(crc, buf, n);
        a = store_adv(s, a, n);
        i += n;
    }
    put32(raw + 12, crc);
    s->wr_type = REC_PAD;
    if ((rc = store_prog(s, s->wr_start, raw, RHDR)) != STORE_OK)
        return rc;
    s->write_addr = s->wr_end;
    return STORE_OK;
}

int store_put_object(struct store *s, uint32_t coll, const char *name, size_t name_len,
                     const void *body, uint32_t body_len, const uint32_t *if_match,
                     int if_none_match, uint32_t *etag)
{
    int rc = store_put_begin(s, coll, name, name_len, body_len, if_match, if_none_match);
    if (rc != STORE_OK)
        return rc;
    if ((rc = store_put_write(s, body, body_len)) != STORE_OK) {
        store_put_abort(s);
        return rc;
    }
    return store_put_commit(s, etag);
}

int store_get_object(struct store *s, uint32_t coll, const char *name, size_t name_len,
                     uint32_t offset, void *buf, uint32_t cap, uint32_t *got,
                     struct store_object_info *info)
{
    struct store_object_info local;
    uint32_t nlen, body_off, n = 0;
    int slot, e, rc;

    if (!info)
        info = &local;
    if (got)
        *got = 0;
    if ((rc = store_obj_lookup(s, coll, name, name_len, &slot, &e)) != STORE_OK)
        return rc;
    if (e < 0 || s->mem.index[e].state != SLOT_LIVE)
        return STORE_ERR_NOT_FOUND;
    if ((rc = obj_info(s, s->mem.index[e].addr, &nlen, info, &body_off)) != STORE_OK)
        return rc;
    if (offset < info->size && cap) {
        n = info->size - offset < cap ? info->size - offset : cap;
        rc = store_lread(s, store_adv(s, s->mem.index[e].addr, body_off + offset), buf, n);
        if (rc)
            return rc;
    }
    if (got)
        *got = n;
    return STORE_OK;
}

int store_object_is_current(struct store *s, uint32_t coll, const char *name, size_t name_len,
                            uint32_t etag)
{
    struct store_object_info info;
    uint32_t hash, i, n;
    int slot, rc;
    if (!s->mem.index_etags) {
        rc = store_get_object(s, coll, name, name_len, 0, NULL, 0, NULL, &info);
        if (rc == STORE_ERR_NOT_FOUND)
            return 0;
        return rc == STORE_OK ? info.etag == etag : rc;
    }
    if (s->failed)
        return STORE_ERR_IO;
    if (!name_len || name_len > STORE_NAME_MAX || (slot = store_coll_slot_by_id(s, coll)) < 0)
        return 0;
    /* the slot holding this ETag holds the one record with it, of this name */
    hash = fnv1a(name, name_len);
    for (i = index_home(s, (uint32_t)slot, hash), n = 0; n < s->mem.index_slots;
         n++, i = i + 1 < s->mem.index_slots ? i + 1 : 0) {
        const struct store_index_slot *e = &s->mem.index[i];
        if (e->state == SLOT_EMPTY)
            return 0;
        if (e->coll == slot && e->name_hash == hash && e->state == SLOT_LIVE &&
            s->mem.index_etags[i] == etag)
            return 1;
    }
    return 0;
}

/* The live object at index slot e of collection slot `slot` becomes a
 * tombstone: a REC_DEL (a DELETE) or REC_MDEL (a MOVE's source) record at
 * sync sequence `sync`, synced, then the index and the collection's counts. */
static int write_tombstone(struct store *s, uint8_t type, uint32_t coll, int slot, int e,
                           const char *name, size_t name_len, uint32_t sync)
{
    int rc;
    if ((rc = wr_object_head(s, type, OBJ_PREFIX + (uint32_t)name_len, coll, sync, name, name_len)) ||
        (rc = store_wr_commit(s, 1)))
        return rc;
    store_supersede(s, s->mem.index[e].addr);
    s->mem.index[e].addr = s->wr_start;
    s->mem.index[e].sync_seq = sync;
    s->mem.index[e].state = SLOT_TOMB;
    s->mem.colls[slot].objects--;
    s->mem.colls[slot].sync_seq = sync;
    s->live_bytes += RHDR + s->wr_len;
    return STORE_OK;
}

int store_delete_object(struct store *s, uint32_t coll, const char *name, size_t name_len,
                        const uint32_t *if_match)
{
    struct store_object_info info;
    uint32_t nlen;
    int slot, e, rc;

    if ((rc = writable(s)) != STORE_OK)
        return rc;
    if (name_len && name_len <= STORE_NAME_MAX &&
        (rc = store_ensure_space(s, (uint32_t)(RHDR + OBJ_PREFIX + name_len))) != STORE_OK)
        return rc;
    if ((rc = store_obj_lookup(s, coll, name, name_len, &slot, &e)) != STORE_OK)
        return rc;
    if (e < 0 || s->mem.index[e].state != SLOT_LIVE)
        return STORE_ERR_NOT_FOUND;
    if (if_match) {
        if ((rc = obj_info(s, s->mem.index[e].addr, &nlen, &info, NULL)) != STORE_OK)
            return rc;
        if (info.etag != *if_match)
            return STORE_ERR_PRECONDITION;
    }
    return write_tombstone(s, REC_DEL, coll, slot, e, name, name_len, s->mem.colls[slot].sync_seq + 1);
}

/* COPY and MOVE (RFC 4918 sections 9.8, 9.9) of one object: the source's
 * body and property list as a new version of dst. A copy is one PUT record;
 * a move is an MPUT and an MDEL written back to back, which a replay takes
 * both or neither of (store_internal.h). The MPUT is synced before the MDEL
 * is written: an MDEL must never be durable without it. Space for both is
 * made first. */
int store_copy_object(struct store *s, uint32_t src_coll, const char *src, size_t src_len,
                      uint32_t dst_coll, const char *dst, size_t dst_len, int move, uint32_t *etag)
{
    struct store_object_info info;
    uint32_t nlen, need, both, put_addr, put_seq, put_len, sync, body_off;
    int sslot, se, dslot, de, rc, dlive;

    if ((rc = writable(s)) != STORE_OK)
        return rc;
    if (!dst || !dst_len || dst_len > STORE_NAME_MAX ||
        (src_coll == dst_coll && src_len == dst_len && memcmp(src, dst, dst_len) == 0))
        return STORE_ERR_INVALID;
    if ((rc = store_obj_lookup(s, dst_coll, dst, dst_len, &dslot, &de)) != STORE_OK)
        return rc;
    if ((rc = store_get_object(s, src_coll, src, src_len, 0, NULL, 0, NULL, &info)) != STORE_OK)
        return rc;
    need = RHDR + OBJ_PREFIX + (uint32_t)dst_len + props_part(info.props_len) + info.size;
    if (need > obj_record_max(s))
        return STORE_ERR_TOO_LARGE;
    both = need + (move ? RHDR + OBJ_PREFIX + (uint32_t)src_len : 0);
    if ((rc = store_ensure_space(s, both)) != STORE_OK)
        return rc;
    /* compaction moves records and drops tombstones: look both up again */
    if ((rc = store_obj_lookup(s, dst_coll, dst, dst_len, &dslot, &de)) != STORE_OK)
        return rc;
    if (de < 0 && s->index_used >= index_limit(s) &&
        ((rc = store_evict_tombstones(s)) != STORE_OK ||
         (rc = store_ensure_space(s, both)) != STORE_OK))
        return rc;
    dlive = de >= 0 && s->mem.index[de].state == SLOT_LIVE;
    if ((rc = store_obj_lookup(s, src_coll, src, src_len, &sslot, &se)) != STORE_OK)
        return rc;
    if (!dlive && !(move && sslot == dslot) && s->mem.colls[dslot].objects >= s->cfg.max_objects_per_collection)
        return STORE_ERR_COLL_FULL;
    if ((rc = obj_info(s, s->mem.index[se].addr, &nlen, &info, &body_off)) != STORE_OK)
        return rc;
    sync = s->mem.colls[dslot].sync_seq + 1;
    if ((rc = wr_object_head(s, rec_put_type(move, info.props_len != 0), need - RHDR, dst_coll, sync, dst,
                             dst_len)) != STORE_OK ||
        (info.props_len && (rc = wr_props_head(s, s->wr_seq, info.props_len)) != STORE_OK) ||
        (rc = wr_copy(s, store_adv(s, s->mem.index[se].addr, body_off - info.props_len),
                      info.props_len + info.size)) != STORE_OK ||
        (rc = store_wr_commit(s, 1)) != STORE_OK)
        return rc;
    put_addr = s->wr_start;
    put_seq = s->wr_seq;
    put_len = s->wr_len;
    if (move) {
        /* the source's tombstone, in the sync after the put's when both are
         * in one collection */
        if ((rc = write_tombstone(s, REC_MDEL, src_coll, sslot, se, src, src_len,
                                  s->mem.colls[sslot].sync_seq + 1 + (sslot == dslot))) != STORE_OK)
            return rc;
    }
    if (de < 0) {
        if ((de = store_idx_insert(s, (uint32_t)dslot, fnv1a(dst, dst_len), index_limit(s))) < 0)
            return io_fail(s);  /* room was made above; cannot happen */
    } else if (dlive) {
        store_supersede(s, s->mem.index[de].addr);
    }
    if (!dlive)
        s->mem.colls[dslot].objects++;
    s->mem.index[de].addr = put_addr;
    s->mem.index[de].sync_seq = sync;
    s->mem.index[de].state = SLOT_LIVE;
    slot_etag_set(s, (uint32_t)de, put_seq);
    s->mem.index[de].flags &= (uint8_t)~SLOT_TAG_KNOWN;
    if (sync > s->mem.colls[dslot].sync_seq)
        s->mem.colls[dslot].sync_seq = sync;
    s->live_bytes += RHDR + put_len;
    if (etag)
        *etag = put_seq;
    return STORE_OK;
}

int store_obj_props(struct store *s, uint32_t coll, const char *name, size_t name_len,
                    const uint8_t **list, size_t *len)
{
    struct store_object_info info;
    uint32_t nlen, body_off;
    int slot, e, rc;

    *list = s->scratch;
    *len = 0;
    if ((rc = store_obj_lookup(s, coll, name, name_len, &slot, &e)) != STORE_OK)
        return rc;
    if (e < 0 || s->mem.index[e].state != SLOT_LIVE)
        return STORE_ERR_NOT_FOUND;
    if ((rc = obj_info(s, s->mem.index[e].addr, &nlen, &info, &body_off)) != STORE_OK)
        return rc;
    if (info.props_len > sizeof(s->scratch))
        return io_fail(s);  /* never written: STORE_PROPS_MAX */
    if ((rc = store_lread(s, store_adv(s, s->mem.index[e].addr, body_off - info.props_len), s->scratch,
                          info.props_len)) != STORE_OK)
        return rc;
    *len = info.props_len;
    return STORE_OK;
}

/* RFC 4918 section 9.2: a PROPPATCH of an object is this one record, the
 * whole new property list with the body it had, so it is all there after a
 * power cut or not at all. */
int store_obj_set_props(struct store *s, uint32_t coll, const char *name, size_t name_len,
                        const uint8_t *list, size_t len)
{
    struct store_object_info info;
    uint32_t nlen, body_off, need, sync;
    int slot, e, rc;

    if ((rc = writable(s)) != STORE_OK)
        return rc;
    if (len > STORE_PROPS_MAX)
        return STORE_ERR_TOO_LARGE;
    if (store_props_count(list, len) < 0)
        return STORE_ERR_INVALID;
    if ((rc = store_get_object(s, coll, name, name_len, 0, NULL, 0, NULL, &info)) != STORE_OK)
        return rc;
    need = RHDR + OBJ_PREFIX + (uint32_t)name_len + PROPS_PREFIX + (uint32_t)len + info.size;
    if (need > obj_record_max(s))
        return STORE_ERR_TOO_LARGE;
    if ((rc = store_ensure_space(s, need)) != STORE_OK ||
        (rc = store_obj_lookup(s, coll, name, name_len, &slot, &e)) != STORE_OK ||
        (rc = obj_info(s, s->mem.index[e].addr, &nlen, &info, &body_off)) != STORE_OK)
        return rc;
    sync = s->mem.colls[slot].sync_seq + 1;
    if ((rc = wr_object_head(s, REC_PPUT, need - RHDR, coll, sync, name, name_len)) != STORE_OK ||
        (rc = wr_props_head(s, info.etag, (uint32_t)len)) != STORE_OK ||
        (len && (rc = store_wr_data(s, list, (uint32_t)len)) != STORE_OK) ||
        (rc = wr_copy(s, store_adv(s, s->mem.index[e].addr, body_off), info.size)) != STORE_OK ||
        (rc = store_wr_commit(s, 1)) != STORE_OK)
        return rc;
    /* the same body: the slot's tag (of its content) and ETag stay true */
    store_supersede(s, s->mem.index[e].addr);
    slot_etag_set(s, (uint32_t)e, info.etag);
    s->mem.index[e].addr = s->wr_start;
    s->mem.index[e].sync_seq = sync;
    s->mem.colls[slot].sync_seq = sync;
    s->live_bytes += RHDR + s->wr_len;
    return STORE_OK;
}

/* The collection's list from from_hash on, filtered in RAM before any flash
 * read. */
static int enumerate(struct store *s, uint32_t slot, int tombs, uint32_t after, uint32_t from_hash,
                     store_entry_cb cb, void *ctx)
{
    struct store_object_info info;
    struct store_entry ent;
    uint32_t i, nlen;
    int rc;
    for (i = s->mem.colls[slot].head; i != LINK_NONE; i = s->mem.index[i].next) {
        const struct store_index_slot *e = &s->mem.index[i];
        if (e->name_hash < from_hash || e->sync_seq <= after || (e->state == SLOT_TOMB && !tombs))
            continue;
        if ((rc = obj_info(s, e->addr, &nlen, &info, NULL)) != STORE_OK)
            return rc;
        ent.name = (const char *)s->name_buf;
        ent.name_len = nlen;
        ent.etag = info.etag;
        ent.size = info.size;
        ent.sync_seq = e->sync_seq;
        ent.name_hash = e->name_hash;
        ent.deleted = e->state == SLOT_TOMB;
        if (cb(ctx, &ent))
            break;
    }
    return STORE_OK;
}

int store_list_from(struct store *s, uint32_t coll, uint32_t from_hash, store_entry_cb cb, void *ctx)
{
    int slot;
    if (s->failed)
        return STORE_ERR_IO;
    if ((slot = store_coll_slot_by_id(s, coll)) < 0)
        return STORE_ERR_NOT_FOUND;
    return enumerate(s, (uint32_t)slot, 0, 0, from_hash, cb, ctx);
}

int store_list(struct store *s, uint32_t coll, store_entry_cb cb, void *ctx)
{
    return store_list_from(s, coll, 0, cb, ctx);
}

int store_changes_after(struct store *s, uint32_t coll, uint32_t token, uint32_t after_seq,
                        store_entry_cb cb, void *ctx)
{
    int slot;
    if (s->failed)
        return STORE_ERR_IO;
    if ((slot = store_coll_slot_by_id(s, coll)) < 0)
        return STORE_ERR_NOT_FOUND;
    if (token == 0)  /* RFC 6578 3.4: initial synchronization */
        return enumerate(s, (uint32_t)slot, 0, after_seq, 0, cb, ctx);
    if (token < s->mem.colls[slot].floor || token > s->mem.colls[slot].sync_seq)
        return STORE_ERR_SYNC_TOKEN;
    return enumerate(s, (uint32_t)slot, 1, token > after_seq ? token : after_seq, 0, cb, ctx);
}

int store_changes_since(struct store *s, uint32_t coll, uint32_t token, store_entry_cb cb, void *ctx)
{
    return store_changes_after(s, coll, token, 0, cb, ctx);
}
