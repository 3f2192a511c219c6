/* Rendered responses of objects, kept in RAM and sent by reference.
 *
 * A REPORT that lists objects (calendar-multiget, calendar-query) renders,
 * for each one, a DAV:response element: its href, its propstats and, in
 * CalDAV, its calendar-data escaped for XML. When every property the request
 * names follows from the object's bytes alone (DAV_PROP_OF_CONTENT), that
 * element is a function of the object's ETag (unique forever: store.h), its
 * path and the request's property list. It is rendered once into this cache
 * and handed to httpd by reference: the bytes go from here to the NIC with no
 * copy by the CPU, and the next client asking the same gets them without
 * reading the store or escaping again.
 *
 * Each response is kept as a whole HTTP chunk (RFC 9112 section 7.1: its size
 * line, the element, CRLF), and the chunks lie one after the other in a data
 * ring of their own, so the responses of objects rendered in a row go out as
 * one reference. What finds them (the path, the ETag, the property list's
 * number) is in a second ring of records, one per chunk, in the same order.
 * Both rings fill in order and are reclaimed oldest first. A record is never
 * changed once written; a new rendering of the same path and property list
 * takes the old one's place in the index, and one whose ETag is no longer
 * the object's (replaced, deleted) is not used. A chunk's memory is reused
 * only once TCP can no longer send bytes from it (httpd_bytes_in_flight:
 * queued, unacknowledged, or held by the NIC) and no request holds it as
 * its next piece or a piece being put together (dav_fragments_pin); when the oldest is still in flight,
 * the new response is not kept and goes through the copying path instead.
 *
 * Nothing here is CalDAV's: the layer above renders the element (its render
 * function) and names the property that it streams itself. */
#include "dav/dav_private.h"

#include <string.h>

#if DAV_FRAGMENT_CACHE

struct fragment {
    uint32_t size;       /* the record, header and path, a multiple of 8 */
    uint32_t next;       /* offset + 1 of the next record in its bucket, 0: none */
    uint32_t etag, variant, hash;
    uint32_t chunk_off;  /* its chunk in the data ring */
    uint32_t chunk_len;
    uint8_t head_len;    /* the chunk's size line */
    uint8_t indexed;     /* in a bucket's list (records kept for one response only are not) */
    uint16_t path_len;
    uint8_t plain;       /* the path is its own percent-encoding: no '%', '?' or '#' */
    /* path[path_len] */
};

#define ALIGN8(n) (((n) + 7u) & ~(size_t)7u)
/* a chunk's size line at most: 8 hex digits and CRLF; the CRLF after its data */
#define CHUNK_HEAD_MAX 10u
#define CHUNK_TAIL 2u

/* A ring of variable-sized pieces: they lie in [tail, head), or, once head
 * has wrapped, in [tail, wrap_at) and then [0, head). */
struct span_ring {
    uint8_t *mem;
    uint32_t size, head, tail, wrap_at;
    bool wrapped;
};

static struct {
    struct span_ring meta, data;
    uint32_t records;
    bool reserved;       /* a record is being written at the heads */
    uint32_t reserved_head;  /* where its data starts: after a size line this long */
    uint32_t *bucket;    /* the index: at the start of the memory given, a power of 2 */
    uint32_t bucket_mask;
} ring;

/* bytes a reference being put together holds (dav_fragments_pin) */
static const uint8_t *pin_start, *pin_end;

static struct dav_fragment_stats stats;

static inline struct fragment *at(uint32_t off) { return (struct fragment *)(ring.meta.mem + off); }

static uint32_t key_hash(uint32_t variant, const char *path, size_t len)
{
    uint32_t h = 2166136261u ^ variant;
    size_t i;
    for (i = 0; i < len; i++)
        h = (h ^ (uint8_t)path[i]) * 16777619u;
    return h;
}

static void span_empty(struct span_ring *r)
{
    r->head = r->tail = 0;
    r->wrap_at = r->size;
    r->wrapped = false;
}

static void ring_empty(void)
{
    span_empty(&ring.meta);
    span_empty(&ring.data);
    ring.records = 0;
}

/* Room for n bytes at r->head, going on from 0 when the end is too short. */
static bool span_fits(struct span_ring *r, uint32_t n)
{
    if (!r->wrapped) {
        if (r->size - r->head >= n)
            return true;
        r->wrap_at = r->head;
        r->head = 0;
        r->wrapped = true;
    }
    return r->tail - r->head >= n;
}

/* The record after the one at off, in ring order. */
static uint32_t meta_after(uint32_t off)
{
    off += at(off)->size;
    return ring.meta.wrapped && off >= ring.meta.wrap_at ? 0 : off;
}

