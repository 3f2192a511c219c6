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
 * Memory is one ring, filled in order and reclaimed oldest first. A record
 * is never changed once written: an object that is replaced, deleted or
 * moved by compaction gets a new ETag or none, so its old record is simply
 * never found again. A record's memory is reused only once TCP can no longer
 * send bytes from it (httpd_bytes_in_flight: queued, unacknowledged, or held
 * by the NIC); when the oldest record is still in flight, the new one is not
 * kept and the response is rendered through the copying path instead.
 *
 * Nothing here is CalDAV's: the layer above renders the element (its render
 * function) and names the property that it streams itself. */
#include "dav/dav_private.h"

#include <string.h>

#if DAV_FRAGMENT_CACHE

struct fragment {
    uint32_t size;       /* the whole record, header included, a multiple of 8 */
    uint32_t next;       /* offset + 1 of the next record in its bucket, 0: none */
    uint32_t etag, variant, hash;
    uint32_t data_len;
    uint16_t path_len;
    uint8_t indexed;     /* in a bucket's list (records kept for one response only are not) */
    uint8_t pad;
    /* path[path_len], then the data at the next multiple of 8 */
};

#define ALIGN8(n) (((n) + 7u) & ~(size_t)7u)

static struct {
    uint8_t *mem;
    uint32_t size;
    /* records lie in [tail, head), or, once head has wrapped, in
     * [tail, wrap_at) and then [0, head) */
    uint32_t head, tail, wrap_at, records;
    bool wrapped;
    bool reserved;       /* a record is being written at head */
    uint32_t *bucket;    /* the index: at the start of the memory given, a power of 2 */
    uint32_t bucket_mask;
} ring;

static struct dav_fragment_stats stats;

static void ring_empty(void);

static inline struct fragment *at(uint32_t off) { return (struct fragment *)(ring.mem + off); }

static inline size_t data_offset(size_t path_len) { return ALIGN8(sizeof(struct fragment) + path_len); }

static uint32_t key_hash(uint32_t etag, uint32_t variant, const char *path, size_t len)
{
    uint32_t h = 2166136261u ^ etag;
    size_t i;
    for (i = 0; i < len; i++)
        h = (h ^ (uint8_t)path[i]) * 16777619u;
    return (h ^ variant) * 16777619u;
}

void dav_fragments_init(void *mem, size_t size)
{
    uint8_t *start = (uint8_t *)ALIGN8((uintptr_t)mem);
    uint32_t buckets = 256;
    memset(&ring, 0, sizeof(ring));
    memset(&stats, 0, sizeof(stats));
    if (!mem || size < DAV_FRAGMENT_CACHE_MIN || size > 0x80000000u)
        return; /* too little to be worth an index: every response takes the copying path */
    size -= (size_t)(start - (uint8_t *)mem);
    /* the index first: a bucket per DAV_FRAGMENT_BYTES_PER_BUCKET of records */
    while ((size_t)buckets * 2u * DAV_FRAGMENT_BYTES_PER_BUCKET <= size)
        buckets *= 2;
    ring.bucket = (uint32_t *)start;
    ring.bucket_mask = buckets - 1;
    memset(ring.bucket, 0, buckets * sizeof(uint32_t));
    ring.mem = start + buckets * sizeof(uint32_t);
    ring.size = (uint32_t)((size - buckets * sizeof(uint32_t)) & ~(size_t)7u);
    ring_empty();
    stats.capacity = ring.size;
}

bool dav_fragments_enabled(void) { return ring.size != 0; }

const struct dav_fragment_stats *dav_fragments_stats(void) { return &stats; }

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

static void ring_empty(void)
{
    ring.head = ring.tail = ring.records = 0;
    ring.wrap_at = ring.size;
    ring.wrapped = false;
}

/* Drop the oldest records, at least `want` bytes of them (as far as the
 * wrap point), unless TCP may still send from them. One check covers the
 * span: it walks every connection's queued segments, so the ring reclaims
 * in large steps (a sixteenth of it) rather than a record at a time. */
