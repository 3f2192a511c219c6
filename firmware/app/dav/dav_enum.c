/* A collection's members, listed in batches in a stable order while they
 * change, and reading one of them whole. */
#include "dav/dav_private.h"

#include <string.h>

struct batch_fill {
    struct dav_ctx *c;
    const char *prefix;   /* collections: the parent's path */
    size_t prefix_len;
    unsigned candidates;
    bool stopped;         /* the store's walk was ended early: more may follow */
};

/* The order of a listing: objects by (name hash, name), the store's own
 * order, so a batch resumes at the cursor's hash without reading the
 * members before it; changes by sync sequence; collections by path (their
 * name_hash is 0). Stable while members change between batches. */
static int member_cmp(const struct dav_ctx *c, const struct dav_member *a, const char *name,
                      size_t len, uint32_t seq, uint32_t hash)
{
    int r;
    if (c->source == DAV_SRC_CHANGES)
        return a->sync_seq < seq ? -1 : a->sync_seq > seq;
    if (a->name_hash != hash)
        return a->name_hash < hash ? -1 : 1;
    r = memcmp(a->name, name, a->len < len ? a->len : len);
    return r ? r : (a->len < len ? -1 : a->len > len);
}

static bool after_cursor(const struct dav_ctx *c, const char *name, size_t len, uint32_t seq,
                         uint32_t hash)
{
    struct dav_member cur;
    if (!c->cursor_set)
        return true;
    memcpy(cur.name, c->cursor, c->cursor_len);
    cur.len = c->cursor_len;
    cur.sync_seq = c->cursor_seq;
    cur.name_hash = c->cursor_hash;
    return member_cmp(c, &cur, name, len, seq, hash) < 0;
}

/* Keep the DAV_BATCH smallest candidates after the cursor, in order. The
 * members stay where they were written and only batch_order[] is kept sorted:
 * an insertion moves bytes, not 280-byte members (picolibc's memmove copies
 * byte by byte, which made large batches cost more than the index walks they
 * save). */
static void batch_offer(struct batch_fill *f, const char *name, size_t len, uint32_t etag,
                        uint32_t size, uint32_t seq, uint32_t hash, uint32_t coll, bool deleted)
{
    struct dav_ctx *c = f->c;
    struct dav_member *m;
    unsigned i, slot;
    if (len > STORE_PATH_MAX || !after_cursor(c, name, len, seq, hash))
        return;
    f->candidates++;
    i = c->batch_n;
    while (i > 0 && member_cmp(c, &c->batch[c->batch_order[i - 1]], name, len, seq, hash) > 0)
        i--;
    if (i >= DAV_BATCH)
        return;
    if (c->batch_n == DAV_BATCH)
        slot = c->batch_order[--c->batch_n];  /* the largest drops out; its member is reused */
    else
        slot = c->batch_n;
    memmove(&c->batch_order[i + 1], &c->batch_order[i], c->batch_n - i);
    c->batch_order[i] = (uint8_t)slot;
    m = &c->batch[slot];
    memcpy(m->name, name, len);
    m->len = len;
    m->etag = etag;
    m->size = size;
    m->sync_seq = seq;
    m->name_hash = hash;
    m->coll = coll;
    m->deleted = deleted;
    c->batch_n++;
}

static int offer_entry(void *ctx, const struct store_entry *e)
{
    struct batch_fill *f = ctx;
    struct dav_ctx *c = f->c;
    uint32_t hash = c->source == DAV_SRC_OBJECTS ? e->name_hash : 0;
    /* the store lists objects in ascending hash: once the batch is full and a
     * hash beyond its largest comes, nothing later can get in */
    if (c->source == DAV_SRC_OBJECTS && c->batch_n == DAV_BATCH &&
        hash > c->batch[c->batch_order[DAV_BATCH - 1]].name_hash) {
        f->stopped = true;
        return 1;
    }
    batch_offer(f, e->name, e->name_len, e->etag, e->size, e->sync_seq, hash, 0, e->deleted != 0);
    return 0;
}

/* Direct sub-collections of the prefix: the store path is kind + URL path. */
static int offer_collection(void *ctx, const struct store_collection *info)
{
    struct batch_fill *f = ctx;
    const char *p = info->path + 1;
    size_t len = info->path_len - 1;
    const char *slash;
    if (info->path_len < 2 || len <= f->prefix_len || memcmp(p, f->prefix, f->prefix_len) != 0)
        return 0;
    slash = memchr(p + f->prefix_len, '/', len - f->prefix_len);
    if (!slash || slash != p + len - 1)
        return 0;
    batch_offer(f, info->path, info->path_len, 0, 0, info->sync_seq, 0, info->id, false);
    return 0;
}

void dav_enum_start(struct dav_ctx *c, int source)
{
    c->source = source;
    c->cursor_set = false;
    c->exhausted = false;
    c->batch_n = c->batch_i = 0;
}

int dav_enum_next(struct dav_ctx *c, uint32_t coll)
{
    for (;;) {
        struct batch_fill f = {c, c->target.path, c->target.path_len, 0, false};
        int rc;
        if (c->batch_i < c->batch_n) {
            c->member = c->batch[c->batch_order[c->batch_i++]];
            memcpy(c->cursor, c->member.name, c->member.len);
            c->cursor_len = c->member.len;
            c->cursor_seq = c->member.sync_seq;
            c->cursor_hash = c->member.name_hash;
            c->cursor_set = true;
            return 1;
        }
        if (c->exhausted)
            return 0;
        c->batch_n = c->batch_i = 0;
        /* resume at the cursor: the store skips what is before it in RAM */
        if (c->source == DAV_SRC_OBJECTS)
            rc = store_list_from(c->store, coll, c->cursor_set ? c->cursor_hash : 0, offer_entry, &f);
        else if (c->source == DAV_SRC_CHANGES)
            rc = store_changes_after(c->store, coll, c->sync_from, c->cursor_set ? c->cursor_seq : 0,
                                     offer_entry, &f);
        else
            rc = store_coll_list(c->store, offer_collection, &f);
        if (rc != STORE_OK)
            return rc;
        if (!f.stopped && f.candidates <= DAV_BATCH)
            c->exhausted = true;
        if (!c->batch_n)
            return 0;
    }
}

void dav_object_resource(struct dav_ctx *c, const struct dav_member *m, char *pathbuf,
                         struct dav_resource *r)
{
    size_t plen = c->target.path_len;
    memset(r, 0, sizeof(*r));
    memcpy(pathbuf, c->target.path, plen);
    if (plen + m->len <= DAV_PATH_MAX) {
        memcpy(pathbuf + plen, m->name, m->len);
        plen += m->len;
    }
    pathbuf[plen] = '\0';
    r->kind = DAV_RES_OBJECT;
    r->path = pathbuf;
    r->path_len = plen;
    r->coll = c->target.coll;
    r->type = c->target.type;
    r->exists = !m->deleted;
    r->obj.etag = m->etag;
    r->obj.size = m->size;
    r->obj.sync_seq = m->sync_seq;
}

long dav_read_object(struct dav_ctx *c, uint32_t coll, const char *name, size_t len, const char **data)
{
    struct store_object_info info;
    uint32_t got = 0, total = 0;
    size_t size;
    char *work = dav_work_buffer(&size);
    int rc;
    do {
        rc = store_get_object(c->store, coll, name, len, total, work + total, (uint32_t)size - total,
                              &got, &info);
        if (rc != STORE_OK)
            return rc;
        total += got;
    } while (got && total < info.size && total < size);
    *data = work;
    return (long)total;
}