void dav_fragments_init(void *mem, size_t size)
{
    uint8_t *start = (uint8_t *)ALIGN8((uintptr_t)mem);
    uint32_t buckets = 256, meta_size;
    memset(&ring, 0, sizeof(ring));
    memset(&stats, 0, sizeof(stats));
    pin_start = pin_end = NULL;
    if (!mem || size < DAV_FRAGMENT_CACHE_MIN || size > 0x80000000u)
        return; /* too little to be worth an index: every response takes the copying path */
    size -= (size_t)(start - (uint8_t *)mem);
    /* the store's index ETags, when there is room for them too: a kept
     * response is then checked against its object without a flash read */
    if (size >= 2u * DAV_FRAGMENT_CACHE_MIN + sizeof(uint32_t) * DAV_STORE_INDEX_SLOTS) {
        size_t used = ALIGN8(dav_keep_index_etags(start, size));
        start += used;
        size -= used;
    }
    /* the index first: a bucket per DAV_FRAGMENT_BYTES_PER_BUCKET of chunks */
    while ((size_t)buckets * 2u * DAV_FRAGMENT_BYTES_PER_BUCKET <= size)
        buckets *= 2;
    ring.bucket = (uint32_t *)start;
    ring.bucket_mask = buckets - 1;
    memset(ring.bucket, 0, buckets * sizeof(uint32_t));
    size -= buckets * sizeof(uint32_t);
    /* a record is its header and path, about a tenth of a REPORT's response
     * and a third of a listing member's */
    meta_size = (uint32_t)(size / DAV_FRAGMENT_META_SHARE) & ~7u;
    ring.meta.mem = start + buckets * sizeof(uint32_t);
    ring.meta.size = meta_size;
    ring.data.mem = ring.meta.mem + meta_size;
    ring.data.size = (uint32_t)(size - meta_size) & ~7u;
    ring_empty();
    stats.capacity = ring.data.size;
}

bool dav_fragments_enabled(void) { return ring.data.size != 0; }

const struct dav_fragment_stats *dav_fragments_stats(void) { return &stats; }

void dav_fragments_pin(const void *start, uint32_t len)
{
    pin_start = start;
    pin_end = (const uint8_t *)start + len;
}

void dav_fragments_unpin(void) { pin_start = pin_end = NULL; }

static void unlink_record(uint32_t off)
{
    struct fragment *f = at(off);
    uint32_t *link;
    if (!f->indexed)
        return;
    for (link = &ring.bucket[f->hash & ring.bucket_mask]; *link; link = &at(*link - 1)->next)
        if (*link == off + 1) {
            *link = f->next;
            break;
        }
    f->indexed = 0;
}

static bool span_held(const uint8_t *start, const uint8_t *end)
{
    if (pin_start && pin_start < end && pin_end > start)
        return true;
    return dav_pending_refs_hold(start, end) || httpd_bytes_in_flight(start, end);
}

/* Drop the oldest records and their chunks, at least `want` bytes of
 * chunks (as far as the data ring's wrap point), unless TCP may still send
 * from them. One check covers the span: it walks every connection's queued
 * segments, so the rings reclaim in large steps (a sixteenth of the data)
 * rather than a record at a time. */
static bool evict_oldest(uint32_t want)
{
    uint32_t step = ring.data.size / 16 > want ? ring.data.size / 16 : want;
    for (int attempt = 0; attempt < 2; attempt++, step = want) {
        uint32_t off = ring.meta.tail, end = at(off)->chunk_off, count = 0;
        uint32_t first = end;
        /* whole records whose chunks follow each other from the data tail */
        while (count < ring.records && at(off)->chunk_off == end && end - first < step) {
            end += at(off)->chunk_len;
            off = meta_after(off);
            count++;
        }
        if (span_held(ring.data.mem + first, ring.data.mem + end)) {
            stats.refused_in_flight++;
            if (attempt == 1 || step == want)
                return false;
            continue;
        }
        while (count--) {
            struct fragment *f = at(ring.meta.tail);
            uint32_t next = meta_after(ring.meta.tail);
            unlink_record(ring.meta.tail);
            stats.bytes -= f->chunk_len;
            stats.evicted++;
            ring.records--;
            if (next < ring.meta.tail) { /* past the wrap point: one span again */
                ring.meta.wrapped = false;
                ring.meta.wrap_at = ring.meta.size;
            }
            ring.meta.tail = next;
        }
        if (ring.records == 0) {
            ring_empty();
            return true;
        }
        /* the data tail is the oldest record's chunk; below the old tail, it wrapped */
        if (at(ring.meta.tail)->chunk_off < first) {
            ring.data.wrapped = false;
            ring.data.wrap_at = ring.data.size;
        }
        ring.data.tail = at(ring.meta.tail)->chunk_off;
        return true;
    }
    return false;
}