static bool evict_oldest(uint32_t want)
{
    uint32_t limit = ring.wrapped ? ring.wrap_at : ring.head;
    uint32_t step = ring.size / 16 > want ? ring.size / 16 : want;
    uint32_t end, count;
    for (int attempt = 0; attempt < 2; attempt++, step = want) {
        for (end = ring.tail, count = 0; end < limit && end - ring.tail < step; count++)
            end += at(end)->size;
        if (!httpd_bytes_in_flight(ring.mem + ring.tail, ring.mem + end))
            break;
        stats.refused_in_flight++;
        if (attempt == 1 || step == want)
            return false;
    }
    for (; count; count--) {
        struct fragment *f = at(ring.tail);
        unlink_record(ring.tail);
        stats.bytes -= f->size;
        stats.evicted++;
        ring.tail += f->size;
        ring.records--;
    }
    if (ring.records == 0) {
        ring_empty();
    } else if (ring.wrapped && ring.tail >= ring.wrap_at) {
        ring.tail = 0;
        ring.wrap_at = ring.size;
        ring.wrapped = false;
    }
    return true;
}

/* Room for n bytes at ring.head, reclaiming the oldest records as needed. */
static bool make_room(uint32_t n)
{
    if (n > ring.size)
        return false;
    for (;;) {
        if (ring.records == 0) {
            ring_empty();
            return true;
        }
        if (!ring.wrapped) {
            if (ring.size - ring.head >= n)
                return true;
            ring.wrap_at = ring.head; /* the end is too short: go on from 0 */
            ring.head = 0;
            ring.wrapped = true;
            continue;
        }
        if (ring.tail - ring.head >= n)
            return true;
        if (!evict_oldest(n - (ring.tail - ring.head)))
            return false;
    }
}

const uint8_t *dav_fragment_find(uint32_t etag, uint32_t variant, const char *path, size_t path_len,
                                 uint32_t *len)
{
    uint32_t h = key_hash(etag, variant, path, path_len), link;
    if (!ring.size)
        return NULL;
    for (link = ring.bucket[h & ring.bucket_mask]; link; link = at(link - 1)->next) {
        const struct fragment *f = at(link - 1);
        if (f->hash == h && f->etag == etag && f->variant == variant && f->path_len == path_len &&
            memcmp(f + 1, path, path_len) == 0) {
            stats.hits++;
            *len = f->data_len;
            return (const uint8_t *)f + data_offset(path_len);
        }
    }
    stats.misses++;
    return NULL;
}

uint8_t *dav_fragment_reserve(size_t path_len, size_t max_data)
{
    size_t n = data_offset(path_len) + ALIGN8(max_data);
    if (!ring.size || ring.reserved || path_len > 0xffff || n > ring.size / 2 || !make_room((uint32_t)n)) {
        stats.not_kept++;
        return NULL;
    }
    ring.reserved = true;
    return ring.mem + ring.head + data_offset(path_len);
}

void dav_fragment_cancel(void) { ring.reserved = false; }

const uint8_t *dav_fragment_commit(uint32_t etag, uint32_t variant, const char *path, size_t path_len,
                                   uint32_t data_len, bool keep)
{
    struct fragment *f = at(ring.head);
    uint32_t off = ring.head;
    ring.reserved = false;
    f->size = (uint32_t)(data_offset(path_len) + ALIGN8(data_len));
    f->etag = etag;
    f->variant = variant;
    f->data_len = data_len;
    f->path_len = (uint16_t)path_len;
    f->hash = key_hash(etag, variant, path, path_len);
    f->indexed = keep;
    f->next = 0;
    memcpy(f + 1, path, path_len);
    if (keep) {
        uint32_t *bucket = &ring.bucket[f->hash & ring.bucket_mask];
        f->next = *bucket;
        *bucket = off + 1;
    }
    ring.head += f->size;
    ring.records++;
    stats.bytes += f->size;
    stats.rendered++;
    return (const uint8_t *)f + data_offset(path_len);
}

#else /* no fragment cache in this build: every response takes the copying path */

