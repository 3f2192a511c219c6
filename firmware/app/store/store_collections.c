/*
 * Calendar collections: create, find, delete (a COLL_DEL record), their
 * information and properties (live and dead: one property list). A
 * collection's owner, path and properties are one COLL record; a change
 * writes it again whole.
 */
#include "store/store_internal.h"

#include <string.h>

/* *found: the slot of the collection at path, or -1; a path whose hash
 * matches is compared on the flash. */
static int coll_find(struct store *s, const uint8_t *path, size_t len, int *found)
{
    uint32_t i, hash = fnv1a(path, len), plen;
    struct coll_view v;
    int rc;
    *found = -1;
    for (i = 0; i < s->mem.coll_slots; i++) {
        struct store_coll_slot *c = &s->mem.colls[i];
        if (!c->used || c->path_hash != hash)
            continue;
        if ((rc = store_coll_load(s, c->rec_addr, &plen, &v)) != STORE_OK)
            return rc;
        if (v.path_len == len && memcmp(v.path, path, len) == 0) {
            *found = (int)i;
            break;
        }
    }
    return STORE_OK;
}

/* Write the collection payload held in scratch as the slot's new record. */
static int coll_write(struct store *s, uint32_t slot, uint32_t len)
{
    struct store_coll_slot *c = &s->mem.colls[slot];
    int rc;
    store_wr_begin(s, REC_COLL, len);
    if ((rc = store_wr_data(s, s->scratch, len)) || (rc = store_wr_commit(s, 1)))
        return rc;
    if (c->used)
        store_supersede(s, c->rec_addr);
    c->rec_addr = s->wr_start;
    c->rec_seq = s->wr_seq;
    s->live_bytes += RHDR + len;
    return STORE_OK;
}

int store_coll_create(struct store *s, const char *owner, const char *path, uint32_t *id)
{
    size_t olen = owner ? strlen(owner) : 0, plen = path ? strlen(path) : 0;
    uint32_t i, len;
    int found, rc;
    struct store_coll_slot *c;

    if ((rc = writable(s)) != STORE_OK)
        return rc;
    if (!olen || olen > STORE_OWNER_MAX || !plen || plen > STORE_PATH_MAX)
        return STORE_ERR_INVALID;
    len = (uint32_t)(4 + 1 + olen + 1 + plen + 1);
    if ((rc = store_ensure_space(s, RHDR + len)) != STORE_OK ||
        (rc = coll_find(s, (const uint8_t *)path, plen, &found)) != STORE_OK)
        return rc;
    if (found >= 0)
        return STORE_ERR_EXISTS;
    for (i = 0; i < s->mem.coll_slots && s->mem.colls[i].used; i++)
        ;
    if (i == s->mem.coll_slots)
        return STORE_ERR_TOO_MANY_COLLECTIONS;
    /* the id is the sequence number the record is about to get */
    put32(s->scratch, s->next_rec_seq);
    s->scratch[4] = (uint8_t)olen;
    memcpy(s->scratch + 5, owner, olen);
    s->scratch[5 + olen] = (uint8_t)plen;
    memcpy(s->scratch + 6 + olen, path, plen);
    s->scratch[6 + olen + plen] = 0;
    c = &s->mem.colls[i];
    memset(c, 0, sizeof(*c));
    c->head = LINK_NONE;
    if ((rc = coll_write(s, i, len)) != STORE_OK)
        return rc;
    c->used = 1;
    c->id = s->wr_seq;
    c->floor_addr = FIRST_NONE;
    c->path_hash = fnv1a(path, plen);
    if (id)
        *id = c->id;
    return STORE_OK;
}

/* A collection record like id's (owner, properties) at another path: with
 * rename the same collection moved (its id, members and sync history stay),
 * else a new, empty one. One record either way (RFC 4918 sections 9.8, 9.9). */