/* Room for a record of meta_n bytes and a chunk of data_n. */
static bool make_room(uint32_t meta_n, uint32_t data_n)
{
    if (meta_n > ring.meta.size / 2 || data_n > ring.data.size / 2)
        return false;
    for (;;) {
        if (ring.records == 0) {
            ring_empty();
            return true;
        }
        if (span_fits(&ring.meta, meta_n) && span_fits(&ring.data, data_n))
            return true;
        if (!evict_oldest(data_n))
            return false;
    }
}

/* The indexed record of (variant, path), hash being key_hash's: its offset + 1, or 0. */
static uint32_t find_record(uint32_t hash, uint32_t variant, const char *path, size_t path_len)
{
    uint32_t link;
    for (link = ring.bucket[hash & ring.bucket_mask]; link; link = at(link - 1)->next) {
        const struct fragment *f = at(link - 1);
        if (f->hash == hash && f->variant == variant && f->path_len == path_len &&
            memcmp(f + 1, path, path_len) == 0)
            return link;
    }
    return 0;
}

bool dav_fragment_find(uint32_t variant, const char *path, size_t path_len, struct dav_kept *k)
{
    uint32_t link;
    const struct fragment *f;
    if (!ring.data.size)
        return false;
    if (!(link = find_record(key_hash(variant, path, path_len), variant, path, path_len))) {
        stats.misses++;
        return false;
    }
    f = at(link - 1);
    stats.hits++;
    k->chunk = ring.data.mem + f->chunk_off;
    k->chunk_len = f->chunk_len;
    k->head_len = f->head_len;
    k->etag = f->etag;
    k->plain = f->plain;
    return true;
}

/* The size line of a chunk of n data bytes: hex digits and CRLF. */
static uint32_t chunk_head_len(uint32_t n)
{
    uint32_t digits = 1;
    for (; n >= 16; n >>= 4)
        digits++;
    return digits + 2;
}

uint8_t *dav_fragment_reserve(size_t path_len, size_t max_data, size_t expected)
{
    uint32_t meta_n = (uint32_t)ALIGN8(sizeof(struct fragment) + path_len);
    if (!ring.data.size || ring.reserved || path_len > 0xffff || max_data > ring.data.size ||
        !make_room(meta_n, (uint32_t)max_data + CHUNK_HEAD_MAX + CHUNK_TAIL)) {
        stats.not_kept++;
        return NULL;
    }
    ring.reserved = true;
    /* the data goes after a size line as long as the expected length's: when
     * the length comes out with as many hex digits, nothing moves at commit */
    ring.reserved_head = chunk_head_len((uint32_t)(expected < max_data ? expected : max_data));
    return ring.data.mem + ring.data.head + ring.reserved_head;
}

void dav_fragment_cancel(void) { ring.reserved = false; }

/* Write the chunk's size line before its data (moved to follow it, if its
 * length was not what the reservation expected) and the CRLF after. */
static uint32_t frame_chunk(uint8_t *chunk, uint32_t data_len, uint8_t *head_len)
{
    static const char hex[] = "0123456789abcdef";
    uint32_t digits = chunk_head_len(data_len) - 2, v;
    *head_len = (uint8_t)(digits + 2);
    if (digits + 2 != ring.reserved_head)
        memmove(chunk + digits + 2, chunk + ring.reserved_head, data_len);
    for (v = data_len; digits; v >>= 4)
        chunk[--digits] = (uint8_t)hex[v & 15];
    chunk[*head_len - 2] = '\r';
    chunk[*head_len - 1] = '\n';
    chunk[*head_len + data_len] = '\r';
    chunk[*head_len + data_len + 1] = '\n';
    return *head_len + data_len + CHUNK_TAIL;
}