void dav_fragments_init(void *mem, size_t size) { (void)mem, (void)size; }
bool dav_fragments_enabled(void) { return false; }
const struct dav_fragment_stats *dav_fragments_stats(void)
{
    static const struct dav_fragment_stats none;
    return &none;
}
const uint8_t *dav_fragment_find(uint32_t etag, uint32_t variant, const char *path, size_t path_len,
                                 uint32_t *len)
{
    (void)etag, (void)variant, (void)path, (void)path_len, (void)len;
    return NULL;
}
uint8_t *dav_fragment_reserve(size_t path_len, size_t max_data)
{
    (void)path_len, (void)max_data;
    return NULL;
}
void dav_fragment_cancel(void) {}
const uint8_t *dav_fragment_commit(uint32_t etag, uint32_t variant, const char *path, size_t path_len,
                                   uint32_t data_len, bool keep)
{
    (void)etag, (void)variant, (void)path, (void)path_len, (void)data_len, (void)keep;
    return NULL;
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

/* Render c->obj whole with render (called until it returns 1, each call's
 * c->out appended) into the cache, and hand it out by reference: true.
 * False when the cache has no room for it now; then nothing was rendered. */
static bool render_into_cache(struct dav_ctx *c, dav_object_render_fn render, uint32_t variant)
{
    const struct dav_resource *r = &c->obj;
    /* escaping makes a byte at most 5 ("&#13;"); the head and tail are pieces of c->out */
    size_t max = 5u * (size_t)r->obj.size + 3u * sizeof(c->out), n = 0;
    uint8_t *dst = dav_fragment_reserve(r->path_len, max);
    int rc;
    if (!dst)
        return false;
    c->obj_cut = false;
    do {
        c->out_len = 0;
        rc = render(c);
        if (rc < 0 || n + c->out_len > max) {
            dav_fragment_cancel();
            c->out_len = 0;
            return false; /* not reached: the bound above holds */
        }
        memcpy(dst + n, c->out, c->out_len);
        n += c->out_len;
    } while (rc != 1);
    c->out_len = 0;
    /* an object the store could not read whole is sent as far as it was read,
     * as the copying path does, and not kept */
    c->ref = dav_fragment_commit(r->obj.etag, variant, r->path, r->path_len, (uint32_t)n, !c->obj_cut);
    c->ref_len = (uint32_t)n;
    return true;
}

bool dav_send_object_fragment(struct dav_ctx *c, dav_object_render_fn render, uint32_t variant)
{
    const struct dav_resource *r = &c->obj;
    uint32_t len;
    const uint8_t *data;
    if (!variant || !r->exists || r->obj.size > DAV_FRAGMENT_OBJECT_MAX || c->out_len)
        return false;
    data = dav_fragment_find(r->obj.etag, variant, r->path, r->path_len, &len);
    if (data) {
        c->ref = data;
        c->ref_len = len;
        return true;
    }
    return render_into_cache(c, render, variant);
}

/* ---- small responses: kept rendered, and copied ------------------------------ */

/* A member of a listing (PROPFIND Depth 1) answers a few hundred bytes: a
 * piece by reference would cost more than copying them, so the kept
 * rendering is copied into c->out. What costs is rendering it (the XML
 * writer, the property tables), and that is done once. */
bool dav_copy_kept_response(struct dav_ctx *c, const struct dav_resource *r, uint32_t variant)
{
    const uint8_t *data;
    uint32_t len;
    if (!variant || !r->exists || r->kind != DAV_RES_OBJECT)
        return false;
    data = dav_fragment_find(r->obj.etag, variant, r->path, r->path_len, &len);
    if (!data || len > sizeof(c->out) - c->out_len)
        return false;
    memcpy(c->out + c->out_len, data, len);
    c->out_len += len;
    return true;
}

void dav_keep_response(struct dav_ctx *c, const struct dav_resource *r, uint32_t variant, size_t from)
{
    size_t n = c->out_len - from;
    uint8_t *dst;
    if (!variant || !r->exists || r->kind != DAV_RES_OBJECT || c->out_len <= from)
        return;
    if ((dst = dav_fragment_reserve(r->path_len, n)) == NULL)
        return;
    memcpy(dst, c->out + from, n);
    dav_fragment_commit(r->obj.etag, variant, r->path, r->path_len, (uint32_t)n, true);
}