int store_coll_copy(struct store *s, uint32_t id, const char *path, int rename, uint32_t *new_id)
{
    size_t plen = path ? strlen(path) : 0;
    uint32_t len, head, rest, i = 0;
    struct coll_view v;
    struct store_coll_slot *c;
    int slot, found, rc;

    if ((rc = writable(s)) != STORE_OK)
        return rc;
    if (!plen || plen > STORE_PATH_MAX)
        return STORE_ERR_INVALID;
    if ((slot = store_coll_slot_by_id(s, id)) < 0)
        return STORE_ERR_NOT_FOUND;
    if ((rc = store_ensure_space(s, RHDR + STORE_COLL_RECORD_MAX)) != STORE_OK ||
        (rc = coll_find(s, (const uint8_t *)path, plen, &found)) != STORE_OK)
        return rc;
    if (found >= 0)
        return STORE_ERR_EXISTS;
    if (!rename) {
        for (i = 0; i < s->mem.coll_slots && s->mem.colls[i].used; i++)
            ;
        if (i == s->mem.coll_slots)
            return STORE_ERR_TOO_MANY_COLLECTIONS;
    }
    if ((rc = store_coll_load(s, s->mem.colls[slot].rec_addr, &len, &v)) != STORE_OK)
        return rc;
    /* id, owner_len, owner, path_len | path | nprops, properties */
    head = 4 + 1 + v.owner_len + 1;
    rest = len - head - v.path_len;
    if (head + plen + rest > STORE_COLL_RECORD_MAX)
        return STORE_ERR_TOO_LARGE;
    memmove(s->scratch + head + plen, s->scratch + head + v.path_len, rest);
    memcpy(s->scratch + head, path, plen);
    s->scratch[head - 1] = (uint8_t)plen;
    len = head + (uint32_t)plen + rest;
    if (!rename) {
        put32(s->scratch, s->next_rec_seq);  /* the new id: the record's sequence */
        slot = (int)i;
        c = &s->mem.colls[i];
        memset(c, 0, sizeof(*c));
        c->head = LINK_NONE;
    }
    if ((rc = coll_write(s, (uint32_t)slot, len)) != STORE_OK)
        return rc;
    c = &s->mem.colls[slot];
    if (!rename) {
        c->used = 1;
        c->id = s->wr_seq;
        c->floor_addr = FIRST_NONE;
    }
    c->path_hash = fnv1a(path, plen);
    if (new_id)
        *new_id = c->id;
    return STORE_OK;
}

int store_coll_find(struct store *s, const char *path, size_t path_len, uint32_t *id)
{
    int found, rc;
    if (s->failed)
        return STORE_ERR_IO;
    if ((rc = coll_find(s, (const uint8_t *)path, path_len, &found)) != STORE_OK)
        return rc;
    if (found < 0)
        return STORE_ERR_NOT_FOUND;
    *id = s->mem.colls[found].id;
    return STORE_OK;
}

int store_coll_delete(struct store *s, uint32_t id)
{
    uint8_t p[4];
    int slot, rc;
    struct store_coll_slot *c;

    if ((rc = writable(s)) != STORE_OK)
        return rc;
    if ((slot = store_coll_slot_by_id(s, id)) < 0)
        return STORE_ERR_NOT_FOUND;
    if ((rc = store_ensure_space(s, RHDR + 4)) != STORE_OK)
        return rc;
    slot = store_coll_slot_by_id(s, id);  /* compaction does not move slots; cheap to be sure */
    c = &s->mem.colls[slot];
    put32(p, id);
    store_wr_begin(s, REC_COLL_DEL, 4);
    if ((rc = store_wr_data(s, p, 4)) || (rc = store_wr_commit(s, 1)))
        return rc;
    /* the delete record itself is dead at once: nothing of the id is live */
    if ((rc = store_idx_drop(s, (uint32_t)slot, 0, 0)) != STORE_OK)
        return rc;
    store_supersede(s, c->rec_addr);
    if (c->floor_addr != FIRST_NONE)
        s->live_bytes -= FLOOR_RECORD;
    memset(c, 0, sizeof(*c));
    return STORE_OK;
}

/* A collection's record, by its id, into scratch (reads). */
static int coll_load_id(struct store *s, uint32_t id, int *slot, uint32_t *len, struct coll_view *v)
{
    if (s->failed)
        return STORE_ERR_IO;
    if ((*slot = store_coll_slot_by_id(s, id)) < 0)
        return STORE_ERR_NOT_FOUND;
    return store_coll_load(s, s->mem.colls[*slot].rec_addr, len, v);
}

int store_coll_info(struct store *s, uint32_t id, struct store_collection *info)
{
    uint32_t len;
    struct coll_view v;
    int slot, rc;
    if ((rc = coll_load_id(s, id, &slot, &len, &v)) != STORE_OK)
        return rc;
    info->id = id;
    info->owner = (const char *)v.owner;
    info->owner_len = v.owner_len;
    info->path = (const char *)v.path;
    info->path_len = v.path_len;
    info->sync_seq = s->mem.colls[slot].sync_seq;
    info->history_floor = s->mem.colls[slot].floor;
    info->objects = s->mem.colls[slot].objects;
    return STORE_OK;
}

int store_coll_list(struct store *s, store_coll_cb cb, void *ctx)
{
    struct store_collection info;
    uint32_t i;
    int rc;
    for (i = 0; i < s->mem.coll_slots; i++) {
        if (!s->mem.colls[i].used)
            continue;
        if ((rc = store_coll_info(s, s->mem.colls[i].id, &info)) != STORE_OK)
            return rc;
        if (cb(ctx, &info))
            break;
    }
    return s->failed ? STORE_ERR_IO : STORE_OK;
}