void dav_fragment_commit(uint32_t etag, uint32_t variant, const char *path, size_t path_len,
                         uint32_t data_len, bool keep, struct dav_kept *k)
{
    uint32_t off = ring.meta.head, link;
    struct fragment *f = at(off);
    uint8_t *chunk = ring.data.mem + ring.data.head;
    ring.reserved = false;
    f->size = (uint32_t)ALIGN8(sizeof(struct fragment) + path_len);
    f->etag = etag;
    f->variant = variant;
    f->path_len = (uint16_t)path_len;
    f->hash = key_hash(variant, path, path_len);
    f->chunk_off = ring.data.head;
    f->chunk_len = frame_chunk(chunk, data_len, &f->head_len);
    f->indexed = keep;
    f->plain = !memchr(path, '%', path_len) && !memchr(path, '?', path_len) && !memchr(path, '#', path_len);
    f->next = 0;
    memcpy(f + 1, path, path_len);
    if (keep) {
        /* one record per path and property list: the newest */
        uint32_t *bucket = &ring.bucket[f->hash & ring.bucket_mask];
        if ((link = find_record(f->hash, variant, path, path_len)) != 0)
            unlink_record(link - 1);
        f->next = *bucket;
        *bucket = off + 1;
    }
    ring.meta.head += f->size;
    ring.data.head += f->chunk_len;
    ring.records++;
    stats.bytes += f->chunk_len;
    stats.rendered++;
    k->chunk = chunk;
    k->chunk_len = f->chunk_len;
    k->head_len = f->head_len;
    k->etag = etag;
    k->plain = f->plain;
}

#else /* no fragment cache in this build: every response takes the copying path */

void dav_fragments_init(void *mem, size_t size) { (void)mem, (void)size; }
bool dav_fragments_enabled(void) { return false; }
const struct dav_fragment_stats *dav_fragments_stats(void)
{
    static const struct dav_fragment_stats none;
    return &none;
}
void dav_fragments_pin(const void *start, uint32_t len) { (void)start, (void)len; }
void dav_fragments_unpin(void) {}
bool dav_fragment_find(uint32_t variant, const char *path, size_t path_len, struct dav_kept *k)
{
    (void)variant, (void)path, (void)path_len, (void)k;
    return false;
}
uint8_t *dav_fragment_reserve(size_t path_len, size_t max_data, size_t expected)
{
    (void)path_len, (void)max_data, (void)expected;
    return NULL;
}
void dav_fragment_cancel(void) {}
void dav_fragment_commit(uint32_t etag, uint32_t variant, const char *path, size_t path_len,
                         uint32_t data_len, bool keep, struct dav_kept *k)
{
    (void)etag, (void)variant, (void)path, (void)path_len, (void)data_len, (void)keep, (void)k;
}

#endif

/* ---- what a REPORT asks, and its objects' responses ------------------------ */

/* A request whose every property follows from an object's bytes: a number
 * naming its property list (never 0), or 0 when its responses are not kept
 * (allprop, propname, a property that is not the object's content, or the
 * streamed one with children: a partial retrieval). */
uint32_t dav_fragment_variant(const struct dav_ctx *c, const struct dav_prop *streamed)
{
    /* the streamed property (a REPORT's) names another rendering than none (PROPFIND's) */
    uint32_t h = streamed ? 2166136261u : 0x811c9dc4u;
    if (!dav_fragments_enabled() || c->mode != DAV_PROP || !c->props)
        return 0;
    XML_FOR_EACH_CHILD(n, c->props) {
        size_t i;
        if (streamed && xml_is(n, streamed->ns, streamed->name)) {
            if (n->first_child)
                return 0;
        } else {
            const struct dav_prop *d = dav_prop_find(n);
            if (!d || !(d->flags & DAV_PROP_OF_CONTENT))
                return 0;
        }
        for (i = 0; i < n->ns.len; i++)
            h = (h ^ (uint8_t)n->ns.ptr[i]) * 16777619u;
        h = (h ^ 0xffu) * 16777619u;
        for (i = 0; i < n->name.len; i++)
            h = (h ^ (uint8_t)n->name.ptr[i]) * 16777619u;
        h = (h ^ 0xfeu) * 16777619u;
    }
    return h ? h : 1;
}

uint32_t dav_request_variant(struct dav_ctx *c, const struct dav_prop *streamed)
{
    if (!c->fragment_variant_known) {
        c->fragment_variant = dav_fragment_variant(c, streamed);
        c->fragment_variant_known = true;
    }
    return c->fragment_variant;
}

/* The kept response k as the next piece by reference: the whole chunk when
 * the response is chunked (then the responses of objects rendered in a row
 * go out as one piece: dav_response.c), else the element alone. */
static void send_kept(struct dav_ctx *c, const struct dav_kept *k)
{
    c->ref_framed = httpd_response_chunked(c->x);
    c->ref = c->ref_framed ? k->chunk : dav_kept_element(k);
    c->ref_len = c->ref_framed ? k->chunk_len : dav_kept_element_len(k);
}

/* Render c->obj whole with render (called until it returns 1) straight into
 * the cache, and hand it out by reference: true. False when the cache has no
 * room for it now; then nothing was rendered. */
static bool render_into_cache(struct dav_ctx *c, dav_object_render_fn render, uint32_t variant)
{
    const struct dav_resource *r = &c->obj;
    /* escaping makes a byte at most 5 ("&#13;"), in pieces with their tags;
     * the head and the tail are at most an output piece each */
    size_t max = 5u * (size_t)r->obj.size + 2u * DAV_OUT_MAX + 64u, n;
    /* usually: the object, an eighth more for CRs written as "&#13;", and the tags */
    uint8_t *dst = dav_fragment_reserve(r->path_len, max, (size_t)r->obj.size + r->obj.size / 8u + 400u);
    struct dav_kept k;
    int rc;
    if (!dst)
        return false;
    c->obj_cut = false;
    c->out = (char *)dst;
    c->out_cap = max;
    c->out_len = 0;
    do
        rc = render(c);
    while (rc == 0);
    n = c->out_len;
    c->out = c->out_buf;
    c->out_cap = sizeof(c->out_buf);
    c->out_len = 0;
    if (rc < 0) {
        dav_fragment_cancel();
        return false; /* not reached: the renderers do not fail */
    }
    /* an object the store could not read whole is sent as far as it was read,
     * as the copying path does, and not kept */
    dav_fragment_commit(r->obj.etag, variant, r->path, r->path_len, (uint32_t)n, !c->obj_cut, &k);
    send_kept(c, &k);
    return true;
}

bool dav_use_kept_if_current(struct dav_ctx *c, uint32_t coll, size_t name_off, const struct dav_kept *k)
{
    struct dav_resource *r = &c->obj;
    c->obj_kept_current = false;
    if (store_object_is_current(c->store, coll, r->path + name_off, r->path_len - name_off, k->etag) != 1)
        return false;
    c->obj_kept = *k;
    r->obj.etag = k->etag;
    c->obj_kept_current = true;
    return true;
}

bool dav_find_current_kept(struct dav_ctx *c, uint32_t coll, size_t name_off, uint32_t variant)
{
    struct dav_kept k;
    c->obj_kept_current = false;
    return variant && dav_fragment_find(variant, c->obj.path, c->obj.path_len, &k) &&
           dav_use_kept_if_current(c, coll, name_off, &k);
}

bool dav_send_object_fragment(struct dav_ctx *c, dav_object_render_fn render, uint32_t variant)
{
    const struct dav_resource *r = &c->obj;
    struct dav_kept k;
    if (!variant || !r->exists || c->out_len)
        return false;
    if (c->obj_kept_current) {
        c->obj_kept_current = false;
        send_kept(c, &c->obj_kept);
        return true;
    }
    if (r->obj.size > DAV_FRAGMENT_OBJECT_MAX)
        return false;
    if (dav_fragment_find(variant, r->path, r->path_len, &k) && k.etag == r->obj.etag) {
        send_kept(c, &k);
        return true;
    }
    return render_into_cache(c, render, variant);
}

/* ---- a listing's members: kept rendered --------------------------------------- */

/* A member of a listing (PROPFIND Depth 1) answers a few hundred bytes.
 * Rendered once (the XML writer, the property tables), kept, and sent by
 * reference like a REPORT's objects: the members of a listing rendered in a
 * row go out joined, in a few pieces. */
bool dav_send_kept_response(struct dav_ctx *c, const struct dav_resource *r, uint32_t variant)
{
    struct dav_kept k;
    if (!variant || !r->exists || r->kind != DAV_RES_OBJECT || c->out_len ||
        !dav_fragment_find(variant, r->path, r->path_len, &k) || k.etag != r->obj.etag)
        return false;
    send_kept(c, &k);
    return true;
}

void dav_keep_response(struct dav_ctx *c, const struct dav_resource *r, uint32_t variant, size_t from)
{
    size_t n = c->out_len - from;
    struct dav_kept k;
    uint8_t *dst;
    if (!variant || !r->exists || r->kind != DAV_RES_OBJECT || c->out_len <= from)
        return;
    if ((dst = dav_fragment_reserve(r->path_len, n, n)) == NULL)
        return;
    memcpy(dst, c->out + from, n);
    dav_fragment_commit(r->obj.etag, variant, r->path, r->path_len, (uint32_t)n, true, &k);
    if (from == 0) { /* it goes by reference, as it will when asked again */
        c->out_len = 0;
        send_kept(c, &k);
    }
}