/* Offset of prop inside scratch (after store_coll_load), or 0. */
static uint32_t prop_find(const struct store *s, const struct coll_view *v, uint8_t prop, uint32_t *vlen)
{
    uint32_t at = (uint32_t)(v->props - s->scratch), i;
    for (i = 0; i < v->nprops; i++) {
        uint32_t l = (uint32_t)s->scratch[at + 1] | (uint32_t)s->scratch[at + 2] << 8;
        if (s->scratch[at] == prop) {
            *vlen = l;
            return at;
        }
        at += 3 + l;
    }
    return 0;
}

int store_coll_set_prop(struct store *s, uint32_t id, enum store_prop prop, const void *value, size_t len)
{
    uint32_t plen, at, old_len = 0, nprops_at;
    struct coll_view v;
    int slot, rc;

    if ((rc = writable(s)) != STORE_OK)
        return rc;
    if (prop < STORE_PROP_DISPLAYNAME || prop > STORE_PROP_COMPONENTS || (!value && len))
        return STORE_ERR_INVALID;
    if (len > STORE_COLL_RECORD_MAX)
        return STORE_ERR_TOO_LARGE;
    if ((slot = store_coll_slot_by_id(s, id)) < 0)
        return STORE_ERR_NOT_FOUND;
    if ((rc = store_ensure_space(s, RHDR + STORE_COLL_RECORD_MAX)) != STORE_OK ||
        (rc = store_coll_load(s, s->mem.colls[slot].rec_addr, &plen, &v)) != STORE_OK)
        return rc;
    nprops_at = (uint32_t)(v.props - s->scratch) - 1;
    at = prop_find(s, &v, (uint8_t)prop, &old_len);
    if (at) {
        memmove(s->scratch + at, s->scratch + at + 3 + old_len, plen - at - 3 - old_len);
        plen -= 3 + old_len;
        s->scratch[nprops_at]--;
    }
    if (len) {
        if (plen + 3 + len > STORE_COLL_RECORD_MAX)
            return STORE_ERR_TOO_LARGE;
        s->scratch[plen] = (uint8_t)prop;
        s->scratch[plen + 1] = (uint8_t)len;
        s->scratch[plen + 2] = (uint8_t)(len >> 8);
        memcpy(s->scratch + plen + 3, value, len);
        plen += 3 + (uint32_t)len;
        s->scratch[nprops_at]++;
    }
    return coll_write(s, (uint32_t)slot, plen);
}

int store_coll_get_prop(struct store *s, uint32_t id, enum store_prop prop, void *buf, size_t cap, size_t *len)
{
    uint32_t plen, at, vlen = 0;
    struct coll_view v;
    int slot, rc;
    if ((rc = coll_load_id(s, id, &slot, &plen, &v)) != STORE_OK)
        return rc;
    if (!(at = prop_find(s, &v, (uint8_t)prop, &vlen)))
        return STORE_ERR_NOT_FOUND;
    if (vlen > cap)
        return STORE_ERR_TOO_LARGE;
    memcpy(buf, s->scratch + at + 3, vlen);
    *len = vlen;
    return STORE_OK;
}

int store_props_count(const uint8_t *list, size_t len)
{
    size_t at = 0;
    int n = 0;
    while (at < len) {
        if (len - at < STORE_PROP_HEAD || n == 255)
            return -1;
        at += STORE_PROP_HEAD + ((size_t)list[at + 1] | (size_t)list[at + 2] << 8);
        n++;
    }
    return at == len ? n : -1;
}

int store_coll_props(struct store *s, uint32_t id, const uint8_t **list, size_t *len)
{
    uint32_t plen;
    struct coll_view v;
    int slot, rc;
    *list = s->scratch;
    *len = 0;
    if ((rc = coll_load_id(s, id, &slot, &plen, &v)) != STORE_OK)
        return rc;
    *list = v.props;
    *len = v.props_len;
    return STORE_OK;
}

/* RFC 4918 section 9.2: a PROPPATCH of a collection is this one record. */
int store_coll_set_props(struct store *s, uint32_t id, const uint8_t *list, size_t len)
{
    uint32_t plen, at;
    struct coll_view v;
    int slot, count, rc;

    if ((rc = writable(s)) != STORE_OK)
        return rc;
    if ((count = store_props_count(list, len)) < 0)
        return STORE_ERR_INVALID;
    if ((slot = store_coll_slot_by_id(s, id)) < 0)
        return STORE_ERR_NOT_FOUND;
    if ((rc = store_ensure_space(s, RHDR + STORE_COLL_RECORD_MAX)) != STORE_OK ||
        (rc = store_coll_load(s, s->mem.colls[slot].rec_addr, &plen, &v)) != STORE_OK)
        return rc;
    at = (uint32_t)(v.props - s->scratch);
    if (at + len > STORE_COLL_RECORD_MAX)
        return STORE_ERR_TOO_LARGE;
    s->scratch[at - 1] = (uint8_t)count;
    if (len)
        memcpy(s->scratch + at, list, len);
    return coll_write(s, (uint32_t)slot, at + (uint32_t)len);
}
